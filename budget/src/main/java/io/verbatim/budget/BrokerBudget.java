package io.verbatim.budget;

import io.github.bucket4j.Bandwidth;
import io.github.bucket4j.Bucket;
import io.github.bucket4j.ConsumptionProbe;
import io.github.bucket4j.EstimationProbe;
import io.github.bucket4j.TimeMeter;
import io.verbatim.model.Compression;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.core.publisher.MonoSink;
import reactor.core.scheduler.Scheduler;

/**
 * One slow-path budget per broker, shared by every replicator: a byte rate (a Bucket4j token bucket
 * whose clock is the injected {@link Scheduler}) and a bounded number of concurrency slots.
 *
 * <p>Waiters are served strictly in arrival order, and each replicator has at most one request out,
 * so a replicator that comes back for more queues behind everyone already waiting: round-robin. A
 * replicator with a huge backlog therefore cannot starve a small topic's convergence.
 *
 * <p>A request costing more than the bucket holds still passes: it waits until the bucket is full,
 * then takes its whole cost, leaving the bucket in debt; the debt delays whoever comes next, so the
 * long-run rate still holds.
 *
 * <p>A wait for tokens lasts at least {@link #COALESCE} (less if the bucket would fill sooner), so that at
 * a low rate of small requests one wake-up grants several of them rather than each its own.
 */
public final class BrokerBudget implements SlowPathBudget {
    /** How long a wait for tokens lasts at least, so that one wake-up grants several requests. */
    static final Duration COALESCE = Duration.ofMillis(10);

    private final BudgetConfig config;
    private final Scheduler scheduler;
    private final Bucket bucket;
    private final BudgetMetrics metrics;
    private final ArrayDeque<Waiter> queue = new ArrayDeque<>();
    /** Replicators with a request waiting or a permit held. */
    private final Map<String, Waiter> active = new HashMap<>();
    private int slotsInUse;
    private @Nullable Disposable wakeUp;
    private long wakeUpAtNanos;
    /** The shortest wait for tokens: see {@link #coalesceNanos(BudgetConfig)}. */
    private final long coalesceNanos;

    public BrokerBudget(BudgetConfig config, Scheduler scheduler) {
        this.config = config;
        this.scheduler = scheduler;
        TimeMeter clock = new TimeMeter() {
            @Override
            public long currentTimeNanos() {
                return scheduler.now(TimeUnit.NANOSECONDS);
            }

            @Override
            public boolean isWallClockBased() {
                return false;
            }
        };
        // Greedy refill of bytesPerSecond per second into a bucket of burstBytes, starting full.
        this.bucket = Bucket.builder()
                .addLimit(Bandwidth.builder().capacity(config.burstBytes())
                        .refillGreedy(config.bytesPerSecond(), Duration.ofSeconds(1)).build())
                .withCustomTimePrecision(clock)
                .build();
        this.metrics = new BudgetMetrics(config, scheduler);
        this.coalesceNanos = coalesceNanos(config);
    }

    /**
     * The shortest wait for tokens: {@link #COALESCE}, or less when the bucket fills sooner (tokens that
     * would overflow it are lost). Woken for the exact tokens the head needs, a budget of small entries
     * wakes its scheduler's thread once per grant (hundreds of times a second at a few MB/s of 7 kB entries),
     * each a context switch on the cores the fast path runs on; waiting a little longer grants several at
     * once (P5: a third of the slow path's context switches, a quarter less of its CPU).
     */
    static long coalesceNanos(BudgetConfig config) {
        long fill = (long) (config.burstBytes() * 1e9 / config.bytesPerSecond());
        return Math.min(COALESCE.toNanos(), fill / 2);
    }

    public BudgetConfig config() {
        return config;
    }

    BudgetMetrics metrics() {
        return metrics;
    }

    public synchronized int waiters() {
        return queue.size();
    }

    public synchronized int slotsInUse() {
        return slotsInUse;
    }

