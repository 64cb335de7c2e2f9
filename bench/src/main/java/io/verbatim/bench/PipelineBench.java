package io.verbatim.bench;

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
import io.verbatim.pipeline.memory.MemoryCluster;
import io.verbatim.pipeline.memory.MemorySegmentLog;
import io.verbatim.pipeline.memory.SendFaults;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * Whole-pipeline ratios, measured side by side in one run (ARCHITECTURE: benchmarks print ratios):
 * P1 verbatim replication ÷ a raw read+append copy of the same bytes; P2 verbatim ÷ always re-batch;
 * P4 verbatim over a 100 ms round trip ÷ without, at the default window of 1000. The workload is
 * Pulsar entries of 100 × 1 KiB messages, LZ4, between two in-memory clusters.
 *
 * <p>Run: {@code java -Xms4g -Xmx4g -XX:+UseParallelGC -cp bench/target/benchmarks.jar
 * io.verbatim.bench.PipelineBench [entries] [rounds]} (a fixed heap keeps GC from deciding the ratios).
 */
public final class PipelineBench {
    private static final Layout ONE = Layout.initial(1, 4, 0);

    private PipelineBench() {
    }

    public static void main(String[] args) {
        int entries = args.length > 0 ? Integer.parseInt(args[0]) : 2000;
        int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 5;
        Scheduler timer = Schedulers.newParallel("bench-timer", 1);
        Scheduler cpu = Schedulers.newBoundedElastic(2, 10_000, "bench-cpu");
        List<ByteBuffer> workload = workload(entries);
        long bytes = workload.stream().mapToLong(ByteBuffer::remaining).sum();
        System.out.printf(Locale.ROOT, "workload: %d entries of 100 x 1 KiB (LZ4), %.1f MB stored%n", entries,
                bytes / 1e6);

        System.out.println("warming up");
        rawCopy(workload);
        replicate(workload, ONE, Duration.ZERO, timer, cpu);
        replicate(workload, ONE.apply(Mutation.split(0), 0, 0).layoutOrThrow(), Duration.ZERO, timer, cpu);
        double[] raw = new double[rounds];
        double[] verbatim = new double[rounds];
        double[] rebatch = new double[rounds];
        for (int i = 0; i < rounds; i++) {
            raw[i] = rawCopy(workload);
            verbatim[i] = replicate(workload, ONE, Duration.ZERO, timer, cpu);
            rebatch[i] = replicate(workload, ONE.apply(Mutation.split(0), 0, 0).layoutOrThrow(), Duration.ZERO, timer,
                    cpu);
            System.out.printf(Locale.ROOT, "  round %d: raw %.0f, verbatim %.0f, always re-batch %.0f entries/s%n",
                    i + 1, raw[i], verbatim[i], rebatch[i]);
        }
        double withRtt = replicate(workload, ONE, Duration.ofMillis(100), timer, cpu);
        double noRtt = median(verbatim);

        System.out.println();
        System.out.println("| ratio | numerator (entries/s) | denominator (entries/s) | value |");
        System.out.println("| --- | --- | --- | --- |");
        row("P1 verbatim / raw read+append copy", noRtt, median(raw));
        row("P2 verbatim / always re-batch", noRtt, median(rebatch));
        row("P4 verbatim at 100 ms RTT / no RTT (window 1000)", withRtt, noRtt);
        System.out.printf(Locale.ROOT, "%nverbatim: %.0f MB/s of stored entries (median of %d rounds)%n",
                noRtt * bytes / entries / 1e6, rounds);
        timer.dispose();
        cpu.dispose();
    }

    private static void row(String name, double numerator, double denominator) {
        System.out.printf(Locale.ROOT, "| %s | %.0f | %.0f | %.3f |%n", name, numerator, denominator,
                numerator / denominator);
    }

    private static List<ByteBuffer> workload(int entries) {
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
        MemoryCluster source = load(workload, Schedulers.immediate());
        MemoryCluster sink = new MemoryCluster("sink", ONE, Schedulers.immediate());
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
        MemoryCluster source = load(workload, timer);
        MemoryCluster remote = new MemoryCluster("remote", remoteLayout, timer);
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

    private static MemoryCluster load(List<ByteBuffer> workload, Scheduler scheduler) {
        MemoryCluster cluster = new MemoryCluster("source", ONE, scheduler).replicateTo("remote", StartAt.EARLIEST);
        for (ByteBuffer entry : workload) {
            cluster.log(0).append(entry.duplicate());
        }
        return cluster;
    }

    private static double median(double[] values) {
        double[] sorted = values.clone();
        Arrays.sort(sorted);
        return sorted[sorted.length / 2];
    }
}
