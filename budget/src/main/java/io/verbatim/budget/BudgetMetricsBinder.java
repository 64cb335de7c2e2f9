package io.verbatim.budget;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.util.concurrent.TimeUnit;

/** The slow-path budget's meters (R-F): utilization, throttled time per replicator, waiters, slots in use. */
public final class BudgetMetricsBinder implements MeterBinder {
    public static final String UTILIZATION = "verbatim.budget.utilization";
    public static final String GRANTED = "verbatim.budget.granted";
    public static final String THROTTLED = "verbatim.budget.throttled";
    public static final String WAITERS = "verbatim.budget.waiters";
    public static final String SLOTS_IN_USE = "verbatim.budget.slots.in.use";

    private final BrokerBudget budget;
    private final Tags tags;

    public BudgetMetricsBinder(BrokerBudget budget) {
        this(budget, Tags.empty());
    }

    /** With {@code tags} on every meter (a process with several brokers tags each with its own). */
    public BudgetMetricsBinder(BrokerBudget budget, Tags tags) {
        this.budget = budget;
        this.tags = tags;
    }

    @Override
    public void bindTo(MeterRegistry registry) {
        BudgetMetrics m = budget.metrics();
        Gauge.builder(UTILIZATION, m::utilization).tags(tags).description("granted / allowed over the last 10 s")
                .register(registry);
        FunctionCounter.builder(GRANTED, m, BudgetMetrics::grantedCost).tags(tags).baseUnit("bytes")
                .description("codec-weighted bytes granted to re-batches").register(registry);
        Gauge.builder(WAITERS, budget::waiters).tags(tags).register(registry);
        Gauge.builder(SLOTS_IN_USE, budget::slotsInUse).tags(tags).register(registry);
        m.replicators().forEach(id -> throttled(registry, m, id));
        m.onNewReplicator(id -> throttled(registry, m, id));
    }

    private void throttled(MeterRegistry registry, BudgetMetrics m, String replicatorId) {
        FunctionCounter.builder(THROTTLED, m, x -> x.throttledNanos(replicatorId) / (double) TimeUnit.SECONDS.toNanos(1))
                .baseUnit("seconds").tags(tags).tag("replicator", replicatorId)
                .description("time the replicator's slow path waited for the budget").register(registry);
    }
}