    @Override
    public Mono<Permit> acquire(String replicatorId, long bytes, Compression codec) {
        long cost = config.cost(bytes, codec);
        return Mono.create(sink -> enqueue(new Waiter(replicatorId, cost, sink, scheduler.now(TimeUnit.NANOSECONDS))));
    }

    private void enqueue(Waiter w) {
        synchronized (this) {
            if (active.containsKey(w.replicatorId)) {
                w.sink.error(new IllegalStateException("replicator " + w.replicatorId
                        + " already holds or awaits a slow-path operation; it may hold one at a time"));
                return;
            }
            active.put(w.replicatorId, w);
            queue.add(w);
            w.sink.onCancel(() -> cancel(w));
        }
        serve();
    }

    private void cancel(Waiter w) {
        boolean release;
        synchronized (this) {
            release = w.granted;
            if (!w.granted) {
                queue.remove(w);
                active.remove(w.replicatorId, w);
            }
        }
        if (release) {
            w.permit.release();
        } else {
            serve();
        }
    }

    /** Grants from the head of the queue while slots and tokens allow; otherwise sets a wake-up. */
    private void serve() {
        while (true) {
            Waiter head;
            synchronized (this) {
                head = queue.peek();
                if (head == null || slotsInUse >= config.maxConcurrentRebatches()) {
                    return;
                }
                long waitNanos = take(head.cost);
                if (waitNanos > 0) {
                    scheduleWakeUp(waitNanos);
                    return;
                }
                queue.poll();
                slotsInUse++;
                head.granted = true;
            }
            long now = scheduler.now(TimeUnit.NANOSECONDS);
            metrics.granted(head.replicatorId, head.cost, now - head.enqueuedNanos);
            head.sink.success(head.permit);
        }
    }

    /** Takes {@code cost} tokens, or says how long until it can; a cost above the capacity waits for a full bucket. */
    private long take(long cost) {
        if (cost <= config.burstBytes()) {
            ConsumptionProbe probe = bucket.tryConsumeAndReturnRemaining(cost);
            return probe.isConsumed() ? 0 : Math.max(1, probe.getNanosToWaitForRefill());
        }
        EstimationProbe full = bucket.estimateAbilityToConsume(config.burstBytes());
        if (!full.canBeConsumed()) {
            return Math.max(1, full.getNanosToWaitForRefill());
        }
        bucket.consumeIgnoringRateLimits(cost); // into debt: the next requests wait it off
        return 0;
    }

    private void scheduleWakeUp(long neededNanos) {
        long waitNanos = Math.max(neededNanos, coalesceNanos);
        long at = scheduler.now(TimeUnit.NANOSECONDS) + waitNanos;
        if (wakeUp != null && !wakeUp.isDisposed() && wakeUpAtNanos <= at) {
            return;
        }
        if (wakeUp != null) {
            wakeUp.dispose();
        }
        wakeUpAtNanos = at;
        wakeUp = Mono.delay(Duration.ofNanos(waitNanos), scheduler).subscribe(t -> serve());
    }

    private void released(Waiter w) {
        synchronized (this) {
            slotsInUse--;
            active.remove(w.replicatorId, w);
        }
        serve();
    }

    private final class Waiter {
        final String replicatorId;
        final long cost;
        final MonoSink<Permit> sink;
        final long enqueuedNanos;
        final Permit permit;
        boolean granted;

        Waiter(String replicatorId, long cost, MonoSink<Permit> sink, long enqueuedNanos) {
            this.replicatorId = replicatorId;
            this.cost = cost;
            this.sink = sink;
            this.enqueuedNanos = enqueuedNanos;
            AtomicBoolean released = new AtomicBoolean();
            Consumer<Waiter> onRelease = BrokerBudget.this::released;
            this.permit = () -> {
                if (released.compareAndSet(false, true)) {
                    onRelease.accept(this);
                }
            };
        }
    }
}
