package io.verbatim.budget;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
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

    public BudgetMetricsBinder(BrokerBudget budget) {
        this.budget = budget;
    }

    @Override
    public void bindTo(MeterRegistry registry) {
        BudgetMetrics m = budget.metrics();
        Gauge.builder(UTILIZATION, m::utilization).description("granted / allowed over the last 10 s")
                .register(registry);
        FunctionCounter.builder(GRANTED, m, BudgetMetrics::grantedCost).baseUnit("bytes")
                .description("codec-weighted bytes granted to re-batches").register(registry);
        Gauge.builder(WAITERS, budget::waiters).register(registry);
        Gauge.builder(SLOTS_IN_USE, budget::slotsInUse).register(registry);
        m.replicators().forEach(id -> throttled(registry, m, id));
        m.onNewReplicator(id -> throttled(registry, m, id));
    }

    private static void throttled(MeterRegistry registry, BudgetMetrics m, String replicatorId) {
        FunctionCounter.builder(THROTTLED, m, x -> x.throttledNanos(replicatorId) / (double) TimeUnit.SECONDS.toNanos(1))
                .baseUnit("seconds").tag("replicator", replicatorId)
                .description("time the replicator's slow path waited for the budget").register(registry);
    }
}
