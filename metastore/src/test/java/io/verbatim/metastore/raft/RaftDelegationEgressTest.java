package io.verbatim.metastore.raft;

import static org.assertj.core.api.Assertions.assertThat;

import io.verbatim.metastore.proto.RaftConfigurationProto;
import io.verbatim.metastore.proto.RaftMessageProto;
import io.verbatim.metastore.proto.RaftPeerRole;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;

/**
 * The leader's entry egress with listener delegation (the P7: at most 0.20 of direct), measured
 * deterministically: 3 voters and 12 listeners on a loss-free network with per-pair latencies of 1 to 3
 * ticks, the same seeded load with and without delegation; the leader's bytes of entries per committed
 * entry, delegated over direct.
 */
class RaftDelegationEgressTest {
    private static final List<String> VOTERS = List.of("n1", "n2", "n3");
    private static final List<String> LISTENERS = List.of("l1", "l2", "l3", "l4", "l5", "l6", "l7", "l8", "l9", "l10",
            "l11", "l12");

    private static final class LatencyNetwork {
        record InFlight(long at, long seq, RaftMessageProto message) {
        }

        final Harness h;
        final SplittableRandom load;
        final SplittableRandom latencies;
        final Map<String, Integer> latency = new TreeMap<>();
        final PriorityQueue<InFlight> queue = new PriorityQueue<>((a, b) -> a.at != b.at ? Long.compare(a.at, b.at)
                : Long.compare(a.seq, b.seq));
        long now;
        long seq;

        LatencyNetwork(long seed, RaftConfigurationProto conf, UnaryOperator<RaftConfig> tune) {
            h = Harness.group(conf, tune);
            load = new SplittableRandom(seed);
            latencies = new SplittableRandom(seed * 31 + 7);
        }

        void tick(List<String> ticked) {
            now++;
            for (String id : ticked) {
                h.tick(id, 1);
            }
            post();
            while (!queue.isEmpty() && queue.peek().at <= now) {
                RaftMessageProto m = queue.poll().message;
                String to = Transcript.to(m);
                h.node(to).step(m);
                h.drive(to);
                post();
            }
        }

        void tickAll() {
            tick(List.copyOf(h.nodes.keySet()));
        }

        void post() {
            while (!h.inflight.isEmpty()) {
                RaftMessageProto m = h.inflight.pollFirst();
                String pair = Transcript.from(m) + ">" + Transcript.to(m);
                int ticks = latency.computeIfAbsent(pair, k -> 1 + latencies.nextInt(3));
                queue.add(new InFlight(now + ticks, seq++, m));
            }
        }

        void electN1() {
            for (int i = 0; i < 100 && h.status("n1").role() != RaftPeerRole.LEADER; i++) {
                tick(List.of("n1"));
            }
            assertThat(h.status("n1").role()).isEqualTo(RaftPeerRole.LEADER);
        }

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

        void settle() {
            for (int i = 0; i < 300 && !(queue.isEmpty() && caughtUp()); i++) {
                tickAll();
            }
            assertThat(caughtUp()).as("every member caught up").isTrue();
        }

        boolean caughtUp() {
            long last = h.status("n1").lastIndex();
            return h.nodes.keySet().stream().allMatch(id -> h.status(id).lastIndex() == last
                    && h.status(id).commitIndex() == last);
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
            return (double) leaderAppends().filter(a -> a.hasListenerAssignment())
                    .mapToLong(a -> com.google.protobuf.CodedOutputStream.computeMessageSize(16, a.getListenerAssignment()))
                    .sum() / h.status("n1").commitIndex();
        }

        private java.util.stream.Stream<io.verbatim.metastore.proto.AppendEntriesRequestProto> leaderAppends() {
            return h.sent.stream().filter(m -> m.hasAppendEntries() && Transcript.from(m).equals("n1"))
                    .map(RaftMessageProto::getAppendEntries);
        }
    }

