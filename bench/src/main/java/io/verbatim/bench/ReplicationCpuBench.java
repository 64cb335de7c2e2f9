package io.verbatim.bench;

import io.verbatim.pipeline.ReplicatorMetrics;
import io.verbatim.pulsar.broker.PulsarProcess;
import io.verbatim.runtime.Node;
import java.io.PrintStream;
import java.time.Duration;
import java.util.List;
import java.util.Locale;

/**
 * What replication costs in CPU per replicated byte with 1, 2 and 3 broker members (issue 25, design §7
 * "Bench"): does spreading a cluster's segments over more members cost more CPU for the same bytes? On
 * {@link MemberCluster}'s topology (three controller replicas, the members, one topic of 12 segments replicated
 * to cluster {@code b}, everything in this JVM on one Pulsar broker in a child process).
 *
 * <p>Per round, each member count (an arm) in turn, the order rotating: the members {@code broker-1..k} run
 * (started, or stopped with drain, from the previous arm's), the segments are shared and nothing is left to
 * replicate; then the same traffic ({@link TrafficChild}: {@code bytes} of 1 KiB messages, 100 an entry, LZ4,
 * the segments in turn) is written to {@code a}'s segments from a child JVM (its start and connection are not in
 * the window: it waits for a go), and the arm ends when the members'
 * replicators have had every entry it stored acknowledged by {@code b}. Over that window:
 *
 * <ul>
 *   <li>this JVM's whole process CPU (the members run in it with the controller replicas and {@code b}: members in
 *       one JVM cannot be told apart by thread, so it is the sum, idle work of the rest included, the same in every
 *       arm), divided by the bytes the members' replicators had acknowledged (entry bytes, summed);</li>
 *   <li>the Pulsar broker's process CPU per the same bytes (it stores the traffic, serves the replicators' reads
 *       and stores {@code b}'s copy; it shares the two cores with this JVM).</li>
 * </ul>
 *
 * The rows are 2 ÷ 1 and 3 ÷ 1 of each; each round's note has the absolute figures, and each arm's idle CPU per
 * second measured for {@link #IDLE} just before its traffic. Two more rows take that idle CPU out of the JVM's
 * (its rate times the window): what replicating the bytes cost above running the members at all, which is what
 * spreading segments over members adds per byte. They carry no goal: on two shared cores the idle rate measured
 * before a window is as large as the work of the window and moves from one to the next, so the difference swings
 * (per round 0.45 to 2.45 in the first run); the goal (≤ 1.05) stays on the whole process's rows, which keep each
 * extra member's fixed cost (on machines of their own it would not add up in one process).
 */
final class ReplicationCpuBench {
    static final int SEGMENTS = 12;
    static final int MEMBERS = 3;

    static final Row.Spec TWO = spec("cpu/2:1", 2, false);
    static final Row.Spec THREE = spec("cpu/3:1", 3, false);
    static final Row.Spec PULSAR_TWO = spec("cpu/pulsar-2:1", 2, true);
    static final Row.Spec PULSAR_THREE = spec("cpu/pulsar-3:1", 3, true);
    static final Row.Spec NET_TWO = net("cpu/net-2:1", 2);
    static final Row.Spec NET_THREE = net("cpu/net-3:1", 3);
    static final List<Row.Spec> SPECS = List.of(TWO, THREE, PULSAR_TWO, PULSAR_THREE, NET_TWO, NET_THREE);

    private ReplicationCpuBench() {
    }

    private static Row.Spec spec(String id, int members, boolean pulsar) {
        return new Row.Spec(id, (pulsar ? "Pulsar broker CPU" : "replication CPU (the JVM of every member, summed)")
                + " per replicated byte, " + members + " broker members ÷ 1, same traffic, " + SEGMENTS + " segments to a"
                + " second cluster, one Pulsar broker", members + " members", "1 member", "ns/B",
                pulsar ? Goal.none() : Goal.atMost(1.05));
    }

    private static Row.Spec net(String id, int members) {
        return new Row.Spec(id, "replication CPU above idle (the JVM's, less its idle rate over the window) per"
                + " replicated byte, " + members + " broker members ÷ 1, same traffic", members + " members", "1 member",
                "ns/B", Goal.none());
    }

    /** How long each arm's idle CPU is measured before its traffic. */
    static final Duration IDLE = Duration.ofSeconds(2);

    /**
     * One arm's window; {@code idleJvm} and {@code idlePulsar}: the CPU per second of each just before, with
     * nothing to replicate (what the members, the controller replicas and {@code b} cost doing nothing).
     */
    record Window(int members, long jvmNanos, long pulsarNanos, long bytes, long entries, double seconds,
            double idleJvm, double idlePulsar) {
        double jvmPerByte() {
            return (double) jvmNanos / bytes;
        }

        double pulsarPerByte() {
            return (double) pulsarNanos / bytes;
        }

        /** The JVM's CPU per byte less what it spends idle at the rate measured just before. */
        double netPerByte() {
            return Math.max(0, jvmNanos - idleJvm * seconds) / bytes;
        }

        String describe() {
            return String.format(Locale.ROOT, "%d: %.2f ns/B (above idle %.2f; Pulsar %.2f), %.1f MB in %.1f s, idle"
                    + " before %.0f ms/s (Pulsar %.0f)", members, jvmPerByte(), netPerByte(), pulsarPerByte(),
                    bytes / 1e6, seconds, idleJvm / 1e6, idlePulsar / 1e6);
        }
    }

