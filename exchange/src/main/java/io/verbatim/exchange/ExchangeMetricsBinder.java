package io.verbatim.exchange;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;

/** The exchange's meters (R-F): diverged ranges, convergence lag, successes and failures per peer. */
public final class ExchangeMetricsBinder implements MeterBinder {
    public static final String DIVERGED_RANGES = "verbatim.exchange.diverged.ranges";
    public static final String CONVERGENCE_LAG = "verbatim.exchange.convergence.lag";
    public static final String CALLS = "verbatim.exchange.calls";

    private final Controller controller;

    public ExchangeMetricsBinder(Controller controller) {
        this.controller = controller;
    }

    @Override
    public void bindTo(MeterRegistry registry) {
        ExchangeMetrics m = controller.metrics();
        Gauge.builder(DIVERGED_RANGES, controller::divergedRangesNow).tag("cluster", controller.cluster())
                .description("ranges where the local layout lags a peer's").register(registry);
        Gauge.builder(CONVERGENCE_LAG, () -> m.convergenceLagNanos() / 1e9).tag("cluster", controller.cluster())
                .baseUnit("seconds").description("last time from a peer change arriving to the local layout refining it")
                .register(registry);
        for (String peer : controller.peers()) {
            FunctionCounter.builder(CALLS, m, x -> x.successes(peer)).tags("peer", peer, "outcome", "success")
                    .register(registry);
            FunctionCounter.builder(CALLS, m, x -> x.failures(peer)).tags("peer", peer, "outcome", "failure")
                    .register(registry);
        }
    }
}
