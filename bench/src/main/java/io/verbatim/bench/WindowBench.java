package io.verbatim.bench;

import io.verbatim.config.VerbatimConfig;
import io.verbatim.model.Compression;
import io.verbatim.model.entry.Message;
import io.verbatim.runtime.ClusterNode;
import io.verbatim.runtime.EmbeddedRuntime;
import io.verbatim.runtime.broker.Producer;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * What the in-flight window buys over a WAN: replication throughput of one segment from one cluster to
 * another through the embedded runtime (real WebSockets on loopback, the round trip simulated), for
 * windows of 1, 100 and 1000 entries at 0 and 80 ms. A backlog is produced first, then the time until
 * the remote holds it all is measured.
 *
 * <p>Run: {@code java -cp bench/target/benchmarks.jar io.verbatim.bench.WindowBench [entries]}
 */
final class WindowBench {
    private WindowBench() {
    }

    public static void main(String[] args) {
        int entries = args.length > 0 ? Integer.parseInt(args[0]) : 20_000;
        int[] windows = {1, 100, 1000};
        long[] rtts = {0, 80};
        double[][] rates = new double[rtts.length][windows.length];
        for (int r = 0; r < rtts.length; r++) {
            for (int w = 0; w < windows.length; w++) {
                // A window of one at 80 ms does ~12 entries/s: measure it on fewer entries.
                int n = rtts[r] > 0 && windows[w] == 1 ? 100 : entries;
                rates[r][w] = run(windows[w], rtts[r], n);
                System.out.printf(Locale.ROOT, "window %4d, rtt %3d ms: %,10.0f entries/s (%,d entries)%n", windows[w],
                        rtts[r], rates[r][w], n);
            }
        }
        System.out.println();
        System.out.println("| rtt | window 1 | window 100 | window 1000 | 1000 ÷ 1 |");
        System.out.println("| --- | --- | --- | --- | --- |");
        for (int r = 0; r < rtts.length; r++) {
            System.out.printf(Locale.ROOT, "| %d ms | %,.0f/s | %,.0f/s | %,.0f/s | %,.0f× |%n", rtts[r], rates[r][0],
                    rates[r][1], rates[r][2], rates[r][2] / rates[r][0]);
        }
        System.out.printf(Locale.ROOT, "window 1000 at 80 ms ÷ at 0 ms: %.2f%n", rates[1][2] / rates[0][2]);
        System.exit(0);
    }

    /** Context for P4: the runtime over WebSockets at an 80 ms round trip ÷ at none, the shipped window. */
    static final Row.Spec P4_RUNTIME = new Row.Spec("P4/rtt-runtime", "replication through the embedded runtime"
            + " (WebSockets on loopback) at 80 ms RTT ÷ at 0 ms, default window (context for P4, not its link-rate"
            + " ratio)", "80 ms RTT", "0 ms", "entries/s", Goal.none());

    /** {@link #P4_RUNTIME}: per round a runtime at 80 ms and one at 0 ms, the order alternating. */
    static Bench ratios(int entries, PrintStream log) {
        return new Bench() {
            @Override
            public List<Row.Spec> specs() {
                return List.of(P4_RUNTIME);
            }

            @Override
            public List<Row.Sample> round(int round) {
                double[] rate = new double[2]; // 80 ms, 0 ms
                for (int k = 0; k < 2; k++) {
                    int which = Math.floorMod(round + k, 2);
                    rate[which] = run(0, which == 0 ? 80 : 0, entries);
                }
                log.printf(Locale.ROOT, "  80 ms %,.0f, 0 ms %,.0f entries/s (%,d entries)%n", rate[0], rate[1], entries);
                return List.of(Row.Sample.of(rate[0], rate[1]));
            }

            @Override
            public void close() {
                // each round's runtimes are closed by the round
            }
        };
    }

    /** Entries/s from a backlog of {@code entries} until the remote holds it; {@code window} 0: the default. */
    private static double run(int window, long rttMs, int entries) {
        VerbatimConfig config = VerbatimConfig.parse("""
                clusters: [{name: a, token: a-token}, {name: b, token: b-token}]
                topics: [{name: t, initialSegments: 1, bucketBudget: 1}]
                replication: {startAt: earliest%s}
                security: {adminToken: bench}
                network: {rtt: %dms}
                """.formatted(window > 0 ? ", maxInFlight: " + window : "", rttMs));
        try (EmbeddedRuntime runtime = EmbeddedRuntime.start(config)) {
            ClusterNode a = runtime.cluster("a");
            Producer producer = a.producer("t", Compression.LZ4);
            List<Message> batch = new ArrayList<>();
            for (int i = 0; i < 10; i++) {
                batch.add(Message.unkeyed(("payload-" + i + "-".repeat(90)).getBytes(StandardCharsets.UTF_8)));
            }
            // Warm the path, then measure a backlog drained from the start.
            producer.send(batch).block();
            runtime.awaitQuiet(Duration.ofSeconds(30)).block();
            long start = System.nanoTime();
            for (int i = 0; i < entries; i++) {
                producer.send(batch).block();
            }
            runtime.awaitQuiet(Duration.ofMinutes(10)).block();
            return entries / ((System.nanoTime() - start) / 1e9);
        }
    }
}
