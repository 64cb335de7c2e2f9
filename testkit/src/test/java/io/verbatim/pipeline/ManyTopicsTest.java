package io.verbatim.pipeline;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.verbatim.budget.BrokerBudget;
import io.verbatim.budget.BudgetConfig;
import io.verbatim.budget.BudgetMetricsBinder;
import io.verbatim.embedded.MemorySegments;
import io.verbatim.model.Compression;
import io.verbatim.model.Layout;
import io.verbatim.model.Mutation;
import java.time.Duration;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;
import reactor.test.scheduler.VirtualTimeScheduler;

/** Two topics on one broker hold segments with the same descriptors; nothing of one may clash with the other. */
class ManyTopicsTest {
    private static final Layout ONE = Layout.initial(1, 4, 0);
    private static final Layout SPLIT = ONE.apply(Mutation.split(0), 0, 0).layoutOrThrow();

    @Test
    void twoTopicsWithTheSameSegmentRebatchAtOnceThroughOneBrokerBudget() {
        VirtualTimeScheduler clock = VirtualTimeScheduler.create();
        // A slow byte rate: both replicators wait in the budget's queue at the same time.
        BrokerBudget budget = new BrokerBudget(BudgetConfig.of(200).withMaxConcurrentRebatches(2), clock);
        SimpleMeterRegistry meters = new SimpleMeterRegistry();
        new BudgetMetricsBinder(budget).bindTo(meters);
        Topic orders = new Topic("persistent://public/default/orders", clock);
        Topic payments = new Topic("persistent://public/default/payments", clock);
        SegmentReplicator first = orders.replicator(budget, clock);
        SegmentReplicator second = payments.replicator(budget, clock);

        int[] mostWaiting = {0};
        StepVerifier.withVirtualTime(() -> Mono.when(first.run(), second.run()), () -> clock, Long.MAX_VALUE)
                .then(() -> {
                    for (int ms = 0; ms < 600_000; ms += 10) {
                        mostWaiting[0] = Math.max(mostWaiting[0], budget.waiters());
                        clock.advanceTimeBy(Duration.ofMillis(10));
                    }
                })
                .verifyComplete();

        List<String> all = IntStream.range(0, 200).mapToObj(n -> "a/" + n).toList();
        assertThat(orders.delivered()).containsExactlyInAnyOrderElementsOf(all);
        assertThat(payments.delivered()).containsExactlyInAnyOrderElementsOf(all);
        assertThat(first.metrics().rebatchedEntries()).isPositive();
        assertThat(second.metrics().rebatchedEntries()).isPositive();
        assertThat(mostWaiting[0]).as("both waited in the budget's queue at once").isEqualTo(2);
        assertThat(meters.find(BudgetMetricsBinder.THROTTLED).meters()).as("the budget saw both replicators")
                .extracting(m -> m.getId().getTag("replicator")).containsExactlyInAnyOrder(first.id(), second.id());
        assertThat(first.id()).isEqualTo("a:persistent://public/default/orders/" + orders.a.layout().segment(0)
                .orElseThrow().descriptor() + "-->b");
    }

    @Test
    void eachTopicRegistersItsOwnPinnedSegmentsGauge() {
        VirtualTimeScheduler clock = VirtualTimeScheduler.create();
        MemorySegments orders = new MemorySegments("a", "orders", ONE, clock).replicateTo("b", StartAt.EARLIEST);
        MemorySegments payments = new MemorySegments("a", "payments", ONE, clock).replicateTo("b", StartAt.EARLIEST);
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        orders.pinnedSegmentsMetric(0).bindTo(registry);
        payments.pinnedSegmentsMetric(0).bindTo(registry);
        orders.produce(Fixture.messages(0, 10, 5), Compression.NONE);
        orders.apply(Mutation.split(0)).layoutOrThrow(); // seals orders' segment 0 with backlog

        assertThat(registry.find(PipelineMetricsBinder.SEALED_PINNED).gauges()).hasSize(2);
        assertThat(pinned(registry, "orders")).isEqualTo(1);
        assertThat(pinned(registry, "payments")).isZero();
    }

    private static double pinned(SimpleMeterRegistry registry, String topic) {
        Gauge gauge = registry.get(PipelineMetricsBinder.SEALED_PINNED).tags("cluster", "a", "topic", topic).gauge();
        return gauge.value();
    }

    /** One topic's segment 0 on cluster a (one segment) with 200 messages, and on b (split: a must re-batch). */
    private static final class Topic {
        final MemorySegments a;
        final MemorySegments b;

        Topic(String name, VirtualTimeScheduler clock) {
            a = new MemorySegments("a", name, ONE, clock).replicateTo("b", StartAt.EARLIEST);
            b = new MemorySegments("b", name, SPLIT, clock);
            a.produce(Fixture.messages(0, 200, 80), Compression.ZSTD);
            a.log(0).seal();
        }

        SegmentReplicator replicator(BrokerBudget budget, VirtualTimeScheduler clock) {
            return SegmentReplicator.builder().config(ReplicatorConfig.defaults("a").withStartAt(StartAt.EARLIEST))
                    .topic(a.topic()).source(a.layout().segment(0).orElseThrow(), a.log(0)).drainGate(a.drainGate())
                    .remote(b.asRemote()).budget(budget).timer(clock).cpu(clock).build();
        }

        List<String> delivered() {
            return Invariants.stored(b).stream().map(s -> s.origin() + "/" + s.counter()).toList();
        }
    }
}
