package io.verbatim.bench;

import com.sun.management.GcInfo;
import io.verbatim.budget.InFlightBudget;
import io.verbatim.model.Layout;
import io.verbatim.pipeline.ReplicatorConfig;
import io.verbatim.pipeline.ReplicatorMetrics;
import io.verbatim.pipeline.SegmentReplicator;
import io.verbatim.pipeline.StartAt;
import io.verbatim.testkit.SimulatedLink;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.lang.management.MemoryUsage;
import java.time.Duration;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * P8's child JVM (run under {@code -Xmx64m} by {@link BacklogBench}): one replicator drains a synthetic
 * backlog ({@link Synthetic}: made as read, dropped by the remote) over a link with a round trip, so that
 * its window fills; prints one {@code P8 ...} line with what it replicated and the heap it took: the peak
 * used (sampled every 2 ms) and the peak live (the heap right after a full collection, about every 0.2 s).
 *
 * <p>Arguments: backlog bytes, window bytes, broker budget bytes, RTT in ms, and optionally a window in
 * entries (the default's otherwise; 1000 with a window of bytes at its maximum is the old, entry-counted one).
 */
final class BacklogChild {
    private BacklogChild() {
    }

    /** Heap bytes the last full collection left, from its own figures (not a later, racy reading). */
    private static long liveAfterLastFullGc() {
        Set<String> heapPools = ManagementFactory.getMemoryPoolMXBeans().stream()
                .filter(p -> p.getType() == MemoryType.HEAP).map(MemoryPoolMXBean::getName).collect(Collectors.toSet());
        long live = -1;
        for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
            if (gc instanceof com.sun.management.GarbageCollectorMXBean sun && !gc.getName().contains("Young")) {
                GcInfo info = sun.getLastGcInfo();
                if (info != null) {
                    live = info.getMemoryUsageAfterGc().entrySet().stream().filter(e -> heapPools.contains(e.getKey()))
                            .mapToLong(e -> e.getValue().getUsed()).sum();
                }
            }
        }
        return live;
    }

    public static void main(String[] args) throws Exception {
        long backlog = Long.parseLong(args[0]);
        long window = Long.parseLong(args[1]);
        long broker = Long.parseLong(args[2]);
        Duration rtt = Duration.ofMillis(Long.parseLong(args[3]));
        byte[] template = LinkBench.template(100);
        long count = (backlog + template.length - 1) / template.length;
        AtomicLong peakUsed = new AtomicLong();
        AtomicLong peakLive = new AtomicLong();
        InFlightBudget budget = InFlightBudget.of(broker);
        AtomicLong peakInFlight = new AtomicLong();
        Thread sampler = new Thread(() -> {
            for (long i = 1; !Thread.currentThread().isInterrupted(); i++) {
                MemoryUsage heap = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage();
                peakUsed.accumulateAndGet(heap.getUsed(), Math::max);
                peakInFlight.accumulateAndGet(budget.used(), Math::max);
                if (i % 100 == 0) {
                    // what is live: the heap as a full collection left it, about every 0.2 s
                    System.gc();
                    peakLive.accumulateAndGet(liveAfterLastFullGc(), Math::max);
                }
                try {
                    Thread.sleep(2);
                } catch (InterruptedException e) {
                    return;
                }
            }
        }, "heap-sampler");
        sampler.setDaemon(true);
        sampler.start();
        Scheduler timer = Schedulers.newParallel("p8-timer", 1);
        Scheduler cpu = Schedulers.newBoundedElastic(2, 10_000, "p8-cpu");
        Layout one = Layout.initial(1, 4, 0);
        Synthetic.CountingRemote remote = new Synthetic.CountingRemote(one);
        ReplicatorMetrics metrics = new ReplicatorMetrics();
        ReplicatorConfig config = ReplicatorConfig.defaults("source").withStartAt(StartAt.EARLIEST)
                .withMaxInFlightBytes(window);
        if (args.length > 4) {
            config = config.withMaxInFlight(Integer.parseInt(args[4]));
        }
        SegmentReplicator replicator = SegmentReplicator.builder().config(config).topic("persistent://public/default/p8")
                .source(one.segment(0).orElseThrow(), Synthetic.log(template, count))
                .drainGate((segment, cursor) -> Mono.empty())
                .remote(new SimulatedLink(10_000_000_000L, rtt, timer).over(remote))
                .inFlightBudget(budget).timer(timer).cpu(cpu).metrics(metrics).build();
        long start = System.nanoTime();
        boolean completed;
        String why = "";
        try {
            replicator.run().block(Duration.ofMinutes(30));
            completed = metrics.verbatimEntries() == count;
        } catch (OutOfMemoryError e) {
            completed = false;
            why = "OutOfMemoryError: " + String.valueOf(e.getMessage());
        }
        double seconds = (System.nanoTime() - start) / 1e9;
        sampler.interrupt();
        long maxHeap = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getMax();
        String gcs = ManagementFactory.getGarbageCollectorMXBeans().stream().map(GarbageCollectorMXBean::getName)
                .collect(Collectors.joining("+")).replace(' ', '_');
        System.out.printf(Locale.ROOT, "P8 completed=%b bytes=%d entries=%d of=%d entrySize=%d maxHeap=%d peakUsed=%d"
                + " peakLive=%d peakInFlight=%d window=%d broker=%d seconds=%.2f gc=%s why=%s%n", completed,
                count * template.length, metrics.verbatimEntries(), count, template.length, maxHeap, peakUsed.get(),
                peakLive.get(), peakInFlight.get(), window, broker, seconds, gcs, why);
        System.out.flush();
        timer.dispose();
        cpu.dispose();
        System.exit(completed ? 0 : 3);
    }
}
