package io.verbatim.metadatalog.raft.sim;

import io.verbatim.metadatalog.proto.RaftMessageProto;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.Set;
import java.util.random.RandomGenerator;

/**
 * A network that loses, duplicates, delays (and so reorders) messages, and cuts links one way or both.
 * Delivery order is a function of the seed only: messages are ordered by (delivery tick, send sequence).
 */
final class SimNetwork {
    record InFlight(long at, long seq, String to, RaftMessageProto message) {
    }

    private final RandomGenerator random;
    private final PriorityQueue<InFlight> queue = new PriorityQueue<>((a, b) -> a.at != b.at
            ? Long.compare(a.at, b.at) : Long.compare(a.seq, b.seq));
    private final Set<String> cut = new HashSet<>();
    /** Links that hold every message this many ticks longer ("from>to"): a slow path, until healed. */
    private final Map<String, Integer> slow = new HashMap<>();
    private long seq;
    double loss;
    double duplicate;
    int maxDelay;

    SimNetwork(RandomGenerator random) {
        this.random = random;
    }

    void send(long now, String from, String to, RaftMessageProto m) {
        if (cut.contains(from + ">" + to) || random.nextDouble() < loss) {
            return;
        }
        int copies = random.nextDouble() < duplicate ? 2 : 1;
        for (int i = 0; i < copies; i++) {
            queue.add(new InFlight(now + (maxDelay == 0 ? 0 : random.nextInt(maxDelay + 1))
                    + slow.getOrDefault(from + ">" + to, 0), seq++, to, m));
        }
    }

    /** The messages due by {@code now}, in delivery order; a link cut meanwhile drops them too. */
    List<InFlight> due(long now) {
        List<InFlight> out = new ArrayList<>();
        while (!queue.isEmpty() && queue.peek().at <= now) {
            out.add(queue.poll());
        }
        return out;
    }

    boolean isCut(String from, String to) {
        return cut.contains(from + ">" + to);
    }

    void cutOneWay(String from, String to) {
        cut.add(from + ">" + to);
    }

    void isolate(String member, List<String> all) {
        for (String other : all) {
            cutOneWay(member, other);
            cutOneWay(other, member);
        }
    }

    void split(List<String> side, List<String> all) {
        for (String a : side) {
            for (String b : all) {
                if (!side.contains(b)) {
                    cutOneWay(a, b);
                    cutOneWay(b, a);
                }
            }
        }
    }

    /** Undoes every cut to or from {@code member}. */
    void reconnect(String member) {
        cut.removeIf(link -> link.startsWith(member + ">") || link.endsWith(">" + member));
    }

    /** Every message from {@code from} to {@code to} takes {@code ticks} more, until {@link #heal}. */
    void slowOneWay(String from, String to, int ticks) {
        slow.put(from + ">" + to, ticks);
    }

    void heal() {
        cut.clear();
        slow.clear();
    }
}
