package io.verbatim.bench;

import io.verbatim.embedded.MemorySegments;
import io.verbatim.pipeline.StoredEntry;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import reactor.core.scheduler.Schedulers;

/**
 * P3: the replicator's slow path ÷ a bare loop doing only the work re-batching needs, over the same stored
 * entries, side by side in each round (the order alternating by round). The slow path is a
 * {@code SegmentReplicator} run end to end in memory to a remote with twice the buckets, so every entry
 * straddles two and is re-batched (P2's always-re-batch run); the bare loop is {@link BareRebatch}. Each
 * round checks that both stored the same bytes in the same destination logs, so neither side can skip
 * work, and notes what each side cost in CPU per entry (the slow path runs on two threads, the bare loop on
 * one; entries/s is the measure). The workload is P2's: entries of 100 × 1 KiB keyed messages, LZ4.
 *
 * <p>Run: {@code java -Xms2g -Xmx2g -XX:+UseParallelGC -cp bench/target/benchmarks.jar
 * io.verbatim.bench.SlowPathBench [entries] [rounds]}, or through {@link Suite} with {@code --only P3}.
 */
final class SlowPathBench {
    /** P3 as issue 15 words it. */
    static final Row.Spec P3 = new Row.Spec("P3", "slow path ÷ bare decompress + regroup + compress of the same"
            + " entries", "slow path", "bare decompress+regroup+compress", "entries/s", Goal.atLeast(0.70));
    /** The name PipelineBench's replicator stamps as {@code replicated_from}. */
    private static final String LOCAL = "source";

    private SlowPathBench() {
    }

    public static void main(String[] args) {
        int entries = args.length > 0 ? Integer.parseInt(args[0]) : 2000;
        int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 5;
        String started = Instant.now().truncatedTo(ChronoUnit.SECONDS).toString();
        long t0 = System.nanoTime();
        List<Row> rows = Suite.measure((sizes, log) -> ratios(entries, log), List.of(P3), new Suite.Sizes(false),
                rounds, 1, System.out, "");
        System.out.println();
        double elapsed = (System.nanoTime() - t0) / 1e9;
        System.out.print(new Report(Machine.current(), rounds, 1, false, started, elapsed, rows).table());
        System.exit(0);
    }

    /** P3 over {@code entries} stored entries. */
    static Bench ratios(int entries, PrintStream log) {
        return new PipelineBench.InMemory(entries, log) {
            /** The entries as the replicator's source stores them: the same positions, the same bytes. */
            final List<StoredEntry> stored = PipelineBench.load(workload, Schedulers.immediate()).log(0).entries();

            @Override
            public List<Row.Spec> specs() {
                return List.of(P3);
            }

            @Override
            public List<Row.Sample> round(int round) {
                double slow = 0;
                double bare = 0;
                long slowCpu = 0;
                long bareCpu = 0;
                Map<Long, List<ByteBuffer>> slowLogs = Map.of();
                Map<Long, List<ByteBuffer>> bareLogs = Map.of();
                for (int k = 0; k < 2; k++) {
                    long cpu0 = cpuNanos();
                    if (Math.floorMod(round + k, 2) == 0) {
                        MemorySegments remote = new MemorySegments("remote", PipelineBench.TWICE, timer);
                        slow = PipelineBench.replicate(workload, remote, Duration.ZERO, timer, cpu);
                        slowCpu = cpuNanos() - cpu0;
                        slowLogs = logs(remote);
                    } else {
                        bareLogs = new TreeMap<>();
                        bare = bare(stored, bareLogs);
                        bareCpu = cpuNanos() - cpu0;
                    }
                }
                if (!slowLogs.equals(bareLogs)) {
                    throw new IllegalStateException("the slow path and the bare loop stored different bytes: "
                            + summary(slowLogs) + " against " + summary(bareLogs));
                }
                long bytes = stored.stream().mapToLong(e -> e.bytes().remaining()).sum();
                String cpuNote = String.format(Locale.ROOT, "CPU %.0f vs %.0f us per entry", slowCpu / 1e3 / stored.size(),
                        bareCpu / 1e3 / stored.size());
                log.printf(Locale.ROOT, "  slow path %.0f, bare %.0f entries/s (%.0f, %.0f MB/s stored), %s; %s%n", slow,
                        bare, slow * bytes / stored.size() / 1e6, bare * bytes / stored.size() / 1e6, cpuNote,
                        summary(bareLogs));
                return List.of(new Row.Sample(slow, bare, cpuNote));
            }
        };
    }

    /**
     * Entries per second through {@link BareRebatch} to a remote of {@link PipelineBench#TWICE}; the parts
     * are appended to {@code logs} by destination segment, as the remote stores them.
     */
    static double bare(List<StoredEntry> stored, Map<Long, List<ByteBuffer>> logs) {
        System.gc();
        long start = System.nanoTime();
        BareRebatch rebatch = new BareRebatch(PipelineBench.TWICE, PipelineBench.ONE.segment(0).orElseThrow()
                .range().start(), LOCAL);
        for (StoredEntry e : stored) {
            for (BareRebatch.Part part : rebatch.parts(e)) {
                logs.computeIfAbsent(part.segmentId(), id -> new ArrayList<>()).add(ByteBuffer.wrap(part.bytes()));
            }
        }
        return stored.size() / ((System.nanoTime() - start) / 1e9);
    }

    /**
     * CPU time so far of this JVM's live threads (the GC's not included): what a side cost in CPU, beside
     * its entries/s, which a busy machine's other processes move more.
     */
    private static long cpuNanos() {
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        long sum = 0;
        for (long id : threads.getAllThreadIds()) {
            sum += Math.max(0, threads.getThreadCpuTime(id));
        }
        return sum;
    }

    /** What {@code cluster} stores, by segment: the segments that hold something. */
    private static Map<Long, List<ByteBuffer>> logs(MemorySegments cluster) {
        Map<Long, List<ByteBuffer>> logs = new TreeMap<>();
        cluster.contents().forEach((id, entries) -> {
            if (!entries.isEmpty()) {
                logs.put(id, entries.stream().map(StoredEntry::bytes).toList());
            }
        });
        return logs;
    }

    private static String summary(Map<Long, List<ByteBuffer>> logs) {
        StringBuilder s = new StringBuilder();
        logs.forEach((id, entries) -> s.append(s.isEmpty() ? "" : ", ").append(entries.size()).append(" parts (")
                .append(entries.stream().mapToLong(ByteBuffer::remaining).sum() / 1000).append(" kB) in segment ")
                .append(id));
        return s.toString();
    }
}