    static Bench ratios(long bytes, PrintStream log) throws Exception {
        PulsarProcess broker = MemberCluster.broker("1g", log);
        MemberCluster cluster;
        try {
            cluster = MemberCluster.open(broker, SEGMENTS, MEMBERS, log);
        } catch (Exception | Error e) {
            broker.close();
            throw e;
        }
        return new Bench() {
            private int child;

            @Override
            public List<Row.Spec> specs() {
                return SPECS;
            }

            @Override
            public List<Row.Sample> round(int round) throws Exception {
                Window[] w = new Window[MEMBERS + 1];
                for (int i = 0; i < MEMBERS; i++) {
                    int k = Math.floorMod(round + i, MEMBERS) + 1;
                    w[k] = arm(cluster, broker, k, bytes, ++child);
                    cluster.say("%s", w[k].describe());
                }
                String note = w[1].describe() + "; " + w[2].describe() + "; " + w[3].describe();
                return List.of(new Row.Sample(w[2].jvmPerByte(), w[1].jvmPerByte(), note),
                        new Row.Sample(w[3].jvmPerByte(), w[1].jvmPerByte(), note),
                        new Row.Sample(w[2].pulsarPerByte(), w[1].pulsarPerByte(), note),
                        new Row.Sample(w[3].pulsarPerByte(), w[1].pulsarPerByte(), note),
                        new Row.Sample(w[2].netPerByte(), w[1].netPerByte(), note),
                        new Row.Sample(w[3].netPerByte(), w[1].netPerByte(), note));
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

    /** Runs broker-1..k only, settled and caught up; then one window of traffic. */
    static Window arm(MemberCluster cluster, PulsarProcess broker, int k, long bytes, int seed) throws Exception {
        List<String> ids = cluster.memberIds();
        for (String id : ids.subList(0, k)) {
            if (!cluster.running().containsKey(id)) {
                cluster.start(id);
            }
        }
        for (int i = ids.size() - 1; i >= k; i--) {
            String id = ids.get(i);
            if (cluster.running().containsKey(id)) {
                cluster.stop(id); // drains: its segments go to the members that stay
            }
        }
        cluster.awaitSettled(Duration.ofMinutes(2));
        cluster.awaitCaughtUp(Duration.ofMinutes(5));
        String shares = cluster.shares();
        long[] at = new long[6]; // idle start: time, cpu, pulsar; window start: time, cpu, pulsar
        long[][] before = new long[1][];
        TrafficChild.Stored stored = TrafficChild.run(List.of(broker.serviceUrl(), broker.webUrl(),
                cluster.namespaceOfA(), MemberCluster.TOPIC, Integer.toString(cluster.segments()), "4",
                Long.toString(bytes), Integer.toString(seed)), () -> {
                    // the child is connected and waits: the idle CPU now, then the window from its go
                    at[0] = System.nanoTime();
                    at[1] = ProcessCpu.self();
                    at[2] = ProcessCpu.of(broker.pid());
                    MemberCluster.sleep(IDLE.toMillis());
                    before[0] = replicated(cluster);
                    at[4] = ProcessCpu.self();
                    at[5] = ProcessCpu.of(broker.pid());
                    at[3] = System.nanoTime();
                });
        long t0 = at[3];
        long cpu0 = at[4];
        long pulsar0 = at[5];
        double idleSeconds = (t0 - at[0]) / 1e9;
        long[] start = before[0];
        MemberCluster.await(() -> "the members' replicators acknowledged " + (replicated(cluster)[0] - start[0])
                + " of " + stored.entries() + " entries", Duration.ofMinutes(10),
                () -> replicated(cluster)[0] - start[0] >= stored.entries());
        long cpu1 = ProcessCpu.self();
        long pulsar1 = ProcessCpu.of(broker.pid());
        double seconds = (System.nanoTime() - t0) / 1e9;
        long[] after = replicated(cluster);
        if (!cluster.shares().equals(shares)) {
            cluster.say("(the shares changed during the window: %s, then %s)", shares, cluster.shares());
        }
        return new Window(k, cpu1 - cpu0, pulsar1 - pulsar0, after[1] - start[1], after[0] - start[0], seconds,
                (cpu0 - at[1]) / idleSeconds, (pulsar0 - at[2]) / idleSeconds);
    }

    /** Entries and bytes the running members' replicators had acknowledged toward {@code b}, summed. */
    private static long[] replicated(MemberCluster cluster) {
        long entries = 0;
        long bytes = 0;
        for (Node n : cluster.running().values()) {
            ReplicatorMetrics m = n.cluster().replication(MemberCluster.TOPIC, "b");
            entries += m.verbatimEntries() + m.rebatchedEntries();
            bytes += m.verbatimBytes() + m.rebatchedBytes();
        }
        return new long[] {entries, bytes};
    }
}
