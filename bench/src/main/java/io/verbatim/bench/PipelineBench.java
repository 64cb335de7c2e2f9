package io.verbatim.bench;

import io.verbatim.embedded.MemorySegmentLog;
import io.verbatim.embedded.MemorySegments;
import io.verbatim.embedded.SendFaults;
import io.verbatim.model.Layout;
import io.verbatim.model.Mutation;
import io.verbatim.model.entry.Entries;
import io.verbatim.model.entry.Entry;
import io.verbatim.model.proto.CompressionType;
import io.verbatim.pipeline.ReplicatorConfig;
import io.verbatim.pipeline.ReplicatorMetrics;
import io.verbatim.pipeline.SegmentReplicator;
import io.verbatim.pipeline.StartAt;
import io.verbatim.pipeline.StoredEntry;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.DoubleSupplier;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * Whole-pipeline ratios, measured side by side in each round (ARCHITECTURE: benchmarks print ratios):
 * P1 verbatim replication ÷ a raw read+append copy of the same bytes; P2 verbatim ÷ always re-batch;
 * verbatim over a 100 ms round trip ÷ without, at the default window of 1000 (context for P4). The
 * workload is Pulsar entries of 100 × 1 KiB messages, LZ4, between two in-memory clusters. {@link Suite}
 * runs them; this main runs only these, printing through the suite's table.
 *
 * <p>Run: {@code java -Xms4g -Xmx4g -XX:+UseParallelGC -cp bench/target/benchmarks.jar
 * io.verbatim.bench.PipelineBench [entries] [rounds]} (a fixed heap keeps GC from deciding the ratios).
 */
final class PipelineBench {
    static final Layout ONE = Layout.initial(1, 4, 0);
    /** Twice the buckets of {@link #ONE}: every entry of one bucket of ONE straddles two. */
    static final Layout TWICE = ONE.apply(Mutation.split(0), 0, 0).layoutOrThrow();

    private PipelineBench() {
    }

    /** P1 in memory: verbatim replication ÷ a raw read+append copy of the same stored bytes. */
    static final Row.Spec P1 = new Row.Spec("P1", "fast-path replication ÷ raw read+append copy of the same bytes,"
            + " in memory (100 × 1 KiB LZ4 per entry)", "verbatim", "raw copy", "entries/s", Goal.atLeast(0.90));
    /** P2 in memory: verbatim ÷ always re-batch (the remote has twice the buckets: every entry straddles one). */
    static final Row.Spec P2 = new Row.Spec("P2", "fast path ÷ always re-batch (MirrorMaker-style), LZ4,"
            + " 100 × 1 KiB per entry, in memory", "verbatim", "always re-batch", "entries/s", Goal.atLeast(10));
    /** Not P4 itself (no link rate here): what a 100 ms round trip costs at the default window, in memory. */
    static final Row.Spec P4_RTT = new Row.Spec("P4/rtt-memory", "verbatim with a 100 ms round trip ÷ without,"
            + " default window, in memory (context for P4, not its link-rate ratio)", "100 ms RTT", "no RTT",
            "entries/s", Goal.none());

    public static void main(String[] args) {
        int entries = args.length > 0 ? Integer.parseInt(args[0]) : 2000;
        int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 5;
        String started = Instant.now().truncatedTo(ChronoUnit.SECONDS).toString();
        long t0 = System.nanoTime();
        List<Row> rows = new ArrayList<>();
        rows.addAll(Suite.measure((sizes, log) -> ratios(entries, 1.0, log), List.of(P1, P2), new Suite.Sizes(false), rounds,
                1, System.out, ""));
        rows.addAll(Suite.measure((sizes, log) -> roundTrip(entries, log), List.of(P4_RTT), new Suite.Sizes(false),
                rounds, 1, System.out, ""));
        System.out.println();
        double elapsed = (System.nanoTime() - t0) / 1e9;
        System.out.print(new Report(Machine.current(), rounds, 1, false, started, elapsed, rows).table());
        System.exit(0);
    }

    /**
     * P1 and P2: per round the raw copy, verbatim and always re-batch, in an order rotating by round, each side run
     * again on fresh logs until its runs took {@code minSeconds} together (one run of the raw copy lasts a few
     * milliseconds: too short to time against whatever else the machine does).
     */
    static Bench ratios(int entries, double minSeconds, PrintStream log) {
        return new InMemory(entries, log) {
            @Override
            public List<Row.Spec> specs() {
                return List.of(P1, P2);
            }

            @Override
            public List<Row.Sample> round(int round) {
                double[] rate = new double[3]; // raw, verbatim, re-batch
                for (int k = 0; k < 3; k++) {
                    int which = Math.floorMod(round + k, 3);
                    rate[which] = sustained(workload.size(), minSeconds, which == 0 ? () -> rawCopy(workload)
                            : () -> replicate(workload, which == 1 ? ONE : TWICE, Duration.ZERO, timer, cpu));
                }
                log.printf(Locale.ROOT, "  raw %.0f, verbatim %.0f, always re-batch %.0f entries/s%n", rate[0], rate[1],
                        rate[2]);
                return List.of(Row.Sample.of(rate[1], rate[0]), Row.Sample.of(rate[1], rate[2]));
            }
        };
    }

