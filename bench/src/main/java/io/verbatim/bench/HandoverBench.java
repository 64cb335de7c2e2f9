package io.verbatim.bench;

import io.verbatim.metadatalog.state.SegmentKey;
import io.verbatim.pulsar.broker.PulsarProcess;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

/**
 * How long a cluster's segments go without an acting owner when a broker member goes (issue 25, design §7
 * "Bench"): {@link MemberCluster}'s topology (three controller replicas, three broker members, one topic of
 * {@code segments} segments replicated to a second cluster, all in this JVM on one Pulsar broker in a child
 * process; lease 4 s). Per round, in alternating order:
 *
 * <ul>
 *   <li><b>kill</b>: one member is closed without draining ({@code ClusterNode.close}: its ports and Pulsar
 *       connections go at once, it reports no more). Within one JVM this stands for SIGKILL: the leader learns
 *       nothing until the lease runs out, then expires it and gives its segments to the others.</li>
 *   <li><b>drain</b>: another member is stopped as SIGTERM stops it ({@code Node.stop}): it says it is leaving,
 *       the leader moves its segments, it releases each.</li>
 * </ul>
 *
 * For each segment the member acted on: the time from the call (the close, or the stop) until another member
 * acts on it ({@code SegmentOwnership.owns}: its replica shows it the owner and its lease holds), polled every
 * 5 ms. The kill's time counts from the start of the close, which takes a while (its note says how long): an
 * upper bound, since the member reports until its metadata log link closes, last. The rows are the p50, p99 (nearest rank) and max over those segments, in ms, each divided by the lease;
 * a round's note says how many segments were handed over. After each case the member is started again and the
 * round goes on once the three share every segment again.
 */
final class HandoverBench {
    static final int MEMBERS = 3;
    private static final Duration POLL = Duration.ofMillis(5);

    /** At 100 segments (10 with --quick). */
    static final List<Row.Spec> SMALL = specs("handover100", 100, 10);
    /** At 1,000 segments (100 with --quick). */
    static final List<Row.Spec> LARGE = specs("handover1000", 1000, 100);

    private HandoverBench() {
    }

    /** The six rows of a size: kill and drain, p50, p99 and max. */
    static List<Row.Spec> specs(String family, int segments, int quickSegments) {
        List<Row.Spec> specs = new ArrayList<>();
        String size = segments + " segments (" + quickSegments + " with --quick)";
        for (String kase : List.of("kill", "drain")) {
            for (String stat : List.of("p50", "p99", "max")) {
                String what = kase.equals("kill")
                        ? "a member closed without draining (SIGKILL within one JVM)"
                        : "a member stopped with drain (Node.stop, SIGTERM's path)";
                // the kill's bound: BrokerProcessesTest's, every segment owned again within the lease + 5 s
                Goal goal = kase.equals("kill") && stat.equals("max")
                        ? Goal.atMost((MemberCluster.LEASE.toMillis() + 5000.0) / MemberCluster.LEASE.toMillis())
                        : Goal.none();
                specs.add(new Row.Spec(family + "/" + kase + "-" + stat, "handover without owner, " + stat
                        + " over the segments of " + what + ", until another member acts; " + size + ", "
                        + MEMBERS + " members in one JVM on one Pulsar broker, lease 4 s", "handover", "lease", "ms",
                        goal));
            }
        }
        return specs;
    }

    /** The benchmark of one size: its topology started once, every round on it. */
    static Bench ratios(List<Row.Spec> specs, int segments, PrintStream log) throws Exception {
        PulsarProcess broker = MemberCluster.broker("1g", log);
        MemberCluster cluster;
        try {
            long t0 = System.nanoTime();
            cluster = MemberCluster.open(broker, segments, MEMBERS, log);
            cluster.memberIds().forEach(cluster::start);
            cluster.awaitSettled(Duration.ofMinutes(10));
            cluster.say("%d segments shared (%s) %.1f s after the start", segments, cluster.shares(),
                    (System.nanoTime() - t0) / 1e9);
        } catch (Exception | Error e) {
            broker.close();
            throw e;
        }
        return new Bench() {
            @Override
            public List<Row.Spec> specs() {
                return specs;
            }

            @Override
            public List<Row.Sample> round(int round) throws Exception {
                List<String> ids = cluster.memberIds();
                String killed = ids.get(Math.floorMod(round, ids.size()));
                String drained = ids.get(Math.floorMod(round + 1, ids.size()));
                Handovers kill = null;
                Handovers drain = null;
                for (int k = 0; k < 2; k++) {
                    if ((Math.floorMod(round, 2) == 0) == (k == 0)) {
                        kill = handOver(cluster, killed, false);
                    } else {
                        drain = handOver(cluster, drained, true);
                    }
                }
                double lease = MemberCluster.LEASE.toMillis();
                List<Row.Sample> out = new ArrayList<>();
                for (Handovers h : List.of(kill, drain)) {
                    String note = h.note();
                    out.add(new Row.Sample(h.percentile(50), lease, note));
                    out.add(new Row.Sample(h.percentile(99), lease, note));
                    out.add(new Row.Sample(h.max(), lease, note));
                }
                return out;
            }

            @Override
            public void close() {
                try {
                    cluster.close();
                } finally {
                    broker.close();
                }
            }
        };
    }

    /**
     * One case: {@code member} goes (closed, or stopped with drain), each of its segments timed until another
     * member acts on it; then it is started again and the three share every segment again.
     */
    static Handovers handOver(MemberCluster cluster, String member, boolean drain) {
        Set<SegmentKey> lost = cluster.acting(member);
        List<String> others = cluster.running().keySet().stream().filter(id -> !id.equals(member)).toList();
        Handovers times = new Handovers(member, drain ? "drain" : "kill", lost.size(), cluster.segments());
        List<SegmentKey> pending = new ArrayList<>(lost);
        long t0 = System.nanoTime();
        CompletableFuture<Void> going = drain ? CompletableFuture.runAsync(() -> cluster.stop(member))
                : CompletableFuture.completedFuture(null);
        if (!drain) {
            cluster.kill(member);
            times.closedAfter((System.nanoTime() - t0) / 1e6);
        }
        long deadline = t0 + MemberCluster.LEASE.multipliedBy(10).plusMinutes(2).toNanos();
        while (!pending.isEmpty()) {
            pending.removeIf(s -> {
                boolean taken = others.stream().anyMatch(id -> cluster.acts(id, s));
                if (taken) {
                    times.add((System.nanoTime() - t0) / 1e6); // seen now: late by at most one poll
                }
                return taken;
            });
            long now = System.nanoTime();
            if (now > deadline) {
                throw new IllegalStateException(times.kase() + " of " + member + ": " + pending.size() + " of "
                        + lost.size() + " segments still without another member acting after "
                        + Duration.ofNanos(now - t0));
            }
            MemberCluster.sleep(POLL.toMillis());
        }
        going.join();
        cluster.say("%s", times.note());
        cluster.start(member);
        cluster.awaitSettled(Duration.ofMinutes(5));
        return times;
    }
}
