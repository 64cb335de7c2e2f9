package io.verbatim.bench;

import io.verbatim.model.Layout;
import io.verbatim.model.entry.Entries;
import io.verbatim.model.entry.Entry;
import io.verbatim.model.proto.CompressionType;
import io.verbatim.pipeline.ReplicatorConfig;
import io.verbatim.pipeline.ReplicatorMetrics;
import io.verbatim.pipeline.SegmentReplicator;
import io.verbatim.pipeline.StartAt;
import io.verbatim.testkit.SimulatedLink;
import java.io.PrintStream;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * P4: one replicator over a simulated link of 1 Gbit/s at 10, 100 and 250 ms RTT, default settings:
 * replicated bytes/s ÷ the link rate. The source makes its entries as they are read and the remote drops
 * what it takes ({@link Synthetic}), so only the link and the replicator decide. Each round also runs the
 * old window of 1000 entries for contrast (in the round's note). Real time: the link's clock is the
 * bench's.
 *
 * <p>The replicated rate is bytes ÷ (elapsed − RTT): any transfer of B bytes over a link of rate R takes at
 * least B/R + RTT (the last receipt comes one round trip after the last byte left), so a replicator that
 * keeps the link busy scores 1.0.
 *
 * <p>Run: {@code java -Xms2g -Xmx2g -cp bench/target/benchmarks.jar io.verbatim.bench.LinkBench [MB] [rounds]}
 */
final class LinkBench {
    /** 1 Gbit/s. */
    static final long RATE = 125_000_000;
    static final int[] RTTS_MS = {10, 100, 250};
    private static final Layout ONE = Layout.initial(1, 4, 0);
    /** Messages of 1 KiB per entry: a small batch (about 4.6 KiB LZ4), where a window of entries is smallest. */
    static final int MESSAGES_PER_ENTRY = 10;

    private LinkBench() {
    }

    static Row.Spec spec(int rttMs) {
        return new Row.Spec("P4/" + rttMs + "ms", "one replicator over a simulated 1 Gbit/s link, " + rttMs
                + " ms RTT ÷ the link rate, default settings", "replicated", "link rate", "bytes/s",
                Goal.atLeast(0.90));
    }

    static final List<Row.Spec> SPECS = List.of(spec(10), spec(100), spec(250));

    public static void main(String[] args) {
        long mb = args.length > 0 ? Long.parseLong(args[0]) : 125;
        int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 5;
        String started = Instant.now().truncatedTo(ChronoUnit.SECONDS).toString();
        long t0 = System.nanoTime();
        List<Row> rows = Suite.measure((sizes, log) -> ratios(mb * 1_000_000, log), SPECS, new Suite.Sizes(false),
                rounds, 1, System.out, "");
        System.out.println();
        System.out.print(new Report(Machine.current(), rounds, 1, false, started, (System.nanoTime() - t0) / 1e9,
                rows).table());
        System.exit(0);
    }

    /** The rows, each round every RTT with the default window and with the old one, the order rotating. */
    static Bench ratios(long workloadBytes, PrintStream log) {
        byte[] template = template();
        long count = Math.max(1, workloadBytes / template.length);
        log.printf(Locale.ROOT, "  workload: %,d entries of %d x 1 KiB (LZ4, %,d bytes), %.0f MB per run;"
                + " BDP at 250 ms %.1f MB%n", count, MESSAGES_PER_ENTRY, template.length, count * template.length / 1e6,
                RATE * 0.25 / 1e6);
        Scheduler timer = Schedulers.newParallel("link-timer", 1);
        Scheduler cpu = Schedulers.newBoundedElastic(2, 10_000, "link-cpu");
        return new Bench() {
            @Override
            public List<Row.Spec> specs() {
                return SPECS;
            }

            @Override
            public List<Row.Sample> round(int round) {
                List<Row.Sample> out = new ArrayList<>();
                for (int i = 0; i < RTTS_MS.length; i++) {
                    Duration rtt = Duration.ofMillis(RTTS_MS[Math.floorMod(i, RTTS_MS.length)]);
                    double[] rate = new double[2]; // default, old window of 1000 entries
                    for (int k = 0; k < 2; k++) {
                        int which = Math.floorMod(round + k, 2);
                        ReplicatorConfig config = ReplicatorConfig.defaults("source").withStartAt(StartAt.EARLIEST);
                        if (which == 1) {
                            config = config.withMaxInFlight(1000)
                                    .withMaxInFlightBytes(ReplicatorConfig.MAX_IN_FLIGHT_BYTES);
                        }
                        rate[which] = replicate(config, rtt, template, count, timer, cpu);
                    }
                    log.printf(Locale.ROOT, "  %d ms: default %.1f MB/s (%.3f), window of 1000 entries %.1f MB/s"
                            + " (%.3f) of %.0f MB/s%n", RTTS_MS[i], rate[0] / 1e6, rate[0] / RATE, rate[1] / 1e6,
                            rate[1] / RATE, RATE / 1e6);
                    out.add(new Row.Sample(rate[0], RATE, String.format(Locale.ROOT,
                            "1000-entry window (old default): %.3f", rate[1] / RATE)));
                }
                return out;
            }

            @Override
            public void close() {
                timer.dispose();
                cpu.dispose();
            }
        };
    }

    /** One stored entry of {@link #MESSAGES_PER_ENTRY} × 1 KiB LZ4 that fits the remote's bucket. */
    static byte[] template() {
        return template(MESSAGES_PER_ENTRY);
    }

    static byte[] template(int messages) {
        Entry e = Entries.batch(Workloads.TEMPLATE, Workloads.messages(7, messages, 1024), CompressionType.LZ4);
        return Entry.of(e.metadata().toBuilder().setEntryHashMin(100).setEntryHashMax(200).build(), e.payload())
                .toByteArray();
    }

    /** Replicated bytes/s over a fresh link: bytes ÷ (elapsed − RTT). */
    static double replicate(ReplicatorConfig config, Duration rtt, byte[] template, long count, Scheduler timer,
            Scheduler cpu) {
        Synthetic.CountingRemote remote = new Synthetic.CountingRemote(ONE);
        SimulatedLink link = new SimulatedLink(RATE, rtt, timer);
        ReplicatorMetrics metrics = new ReplicatorMetrics();
        SegmentReplicator replicator = SegmentReplicator.builder().config(config).topic("persistent://public/default/p4")
                .source(ONE.segment(0).orElseThrow(), Synthetic.log(template, count))
                .drainGate((segment, cursor) -> Mono.empty()).remote(link.over(remote)).timer(timer).cpu(cpu)
                .metrics(metrics).build();
        long start = System.nanoTime();
        replicator.run().block(Duration.ofMinutes(10));
        double seconds = (System.nanoTime() - start) / 1e9;
        if (metrics.verbatimEntries() != count || remote.entries() != count) {
            throw new IllegalStateException("replicated " + metrics.verbatimEntries() + " of " + count + " entries");
        }
        return count * (double) template.length / (seconds - rtt.toNanos() / 1e9);
    }
}
