package io.verbatim.metadatalog.raft;

import static org.assertj.core.api.Assertions.assertThat;

import io.verbatim.metadatalog.proto.RaftConfigurationProto;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.function.UnaryOperator;
import org.assertj.core.data.Offset;
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
        LatencyNetwork net = new LatencyNetwork(Harness.group(conf, tune), new SplittableRandom(seed),
                new SplittableRandom(seed * 31 + 7));
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
            f = f.plus(run(seed, conf(5, 5), c -> c.withDelegationEnabled(true)));
            x = x.plus(run(seed, conf(6, 6), c -> c.withDelegationEnabled(true).withMaxListenersPerFollower(6)));
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
        assertThat(ratioFive).isCloseTo(4.0 / 14, Offset.offset(0.01));
        assertThat(ratioSix).isCloseTo(2.0 / 14, Offset.offset(0.01)).isLessThanOrEqualTo(0.20);
    }
}
