package io.verbatim.metadatalog.raft;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import io.verbatim.metadatalog.proto.LogEntryProto;
import io.verbatim.metadatalog.proto.RaftConfigurationProto;
import io.verbatim.metadatalog.proto.RaftMessageProto;
import io.verbatim.metadatalog.proto.RaftPeerProto;
import io.verbatim.metadatalog.proto.RaftPeerRole;
import io.verbatim.metadatalog.storage.RaftStorage;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Predicate;
import java.util.function.UnaryOperator;
import java.util.stream.Collectors;

/**
 * A scripted group for the example tests: members in memory, messages delivered in FIFO order when the
 * test says so, links cut by isolating members or by a drop rule, every delivery rendered as a line.
 */
final class Harness {
    static final String GROUP = "g";

    final TreeMap<String, RaftNode> nodes = new TreeMap<>();
    final Map<String, List<LogEntryProto>> applied = new TreeMap<>();
    final Map<String, List<Ready.ReadState>> reads = new TreeMap<>();
    final Map<String, List<Ready.Snapshot>> snapshots = new TreeMap<>();
    final List<String> transcript = new ArrayList<>();
    final ArrayDeque<RaftMessageProto> inflight = new ArrayDeque<>();
    final List<RaftMessageProto> sent = new ArrayList<>();
    final Set<String> isolated = new TreeSet<>();
    Predicate<RaftMessageProto> drop = m -> false;
    UnaryOperator<RaftMessageProto> rewrite = m -> m;
    private final UnaryOperator<RaftConfig> tune;

    Harness(UnaryOperator<RaftConfig> tune) {
        this.tune = tune;
    }

    static RaftConfigurationProto configuration(List<String> voters, List<String> listeners) {
        RaftConfigurationProto.Builder b = RaftConfigurationProto.newBuilder();
        voters.forEach(v -> b.addPeers(RaftPeerProto.newBuilder().setId(v).setAddress(v + ":7000")));
        listeners.forEach(l -> b.addListeners(RaftPeerProto.newBuilder().setId(l).setAddress(l + ":7000")));
        return b.build();
    }

    /** A group of founders sharing {@code initial}. */
    static Harness group(RaftConfigurationProto initial, UnaryOperator<RaftConfig> tune) {
        Harness h = new Harness(tune);
        initial.getPeersList().forEach(p -> h.start(p.getId(), initial));
        initial.getListenersList().forEach(p -> h.start(p.getId(), initial));
        return h;
    }

    static Harness group(List<String> voters, List<String> listeners) {
        return group(configuration(voters, listeners), c -> c);
    }

    RaftNode start(String id, RaftConfigurationProto initial) {
        RaftConfig config = tune.apply(RaftConfig.defaults(id, GROUP).withElectionTicks(10).withHeartbeatTicks(1));
        RaftNode node = RaftNode.start(config, RaftStorage.Recovered.empty(), Optional.empty(), initial,
                new SplittableRandom(id.hashCode()));
        nodes.put(id, node);
        applied.put(id, new ArrayList<>());
        reads.put(id, new ArrayList<>());
        snapshots.put(id, new ArrayList<>());
        return node;
    }

    RaftNode node(String id) {
        return nodes.get(id);
    }

    RaftStatus status(String id) {
        return nodes.get(id).status();
    }

    /** The driver, with a perfect disk: everything in a Ready is durable at once. */
    void drive(String id) {
        RaftNode n = nodes.get(id);
        while (n.hasReady()) {
            Ready r = n.ready();
            r.snapshot().ifPresent(s -> {
                snapshots.get(id).add(s);
                applied.get(id).clear();
            });
            for (RaftMessageProto m : r.messages()) {
                sent.add(m);
                inflight.addLast(m);
            }
            for (LogEntryProto e : r.committedEntries()) {
                applied.get(id).add(e);
                if (e.hasStateMachineLogEntry()) {
                    transcript.add(id + " applies (" + e.getTerm() + "," + e.getIndex() + ") "
                            + e.getStateMachineLogEntry().getLogData().toStringUtf8());
                }
            }
            reads.get(id).addAll(r.readStates());
            n.advance(r);
        }
    }

    void tick(String id, int times) {
        for (int i = 0; i < times; i++) {
            nodes.get(id).tick();
            drive(id);
        }
    }

    /** Ticks every member {@code times} times, delivering after each round. */
    void run(int times) {
        for (int i = 0; i < times; i++) {
            for (String id : nodes.keySet()) {
                nodes.get(id).tick();
                drive(id);
            }
            deliver();
        }
    }

    /** Delivers until no message is in flight; returns how many were delivered. */
    int deliver() {
        int delivered = 0;
        while (!inflight.isEmpty() && delivered < 100_000) {
            RaftMessageProto m = inflight.pollFirst();
            String from = Transcript.from(m);
            String to = Transcript.to(m);
            if (isolated.contains(from) || isolated.contains(to) || drop.test(m) || !nodes.containsKey(to)) {
                continue;
            }
            m = rewrite.apply(m);
            transcript.add(Transcript.line(m));
            nodes.get(to).step(m);
            drive(to);
            delivered++;
        }
        return delivered;
    }

    /** Ticks {@code id} alone until it campaigns, then delivers; it must win. */
    void elect(String id) {
        for (int i = 0; i < 60 && status(id).role() != RaftPeerRole.LEADER; i++) {
            tick(id, 1);
            deliver();
        }
        assertThat(status(id).role()).as(id + " leads").isEqualTo(RaftPeerRole.LEADER);
        deliver();
    }

    long propose(String id, String data) {
        Proposal p = nodes.get(id).propose(ByteString.copyFromUtf8(data));
        assertThat(p).isInstanceOf(Proposal.Accepted.class);
        drive(id);
        return ((Proposal.Accepted) p).index();
    }

    /**
     * Cuts {@code cut} off, then has {@code leader} commit {@code v0 .. v<count-1>} without them, in
     * {@code rounds} rounds: the members to bring back behind the others.
     */
    void proposeWithout(List<String> cut, String leader, int count, int rounds) {
        isolated.addAll(cut);
        for (int i = 0; i < count; i++) {
            propose(leader, "v" + i);
        }
        run(rounds);
    }

    List<String> appliedData(String id) {
        return applied.get(id).stream().filter(LogEntryProto::hasStateMachineLogEntry)
                .map(e -> e.getStateMachineLogEntry().getLogData().toStringUtf8()).collect(Collectors.toList());
    }

    long count(String from, RaftMessageProto.BodyCase body) {
        return sent.stream().filter(m -> m.getBodyCase() == body && Transcript.from(m).equals(from)).count();
    }
}
