package io.verbatim.budget;

import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Consumer;
import reactor.core.scheduler.Scheduler;

/**
 * Plain counters of the budget; {@link BudgetMetricsBinder} shows them to Micrometer. Utilization is
 * the granted cost over the last full window of {@link #WINDOW_NANOS} divided by what the rate allowed.
 */
final class BudgetMetrics {
    static final long WINDOW_NANOS = TimeUnit.SECONDS.toNanos(10);

    private final BudgetConfig config;
    private final Scheduler clock;
    private final LongAdder grantedCost = new LongAdder();
    private final LongAdder grants = new LongAdder();
    private final Map<String, LongAdder> throttledNanos = new ConcurrentHashMap<>();
    private volatile Consumer<String> onNewReplicator = id -> { };
    private long windowStart = -1;
    private long windowCost;
    private double lastUtilization;

    BudgetMetrics(BudgetConfig config, Scheduler clock) {
        this.config = config;
        this.clock = clock;
    }

    void granted(String replicatorId, long cost, long waitedNanos) {
        grantedCost.add(cost);
        grants.increment();
        throttledNanos.computeIfAbsent(replicatorId, id -> {
            onNewReplicator.accept(id);
            return new LongAdder();
        }).add(waitedNanos);
        synchronized (this) {
            roll();
            windowCost += cost;
        }
    }

    private void roll() {
        long now = clock.now(TimeUnit.NANOSECONDS);
        if (windowStart < 0) {
            windowStart = now;
        }
        while (now - windowStart >= WINDOW_NANOS) {
            lastUtilization = windowCost / (config.bytesPerSecond() * (WINDOW_NANOS / 1e9));
            windowCost = 0;
            windowStart += WINDOW_NANOS;
        }
    }

    /** Weighted bytes granted so far. */
    long grantedCost() {
        return grantedCost.sum();
    }

    long grants() {
        return grants.sum();
    }

    /** Time {@code replicatorId} spent waiting for the budget, in nanoseconds. */
    long throttledNanos(String replicatorId) {
        LongAdder t = throttledNanos.get(replicatorId);
        return t == null ? 0 : t.sum();
    }

    Set<String> replicators() {
        return throttledNanos.keySet();
    }

    /** Granted ÷ allowed over the last full window, {@code 0..1} (a little above after a burst). */
    synchronized double utilization() {
        roll();
        return lastUtilization;
    }

    void onNewReplicator(Consumer<String> listener) {
        onNewReplicator = listener;
    }
}
