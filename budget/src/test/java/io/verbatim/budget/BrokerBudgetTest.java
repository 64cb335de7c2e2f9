package io.verbatim.budget;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.verbatim.model.Compression;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;
import reactor.test.scheduler.VirtualTimeScheduler;

class BrokerBudgetTest {
    private final VirtualTimeScheduler clock = VirtualTimeScheduler.create();

    /** A replicator that re-batches {@code entries} entries of {@code bytes}, each holding its slot 1 ms. */
    private Disposable replicator(BrokerBudget budget, String id, long entries, long bytes, Compression codec,
            AtomicLong grantedBytes) {
        return Flux.range(0, (int) Math.min(Integer.MAX_VALUE, entries))
                .concatMap(i -> budget.acquire(id, bytes, codec)
                        .flatMap(p -> Mono.delay(Duration.ofMillis(1), clock)
                                .doOnNext(t -> grantedBytes.addAndGet(bytes))
                                .doOnTerminate(p::release) // before the next request goes out
                                .doOnCancel(p::release)))
                .subscribe();
    }

    @Test
    void achievedRateStaysWithinFivePercentOfTheConfiguredRate() {
        BrokerBudget budget = new BrokerBudget(BudgetConfig.of(1_000_000), clock);
        AtomicLong granted = new AtomicLong();
        List<Disposable> replicators = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
            replicators.add(replicator(budget, "r" + i, Long.MAX_VALUE, 10_000, Compression.LZ4, granted));
        }
        clock.advanceTimeBy(Duration.ofSeconds(600));
        replicators.forEach(Disposable::dispose);
        double expected = 1_000_000 * 600.0 + 1_000_000; // the rate, plus the bucket it starts with
        assertThat(granted.get()).isBetween((long) (expected * 0.95), (long) (expected * 1.05));
        assertThat(budget.metrics().utilization()).isBetween(0.95, 1.05);
    }

    @Test
    void replicatorsWithVeryDifferentBacklogsShareTheBudgetFairly() {
        BrokerBudget budget = new BrokerBudget(BudgetConfig.of(1_000_000), clock);
        long[] granted = new long[100];
        AtomicLong[] counters = new AtomicLong[100];
        List<Disposable> replicators = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
            counters[i] = new AtomicLong();
            long backlog = 100L + (long) Math.pow(1.07, i) * 100; // 200 .. ~85,000 entries
            replicators.add(replicator(budget, "r" + i, backlog, 10_000, Compression.LZ4, counters[i]));
        }
        clock.advanceTimeBy(Duration.ofSeconds(60)); // every replicator still has backlog
        for (int i = 0; i < 100; i++) {
            granted[i] = counters[i].get();
        }
        replicators.forEach(Disposable::dispose);
        assertThat(jain(granted)).isGreaterThanOrEqualTo(0.95);
        assertThat(Arrays.stream(granted).min().orElse(0)).isPositive();
    }

    private static double jain(long[] x) {
        double sum = 0;
        double squares = 0;
        for (long v : x) {
            sum += v;
            squares += (double) v * v;
        }
        return sum * sum / (x.length * squares);
    }

    @Test
    void smallRequestsAtALowRateAreGrantedInGroupsAndTheRateHolds() {
        BrokerBudget budget = new BrokerBudget(BudgetConfig.of(1_000_000), clock); // 1 ms of tokens per request
        Set<Long> instants = ConcurrentHashMap.newKeySet();
        AtomicLong granted = new AtomicLong();
        List<Disposable> replicators = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            String id = "r" + i;
            replicators.add(Flux.range(0, Integer.MAX_VALUE)
                    .concatMap(n -> budget.acquire(id, 1_000, Compression.LZ4).doOnNext(p -> {
                        instants.add(clock.now(TimeUnit.NANOSECONDS));
                        granted.addAndGet(1_000);
                        p.release();
                    }))
                    .subscribe());
        }
        clock.advanceTimeBy(Duration.ofSeconds(10));
        replicators.forEach(Disposable::dispose);
        double expected = 1_000_000 * 10.0 + 1_000_000;
        assertThat(granted.get()).isBetween((long) (expected * 0.95), (long) (expected * 1.05));
        assertThat(instants).as("a wake-up every %s, not one per request", BrokerBudget.COALESCE)
                .hasSizeLessThanOrEqualTo((int) (10_000 / BrokerBudget.COALESCE.toMillis()) + 2);
    }

    @Test
    void aBucketSmallerThanTheCoalescingWaitStillYieldsItsRate() {
        BudgetConfig config = BudgetConfig.of(100_000).withBurstBytes(100); // fills in 1 ms
        assertThat(BrokerBudget.coalesceNanos(config)).isEqualTo(500_000);
        BrokerBudget budget = new BrokerBudget(config, clock);
        AtomicLong granted = new AtomicLong();
        Disposable r = Flux.range(0, Integer.MAX_VALUE)
                .concatMap(n -> budget.acquire("r", 50, Compression.LZ4).doOnNext(p -> {
                    granted.addAndGet(50);
                    p.release();
                }))
                .subscribe();
        clock.advanceTimeBy(Duration.ofSeconds(10));
        r.dispose();
        assertThat(granted.get()).isBetween(950_000L, 1_050_000L);
    }

    @Test
    void aReplicatorNeverHoldsTwoOperations() {
        BrokerBudget budget = new BrokerBudget(BudgetConfig.of(1_000), clock);
        SlowPathBudget.Permit held = budget.acquire("r", 10, Compression.NONE).block();
        StepVerifier.create(budget.acquire("r", 10, Compression.NONE))
                .expectErrorSatisfies(e -> assertThat(e).isInstanceOf(IllegalStateException.class)
                        .hasMessageContaining("replicator r already holds"))
                .verify();
        held.release();
        held.release(); // idempotent
        assertThat(budget.slotsInUse()).isZero();
        assertThat(budget.acquire("r", 10, Compression.NONE).block()).isNotNull();
    }

    @Test
    void aCancelledWaiterGivesUpItsPlaceAndNeverTakesASlot() {
        BrokerBudget budget = new BrokerBudget(BudgetConfig.of(1_000).withMaxConcurrentRebatches(1), clock);
        SlowPathBudget.Permit a = budget.acquire("a", 10, Compression.NONE).block();
        AtomicReference<SlowPathBudget.Permit> c = new AtomicReference<>();
        Disposable b = budget.acquire("b", 10, Compression.NONE).subscribe();
        budget.acquire("c", 10, Compression.NONE).subscribe(c::set);
        assertThat(budget.waiters()).isEqualTo(2);
        b.dispose();
        assertThat(budget.waiters()).isEqualTo(1);
        a.release();
        assertThat(c.get()).as("c is next once b gave its place up").isNotNull();
        assertThat(budget.slotsInUse()).isEqualTo(1);
        c.get().release();
        assertThat(budget.slotsInUse()).isZero();
        assertThat(budget.acquire("b", 10, Compression.NONE).block()).as("b may ask again").isNotNull();
    }

    @Test
    void slotsBoundConcurrentRebatchesAndThrottlingPausesWithoutDropping() {
        BrokerBudget budget = new BrokerBudget(BudgetConfig.of(100_000).withMaxConcurrentRebatches(2), clock);
        AtomicLong granted = new AtomicLong();
        List<Disposable> replicators = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            String id = "r" + i;
            replicators.add(Flux.range(0, 50).concatMap(n -> budget.acquire(id, 5_000, Compression.LZ4).flatMap(p -> Mono.delay(Duration.ofMillis(50), clock)
                            .doOnNext(t -> granted.incrementAndGet()).doOnTerminate(p::release))).subscribe());
        }
        for (int step = 0; step < 200; step++) {
            clock.advanceTimeBy(Duration.ofMillis(100));
            assertThat(budget.slotsInUse()).isLessThanOrEqualTo(2);
        }
        clock.advanceTimeBy(Duration.ofMinutes(5));
        assertThat(granted.get()).as("every request was eventually served").isEqualTo(500);
    }

    @Test
    void anEntryLargerThanTheBucketStillPassesAndItsDebtIsWaitedOff() {
        BrokerBudget budget = new BrokerBudget(BudgetConfig.of(1_000), clock); // burst 1000
        AtomicReference<SlowPathBudget.Permit> big = new AtomicReference<>();
        budget.acquire("big", 5_000, Compression.NONE).subscribe(big::set);
        assertThat(big.get()).as("the bucket starts full: it passes at once").isNotNull();
        AtomicReference<SlowPathBudget.Permit> small = new AtomicReference<>();
        budget.acquire("small", 100, Compression.NONE).subscribe(small::set);
        clock.advanceTimeBy(Duration.ofMillis(4_000));
        assertThat(small.get()).as("4000 of debt plus 100 more at 1000/s").isNull();
        clock.advanceTimeBy(Duration.ofMillis(200));
        assertThat(small.get()).isNotNull();
    }

    @Test
    void codecWeightsTurnBytesIntoCpuCost() {
        BudgetConfig config = BudgetConfig.of(100_000).withBurstBytes(1).withCodecWeights(Map.of(Compression.ZLIB,
                20.0));
        assertThat(config.cost(1000, Compression.ZLIB)).isEqualTo(20_000);
        assertThat(config.cost(1000, Compression.LZ4)).isEqualTo(1000);
        assertThat(timeFor(config, Compression.ZLIB).toMillis() / (double) timeFor(config, Compression.LZ4)
                .toMillis()).isBetween(18.0, 22.0);
    }

    private Duration timeFor(BudgetConfig config, Compression codec) {
        VirtualTimeScheduler vts = VirtualTimeScheduler.create();
        BrokerBudget budget = new BrokerBudget(config, vts);
        long start = vts.now(TimeUnit.MILLISECONDS);
        AtomicLong done = new AtomicLong();
        Flux.range(0, 100).concatMap(i -> budget.acquire("r", 1000, codec).doOnNext(SlowPathBudget.Permit::release))
                .doOnComplete(() -> done.set(vts.now(TimeUnit.MILLISECONDS)))
                .subscribe();
        while (done.get() == 0) {
            vts.advanceTimeBy(Duration.ofMillis(10));
        }
        return Duration.ofMillis(done.get() - start);
    }

    @Test
    void configurationErrorsNameTheKeyAndTheValue() {
        assertThatThrownBy(() -> BudgetConfig.of(0)).hasMessageContaining("slowPath.bytesPerSecond is 0");
        assertThatThrownBy(() -> BudgetConfig.of(10).withMaxConcurrentRebatches(0))
                .hasMessageContaining("slowPath.maxConcurrentRebatches is 0");
        assertThatThrownBy(() -> BudgetConfig.of(10).withBurstBytes(-1)).hasMessageContaining("slowPath.burstBytes");
        assertThatThrownBy(() -> BudgetConfig.of(10).withCodecWeights(Map.of(Compression.ZSTD, 0.0)))
                .hasMessageContaining("slowPath.codecWeights.ZSTD is 0.0");
        assertThatThrownBy(() -> BudgetConfig.of(2_000_000_000_000L))
                .hasMessageContaining("slowPath.bytesPerSecond is 2000000000000: must be at most 1000000000000");
        assertThatThrownBy(() -> BudgetConfig.of(10).withCodecWeights(Map.of(Compression.ZLIB, 1e9)))
                .hasMessageContaining("slowPath.codecWeights.ZLIB is 1.0E9: a weight must be within 0.001..1000.0");
        assertThatThrownBy(() -> BudgetConfig.of(10).withMaxConcurrentRebatches(1025))
                .hasMessageContaining("slowPath.maxConcurrentRebatches is 1025: must be within 1..1024");
    }

    @Test
    void metersShowUtilizationThrottlingWaitersAndSlots() {
        BrokerBudget budget = new BrokerBudget(BudgetConfig.of(10_000).withMaxConcurrentRebatches(1), clock);
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        new BudgetMetricsBinder(budget).bindTo(registry);
        AtomicLong granted = new AtomicLong();
        replicator(budget, "slow", 1000, 5_000, Compression.LZ4, granted);
        replicator(budget, "other", 1000, 5_000, Compression.LZ4, granted);
        clock.advanceTimeBy(Duration.ofSeconds(30));
        assertThat(registry.get(BudgetMetricsBinder.UTILIZATION).gauge().value()).isBetween(0.9, 1.1);
        assertThat(registry.get(BudgetMetricsBinder.THROTTLED).tag("replicator", "slow").functionCounter().count())
                .isGreaterThan(5);
        assertThat(registry.get(BudgetMetricsBinder.SLOTS_IN_USE).gauge().value()).isLessThanOrEqualTo(1);
        assertThat(registry.get(BudgetMetricsBinder.WAITERS).gauge().value()).isBetween(0.0, 2.0);
        // Counted at grant time: the one or two operations still holding their slot are in it too.
        assertThat(registry.get(BudgetMetricsBinder.GRANTED).functionCounter().count())
                .isEqualTo(budget.metrics().grants() * 5_000.0)
                .isBetween((double) granted.get(), granted.get() + 10_000.0);
    }
}