    /** Verbatim over a 100 ms round trip and without, the order alternating by round. */
    static Bench roundTrip(int entries, PrintStream log) {
        return new InMemory(entries, log) {
            @Override
            public List<Row.Spec> specs() {
                return List.of(P4_RTT);
            }

            @Override
            public List<Row.Sample> round(int round) {
                double[] rate = new double[2]; // with, without
                for (int k = 0; k < 2; k++) {
                    int which = Math.floorMod(round + k, 2);
                    rate[which] = replicate(workload, ONE, which == 0 ? Duration.ofMillis(100) : Duration.ZERO, timer,
                            cpu);
                }
                log.printf(Locale.ROOT, "  100 ms RTT %.0f, no RTT %.0f entries/s%n", rate[0], rate[1]);
                return List.of(Row.Sample.of(rate[0], rate[1]));
            }
        };
    }

    /** The rate of {@code run} (entries/s of one run of {@code entries}) over runs that took {@code minSeconds}. */
    private static double sustained(int entries, double minSeconds, DoubleSupplier run) {
        double seconds = 0;
        long done = 0;
        do {
            seconds += entries / run.getAsDouble();
            done += entries;
        } while (seconds < minSeconds);
        return done / seconds;
    }

    /** The workload and the schedulers the in-memory benchmarks share. */
    abstract static class InMemory implements Bench {
        final List<ByteBuffer> workload;
        final PrintStream log;
        final Scheduler timer = Schedulers.newParallel("bench-timer", 1);
        final Scheduler cpu = Schedulers.newBoundedElastic(2, 10_000, "bench-cpu");

        InMemory(int entries, PrintStream log) {
            this.workload = workload(entries);
            this.log = log;
            long bytes = workload.stream().mapToLong(ByteBuffer::remaining).sum();
            log.printf(Locale.ROOT, "  workload: %d entries of 100 x 1 KiB (LZ4), %.1f MB stored%n", entries,
                    bytes / 1e6);
        }

        @Override
        public void close() {
            timer.dispose();
            cpu.dispose();
        }
    }

    /** {@code entries} stored entries of 100 × 1 KiB keyed messages, LZ4, each of one bucket of {@link #ONE}. */
    static List<ByteBuffer> workload(int entries) {
        List<ByteBuffer> stored = new ArrayList<>(entries);
        var messages = Workloads.messages(7, 100, 1024);
        // One bucket's keys per entry, as a PIP-486 producer batches; N = 4 at both ends.
        for (int i = 0; i < entries; i++) {
            Entry e = Entries.batch(Workloads.TEMPLATE.toBuilder().setSequenceId(i).build(), messages,
                    CompressionType.LZ4);
            Entry oneBucket = Entry.of(e.metadata().toBuilder().setEntryHashMin(100).setEntryHashMax(200).build(),
                    e.payload());
            stored.add(ByteBuffer.wrap(oneBucket.toByteArray()));
        }
        return stored;
    }

    /** Entries per second to read every entry from one log and append its bytes to another. */
    private static double rawCopy(List<ByteBuffer> workload) {
        System.gc();
        MemorySegments source = load(workload, Schedulers.immediate());
        MemorySegments sink = new MemorySegments("sink", ONE, Schedulers.immediate());
        MemorySegmentLog from = source.log(0);
        MemorySegmentLog to = sink.log(0);
        long start = System.nanoTime();
        for (StoredEntry e : from.entries()) {
            byte[] copy = new byte[e.bytes().remaining()];
            e.bytes().duplicate().get(copy);
            to.append(ByteBuffer.wrap(copy));
        }
        return workload.size() / ((System.nanoTime() - start) / 1e9);
    }

    /** Entries per second through a {@link SegmentReplicator} to a remote with {@code remoteLayout}. */
    private static double replicate(List<ByteBuffer> workload, Layout remoteLayout, Duration rtt, Scheduler timer,
            Scheduler cpu) {
        return replicate(workload, new MemorySegments("remote", remoteLayout, timer), rtt, timer, cpu);
    }

    /** Entries per second through a {@link SegmentReplicator} to {@code remote}, which keeps what it stored. */
    static double replicate(List<ByteBuffer> workload, MemorySegments remote, Duration rtt, Scheduler timer,
            Scheduler cpu) {
        MemorySegments source = load(workload, timer);
        if (!rtt.isZero()) {
            remote.faults(SendFaults.roundTrip(rtt));
        }
        source.log(0).seal();
        System.gc();
        ReplicatorMetrics metrics = new ReplicatorMetrics();
        SegmentReplicator replicator = SegmentReplicator.builder()
                .config(ReplicatorConfig.defaults("source").withStartAt(StartAt.EARLIEST)).topic(source.topic())
                .source(source.layout().segment(0).orElseThrow(), source.log(0))
                .drainGate(source.drainGate()).remote(remote.asRemote()).timer(timer).cpu(cpu).metrics(metrics)
                .build();
        long start = System.nanoTime();
        replicator.run().block(Duration.ofMinutes(10));
        double seconds = (System.nanoTime() - start) / 1e9;
        if (metrics.verbatimEntries() + metrics.rebatchedEntries() != workload.size()) {
            throw new IllegalStateException("replicated " + metrics.verbatimEntries() + " + "
                    + metrics.rebatchedEntries() + " of " + workload.size());
        }
        return workload.size() / seconds;
    }

    /** A source cluster whose segment 0 stores {@code workload}, replicating to "remote" from the start. */
    static MemorySegments load(List<ByteBuffer> workload, Scheduler scheduler) {
        MemorySegments cluster = new MemorySegments("source", ONE, scheduler).replicateTo("remote", StartAt.EARLIEST);
        for (ByteBuffer entry : workload) {
            cluster.log(0).append(entry.duplicate());
        }
        return cluster;
    }
}
