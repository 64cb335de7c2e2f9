package io.verbatim.metadatalog.raft;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.CodedOutputStream;
import io.verbatim.metadatalog.proto.AppendEntriesRequestProto;
import io.verbatim.metadatalog.proto.AppendResult;
import io.verbatim.metadatalog.proto.RaftMessageProto;
import io.verbatim.metadatalog.proto.RaftPeerRole;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.function.Predicate;
import java.util.stream.Stream;

/**
 * Time in ticks over a {@link Harness}: each pair of members has its own latency of 1 to 3 ticks (so a round
 * trip spans several heartbeats and pairs answer at different times), order kept per pair, nothing lost
 * unless {@link #lose} says so. n1 is elected and loaded; what it sent is counted (the egress tests).
 */
final class LatencyNetwork {
    private record InFlight(long at, long seq, RaftMessageProto message) {
    }

    final Harness h;
    private final SplittableRandom load;
    private final SplittableRandom latencies;
    private final Map<String, Integer> latency = new TreeMap<>();
    private final PriorityQueue<InFlight> queue = new PriorityQueue<>((a, b) -> a.at != b.at
            ? Long.compare(a.at, b.at) : Long.compare(a.seq, b.seq));
    final List<RaftMessageProto> delivered = new ArrayList<>();
    Predicate<RaftMessageProto> lose = m -> false;
    private long now;
    private long seq;

    /** @param load draws the proposals; {@code latencies} the pairs' latencies (the same one may do both) */
    LatencyNetwork(Harness h, SplittableRandom load, SplittableRandom latencies) {
        this.h = h;
        this.load = load;
        this.latencies = latencies;
    }

    /** One tick: the ticked members tick, then every message due is delivered, in order. */
    void tick(List<String> ticked) {
        now++;
        for (String id : ticked) {
            h.tick(id, 1);
        }
        post();
        while (!queue.isEmpty() && queue.peek().at <= now) {
            RaftMessageProto m = queue.poll().message;
            String to = Transcript.to(m);
            delivered.add(m);
            h.node(to).step(m);
            h.drive(to);
            post();
        }
    }

    void tickAll() {
        tick(List.copyOf(h.nodes.keySet()));
    }

    /** Moves what the members sent onto the wire. */
    private void post() {
        while (!h.inflight.isEmpty()) {
            RaftMessageProto m = h.inflight.pollFirst();
            if (lose.test(m)) {
                continue;
            }
            String pair = Transcript.from(m) + ">" + Transcript.to(m);
            int ticks = latency.computeIfAbsent(pair, k -> 1 + latencies.nextInt(3));
            queue.add(new InFlight(now + ticks, seq++, m));
        }
    }

    /** n1 campaigns alone (the others do not tick) until it leads; then everyone ticks. */
    void electN1() {
        for (int i = 0; i < 100 && h.status("n1").role() != RaftPeerRole.LEADER; i++) {
            tick(List.of("n1"));
        }
        assertThat(h.status("n1").role()).isEqualTo(RaftPeerRole.LEADER);
    }

    /** Proposals for {@code ticks} ticks: none, one, or a burst of up to 20 at each, drawn from the seed. */
    void load(int ticks) {
        for (int t = 0; t < ticks; t++) {
            int draw = load.nextInt(10);
            int proposals = draw < 3 ? 0 : draw < 8 ? 1 : 2 + load.nextInt(19);
            for (int i = 0; i < proposals; i++) {
                h.propose("n1", "e" + t + "." + i);
            }
            tickAll();
        }
    }

    /** Ticks until nothing is in flight and every member holds the leader's log. */
    void settle() {
        for (int i = 0; i < 300 && !(queue.isEmpty() && caughtUp()); i++) {
            tickAll();
        }
        assertThat(caughtUp()).as("every member caught up").isTrue();
    }

    private boolean caughtUp() {
        long last = h.status("n1").lastIndex();
        return h.nodes.keySet().stream().allMatch(id -> h.status(id).lastIndex() == last
                && h.status(id).commitIndex() == last);
    }

    /** For each member, how many times n1 sent it each index in an AppendEntries. */
    Map<String, TreeMap<Long, Integer>> copies() {
        Map<String, TreeMap<Long, Integer>> out = new TreeMap<>();
        for (RaftMessageProto m : h.sent) {
            if (m.hasAppendEntries() && Transcript.from(m).equals("n1")) {
                TreeMap<Long, Integer> perIndex = out.computeIfAbsent(Transcript.to(m), k -> new TreeMap<>());
                m.getAppendEntries().getEntriesList().forEach(e -> perIndex.merge(e.getIndex(), 1, Integer::sum));
            }
        }
        return out;
    }

    /** Appends answered with anything but SUCCESS. */
    long rejections() {
        return delivered.stream().filter(m -> m.hasAppendEntriesReply()
                && m.getAppendEntriesReply().getResult() != AppendResult.SUCCESS).count();
    }

    /** The leader's bytes of entries per committed entry. */
    double leaderBytesPerEntry() {
        return (double) h.node("n1").counters().entryBytesSent() / h.status("n1").commitIndex();
    }

    /** The leader's AppendEntries, whole (entries, assignment and the rest), in bytes per committed entry. */
    double leaderAppendBytesPerEntry() {
        return (double) leaderAppends().mapToLong(a -> a.getSerializedSize()).sum() / h.status("n1").commitIndex();
    }

    /** The listener assignments on the leader's AppendEntries (field 16, its tag and length included). */
    double leaderAssignmentBytesPerEntry() {
        return (double) leaderAppends().filter(AppendEntriesRequestProto::hasListenerAssignment)
                .mapToLong(a -> CodedOutputStream.computeMessageSize(16, a.getListenerAssignment()))
                .sum() / h.status("n1").commitIndex();
    }

    private Stream<AppendEntriesRequestProto> leaderAppends() {
        return h.sent.stream().filter(m -> m.hasAppendEntries() && Transcript.from(m).equals("n1"))
                .map(RaftMessageProto::getAppendEntries);
    }
}
