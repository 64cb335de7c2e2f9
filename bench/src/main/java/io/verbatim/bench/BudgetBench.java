package io.verbatim.bench;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.verbatim.budget.BrokerBudget;
import io.verbatim.budget.BudgetConfig;
import io.verbatim.budget.BudgetMetricsBinder;
import io.verbatim.budget.SlowPathBudget;
import io.verbatim.model.Layout;
import io.verbatim.model.Mutation;
import java.io.PrintStream;
import java.util.List;
import java.util.Locale;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * P5, the slow-path budget, in real time on real schedulers (it is a throughput): real
 * {@link io.verbatim.pipeline.SegmentReplicator}s in memory ({@link ReplicatorGroup}), each with its own
 * source log, its own remote and an endless backlog, sharing one {@link BrokerBudget} of {@link #RATE}
 * bytes/s, far below what the two cores re-batch (each round measures that too), so that the budget and not
 * the CPU binds. A remote with twice the buckets makes every entry re-batch; one with the source's layout
 * takes every entry verbatim. Every measurement starts on a fresh budget, its bucket full, and begins once
 * the bucket's initial burst is spent (the burst is excluded, not subtracted). Per round:
 * <ul>
 *   <li>P5/budget and P5/fairness: {@link #SLOW_REPLICATORS} slow-path replicators alone over one window:
 *       their re-batched bytes/s ÷ the budget's, and Jain's index over each one's re-batched bytes/s;</li>
 *   <li>P5/isolation: fast-path replicators, one per core so that the fast path alone keeps the CPU busy and
 *       whatever the slow path takes shows, run on while the slow-path replicators are started and stopped:
 *       slices idle and saturated in turn (ABBA ...), a window of each in all, so that a
 *       machine whose other load drifts weighs on both alike.</li>
 * </ul>
 * Entries are {@link #MESSAGES_PER_ENTRY} × 1 KiB, LZ4 (about 7 kB stored): the budget then grants some
 * 290 entries a second, so each of the hundred replicators gets enough of them in a window (about 11) for
 * Jain's index to measure the budget's fairness rather than the rounding of a few entries.
 */
final class BudgetBench implements Bench {
    static final Row.Spec BUDGET = new Row.Spec("P5/budget", "re-batched bytes/s ÷ budget", "re-batched", "budget",
            "bytes/s", Goal.between(0.95, 1.05));
    static final Row.Spec FAIRNESS = new Row.Spec("P5/fairness", "Jain fairness over 100 replicators", "(Σx)²",
            "n·Σx²", "", Goal.atLeast(0.95));
    static final Row.Spec ISOLATION = new Row.Spec("P5/isolation", "fast path under slow-path saturation ÷ idle",
            "saturated", "idle", "entries/s", Goal.atLeast(0.95));
    static final List<Row.Spec> SPECS = List.of(BUDGET, FAIRNESS, ISOLATION);

    /**
     * The budget, in compressed bytes per second (every codec weighing 1): 2 MB/s, about 1 % of what the
     * slow path re-batches unbudgeted on two cores (100-200 MB/s here; each round measures it, in the note), so
     * the budget binds with a wide margin even on a shared machine; a rate an operator could give a broker
     * whose fast path must keep its 95 %.
     */
    static final long RATE = 2_000_000;
    static final int SLOW_REPLICATORS = 100;
    static final int MESSAGES_PER_ENTRY = 10;
    /** Twice the buckets of the source's layout: every entry straddles two and re-batches. */
    private static final Layout TWICE = ReplicatorGroup.ONE.apply(Mutation.split(0), 0, 0).layoutOrThrow();
    /** The budget: {@link #RATE}, a burst of one second of it, the default slots. */
    private static final BudgetConfig CONFIG = BudgetConfig.of(RATE);
    private static final double BURST_WAIT_LIMIT_SECONDS = 60;
    /** The threads of the fast path (its replicators and its timer) and of the slow path (timer, re-batch). */
    private static final List<String> FAST_THREADS = List.of("p5-fast");
    private static final List<String> SLOW_THREADS = List.of("p5-timer", "p5-rebatch");

    private final double windowSeconds;
    /** Isolation's slices per round, half idle and half saturated: four per second of window, at least 4. */
    private final int slices;
    private final double leadSeconds;
    /** A pause between isolation's slices: a stopped slow path's last re-batch ends, a new one's grants begin. */
    private final double settleSeconds;
    private final PrintStream log;
    private final byte[] template = LinkBench.template(MESSAGES_PER_ENTRY);
    private final int fastReplicators = Runtime.getRuntime().availableProcessors();
    // As the runtime has them (Threads): a timer of two threads that is also the budget's clock, two re-batch threads.
    private final Scheduler timer = Schedulers.newParallel("p5-timer", 2, true);
    private final Scheduler cpu = Schedulers.newBoundedElastic(2, 10_000, "p5-rebatch", 60, true);
    /** Where each fast-path replicator runs: its reads and sends are synchronous, so one thread each. */
    private final Scheduler fast = Schedulers.newParallel("p5-fast", fastReplicators, true);
    /**
     * The fast path's own timer, for its send timeouts. Shared with the slow path, the isolation ratio came
     * out at 1.1 to 1.5: each verbatim send schedules a timeout and cancels it at once (the remote answers at
     * once), and on an otherwise empty timer queue that schedule wakes the timer's thread; the budget's
     * wake-ups kept the queue non-empty and so made the fast path some 20 % faster, hiding what the slow
     * path's CPU costs it. Apart, the fast path's timer is the same in both phases.
     */
    private final Scheduler fastTimer = Schedulers.newParallel("p5-fast-timer", 2, true);

    private BudgetBench(double windowSeconds, PrintStream log) {
        this.windowSeconds = windowSeconds;
        this.slices = Math.max(4, 4 * (int) Math.round(windowSeconds));
        this.leadSeconds = Math.min(0.5, windowSeconds / 4);
        this.settleSeconds = Math.min(0.1, windowSeconds / 16);
        this.log = log;
        log.printf(Locale.ROOT, "  entries of %d x 1 KiB LZ4, %,d bytes stored; budget %.1f MB/s (burst %.1f MB, %d"
                + " slots); %d slow-path replicators; %d fast-path replicator(s); window %.2f s%n", MESSAGES_PER_ENTRY,
                template.length, RATE / 1e6, CONFIG.burstBytes() / 1e6, CONFIG.maxConcurrentRebatches(),
                SLOW_REPLICATORS, fastReplicators, windowSeconds);
    }

    /** P5's three rows, each round measuring over windows of {@code windowSeconds}. */
    static Bench ratios(double windowSeconds, PrintStream log) {
        return new BudgetBench(windowSeconds, log);
    }

    @Override
    public List<Row.Spec> specs() {
        return SPECS;
    }

    @Override
    public List<Row.Sample> round(int round) throws InterruptedException {
        double unbudgeted = unbudgetedRate();
        SlowPath alone = slowPathAlone();
        double[] perReplicator = alone.perReplicator();
        double sum = 0;
        double squares = 0;
        double min = Double.POSITIVE_INFINITY;
        double max = 0;
        for (double x : perReplicator) {
            sum += x;
            squares += x * x;
            min = Math.min(min, x);
            max = Math.max(max, x);
        }
        Isolation iso = isolation(round);
        log.printf(Locale.ROOT, "  unbudgeted slow path %.1f MB/s; slow path alone %.3f MB/s of %.3f (per replicator"
                + " %.1f..%.1f kB/s); fast path %.0f entries/s idle, %.0f saturated (slow path then %.3f MB/s)%n",
                unbudgeted / 1e6, sum / 1e6, RATE / 1e6, min / 1e3, max / 1e3, iso.idle(), iso.saturated(),
                iso.slowPath() / 1e6);
        log.println("  " + iso.cpuNote());
        return List.of(
                new Row.Sample(sum, RATE, String.format(Locale.ROOT, "the budget is %.1f %% of the unbudgeted slow path"
                        + " (%.1f MB/s); the budget's own count: %.3f of it granted", 100.0 * RATE / unbudgeted,
                        unbudgeted / 1e6, alone.granted() / RATE)),
                new Row.Sample(sum * sum, perReplicator.length * squares, String.format(Locale.ROOT,
                        "per replicator %.1f..%.1f kB/s", min / 1e3, max / 1e3)),
                new Row.Sample(iso.saturated(), iso.idle(), String.format(Locale.ROOT,
                        "slow path at %.3f of the budget while saturated; %s", iso.slowPath() / RATE,
                        iso.cpuNote())));
    }

    /** Each slow-path replicator's re-batched bytes/s over the window, and what the budget granted over it. */
    record SlowPath(double[] perReplicator, double granted) {
    }

    /**
     * The slow-path replicators alone on a fresh budget, its burst spent: what each re-batched over the
     * window (counted by the replicators as they acknowledge), and what the budget granted over it (its
     * own counter, a cross-check).
     */
    private SlowPath slowPathAlone() throws InterruptedException {
        System.gc();
        BrokerBudget budget = new BrokerBudget(CONFIG, timer);
        SimpleMeterRegistry meters = new SimpleMeterRegistry();
        new BudgetMetricsBinder(budget).bindTo(meters);
        FunctionCounter granted = meters.get(BudgetMetricsBinder.GRANTED).functionCounter();
        try (ReplicatorGroup slow = slowPath(budget)) {
            spendBurst(slow, leadSeconds);
            long[] before = slow.rebatchedBytes();
            double granted0 = granted.count();
            long t0 = System.nanoTime();
            sleep(windowSeconds);
            long[] after = slow.rebatchedBytes();
            double granted1 = granted.count();
            double seconds = (System.nanoTime() - t0) / 1e9;
            slow.check();
            double[] rates = new double[after.length];
            for (int i = 0; i < rates.length; i++) {
                rates[i] = (after[i] - before[i]) / seconds;
            }
            return new SlowPath(rates, (granted1 - granted0) / seconds);
        }
    }

    /** The fast path's entries/s idle and saturated, and the slow path's re-batched bytes/s while saturated. */
    record Isolation(double idle, double saturated, double slowPath, double fastCpuIdle, double fastCpuSaturated,
            double slowCpu) {
        /**
         * The CPU in cores (the threads' CPU time per second of the slices), and the fast path's entries per
         * second of its own CPU, saturated ÷ idle: what the slow path costs it beyond the CPU it takes (cache,
         * context switches), apart from how much of the machine the fast path got, which on a shared machine
         * the other load decides.
         */
        String cpuNote() {
            double perCpu = saturated / fastCpuSaturated / (idle / fastCpuIdle);
            return String.format(Locale.ROOT, "CPU in cores: fast path %.3f idle, %.3f saturated; slow path %.3f;"
                    + " fast-path entries per CPU second, saturated ÷ idle: %.3f", fastCpuIdle, fastCpuSaturated,
                    slowCpu, perCpu);
        }
    }

    /**
     * One run of the fast-path replicators, measured over {@code slices} slices, idle and saturated in the
     * order ABBA ABBA ... (BAAB ... in odd rounds), a window of each in all. A saturated slice starts a fresh
     * budget and slow path, waits until its burst is spent, and stops it after; an idle slice starts a moment
     * after the slow path stopped.
     */
    private Isolation isolation(int round) throws InterruptedException {
        System.gc();
        double[] entries = new double[2]; // idle, saturated
        double[] seconds = new double[2];
        double slowBytes = 0;
        double[] fastCpu = new double[2];
        double slowCpu = 0;
        try (ReplicatorGroup fastPath = new ReplicatorGroup("p5-fast", fastReplicators, ReplicatorGroup.ONE,
                template, SlowPathBudget.unlimited(), fastTimer, cpu, fast)) {
            sleep(leadSeconds);
            for (int slice = 0; slice < slices; slice++) {
                int saturated = Math.floorMod((slice + 1) / 2 + round, 2);
                ReplicatorGroup slow = saturated == 1 ? slowPath(new BrokerBudget(CONFIG, timer)) : null;
                try {
                    if (slow != null) {
                        spendBurst(slow, settleSeconds);
                    } else {
                        sleep(settleSeconds);
                    }
                    long fast0 = fastPath.verbatimEntries();
                    long slow0 = slow == null ? 0 : slow.rebatchedBytesTotal();
                    long fastCpu0 = ThreadCpu.nanos(FAST_THREADS);
                    long slowCpu0 = ThreadCpu.nanos(SLOW_THREADS);
                    long t0 = System.nanoTime();
                    sleep(windowSeconds / (slices / 2));
                    long fast1 = fastPath.verbatimEntries();
                    long slow1 = slow == null ? 0 : slow.rebatchedBytesTotal();
                    fastCpu[saturated] += ThreadCpu.nanos(FAST_THREADS) - fastCpu0;
                    if (slow != null) {
                        slowCpu += ThreadCpu.nanos(SLOW_THREADS) - slowCpu0;
                    }
                    seconds[saturated] += (System.nanoTime() - t0) / 1e9;
                    entries[saturated] += fast1 - fast0;
                    slowBytes += slow1 - slow0;
                    if (slow != null) {
                        slow.check();
                    }
                } finally {
                    if (slow != null) {
                        slow.close();
                    }
                }
            }
            fastPath.check();
            if (fastPath.rebatchedEntries() > 0) {
                throw new IllegalStateException("the fast-path replicators re-batched");
            }
        }
        return new Isolation(entries[0] / seconds[0], entries[1] / seconds[1], slowBytes / seconds[1],
                fastCpu[0] / 1e9 / seconds[0], fastCpu[1] / 1e9 / seconds[1], slowCpu / 1e9 / seconds[1]);
    }

    private ReplicatorGroup slowPath(SlowPathBudget budget) {
        return new ReplicatorGroup("p5-slow", SLOW_REPLICATORS, TWICE, template, budget, timer, cpu, cpu);
    }

    /**
     * Waits until the replicators have re-batched more than the bucket's initial burst (so every token of
     * it has been granted, and from now on only the refill is), then {@code settle} seconds more.
     */
    private void spendBurst(ReplicatorGroup slow, double settle) throws InterruptedException {
        long deadline = System.nanoTime() + (long) (BURST_WAIT_LIMIT_SECONDS * 1e9);
        while (slow.rebatchedBytesTotal() <= CONFIG.burstBytes()) {
            slow.check();
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("the slow path did not spend the budget's burst in "
                        + BURST_WAIT_LIMIT_SECONDS + " s");
            }
            Thread.sleep(5);
        }
        sleep(settle);
    }

    /** What the slow-path replicators re-batch without a budget: what the CPU allows, in bytes/s. */
    private double unbudgetedRate() throws InterruptedException {
        try (ReplicatorGroup slow = slowPath(SlowPathBudget.unlimited())) {
            sleep(leadSeconds);
            long before = slow.rebatchedBytesTotal();
            long t0 = System.nanoTime();
            sleep(windowSeconds / 4);
            long after = slow.rebatchedBytesTotal();
            double seconds = (System.nanoTime() - t0) / 1e9;
            slow.check();
            return (after - before) / seconds;
        }
    }

    private static void sleep(double seconds) throws InterruptedException {
        Thread.sleep(Math.round(seconds * 1000));
    }

    @Override
    public void close() {
        timer.dispose();
        cpu.dispose();
        fast.dispose();
        fastTimer.dispose();
    }
}