    private static RaftConfigurationProto conf(int toN2, int toN3) {
        List<String> d = new ArrayList<>();
        for (int i = 0; i < toN2 + toN3; i++) {
            d.add(LISTENERS.get(i));
            d.add(i < toN2 ? "n2" : "n3");
        }
        return RaftDelegationTest.withDelegations(Harness.configuration(VOTERS, LISTENERS), d.toArray(String[]::new));
    }

    /** Per committed entry: the leader's entry bytes, its AppendEntries bytes, and their assignments' bytes. */
    private record Egress(double entries, double appends, double assignments) {
        Egress plus(Egress o) {
            return new Egress(entries + o.entries, appends + o.appends, assignments + o.assignments);
        }
    }

    private static Egress run(long seed, RaftConfigurationProto conf, UnaryOperator<RaftConfig> tune) {
        LatencyNetwork net = new LatencyNetwork(seed, conf, tune);
        net.electN1();
        net.load(60);
        net.settle();
        assertThat(net.h.status("n1").term()).as("seed %d: one leader throughout", seed).isEqualTo(1);
        assertThat(net.h.node("n1").counters().revocations()).as("seed %d: no revocation", seed).isZero();
        // each delegate sends each entry to each of its listeners once (it re-probes only an unanswered append)
        long last = net.h.status("n1").lastIndex();
        for (var d : conf.getDelegationsList()) {
            Map<Long, Integer> copies = new TreeMap<>();
            net.h.sent.stream().filter(m -> m.hasAppendEntries() && Transcript.from(m).equals(d.getFollower())
                    && Transcript.to(m).equals(d.getListener())).flatMap(m -> m.getAppendEntries().getEntriesList().stream())
                    .forEach(e -> copies.merge(e.getIndex(), 1, Integer::sum));
            assertThat(copies.entrySet().stream().filter(e -> e.getValue() != 1).toList())
                    .as("seed %d: entries %s sent to %s more than once", seed, d.getFollower(), d.getListener()).isEmpty();
            assertThat(copies.size() + net.h.status(d.getListener()).firstIndex() - 1)
                    .as("seed %d: %s fed %s every entry", seed, d.getFollower(), d.getListener()).isEqualTo(last);
        }
        return new Egress(net.leaderBytesPerEntry(), net.leaderAppendBytesPerEntry(), net.leaderAssignmentBytesPerEntry());
    }

    @Test
    void delegationCutsTheLeadersEntryEgress() {
        Egress d = new Egress(0, 0, 0);
        Egress f = new Egress(0, 0, 0);
        Egress x = new Egress(0, 0, 0);
        for (long seed = 1; seed <= 10; seed++) {
            d = d.plus(run(seed, conf(0, 0), c -> c));
            f = f.plus(run(seed, conf(5, 5), c -> c.withDelegation(true, 5, 100, 100, 300)));
            x = x.plus(run(seed, conf(6, 6), c -> c.withDelegation(true, 6, 100, 100, 300)));
        }
        double direct = d.entries();
        double ratioFive = f.entries() / direct;
        double ratioSix = x.entries() / direct;
        System.out.printf("leader entry bytes per committed entry over 10 seeds: direct %.1f; 5+5 delegated, 2 direct "
                + "%.1f (ratio %.3f); 6+6 delegated %.1f (ratio %.3f)%n", direct / 10, f.entries() / 10, ratioFive,
                x.entries() / 10, ratioSix);
        System.out.printf("leader AppendEntries bytes per committed entry (assignments among them): direct %.1f (%.1f); "
                + "5+5 %.1f (%.1f, ratio %.3f); 6+6 %.1f (%.1f, ratio %.3f)%n", d.appends() / 10, d.assignments() / 10,
                f.appends() / 10, f.assignments() / 10, f.appends() / d.appends(), x.appends() / 10,
                x.assignments() / 10, x.appends() / d.appends());
        // the leader sends entries to 2 voters + the listeners it feeds, of 14 members
        assertThat(ratioFive).isCloseTo(4.0 / 14, org.assertj.core.data.Offset.offset(0.01));
        assertThat(ratioSix).isCloseTo(2.0 / 14, org.assertj.core.data.Offset.offset(0.01)).isLessThanOrEqualTo(0.20);
    }
}
