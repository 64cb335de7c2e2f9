package io.verbatim.exchange;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.util.function.ToDoubleFunction;

/**
 * The exchange's meters (R-F): diverged ranges, convergence lag, calls per peer and outcome, whether a
 * peer is unsupported (R-C11), cap mismatches (E7: each differing cap of each peer, with both values),
 * and topic states that were not taken, by reason.
 */
public final class ExchangeMetricsBinder implements MeterBinder {
    public static final String DIVERGED_RANGES = "verbatim.exchange.diverged.ranges";
    public static final String CONVERGENCE_LAG = "verbatim.exchange.convergence.lag";
    public static final String CALLS = "verbatim.exchange.calls";
    public static final String UNSUPPORTED = "verbatim.exchange.peer.unsupported";
    /** 1 per (peer, cap) that differs; tagged with the peer, the cap, and both values. */
    public static final String CAP_MISMATCHES = "verbatim.exchange.cap.mismatches";
    public static final String PEER_CAP = "verbatim.exchange.peer.cap";
    public static final String LOCAL_CAP = "verbatim.exchange.local.cap";
    public static final String STATES_NOT_TAKEN = "verbatim.exchange.states.not.taken";

    private final Controller controller;

    public ExchangeMetricsBinder(Controller controller) {
        this.controller = controller;
    }

    @Override
    public void bindTo(MeterRegistry registry) {
        ExchangeMetrics m = controller.metrics();
        String cluster = controller.cluster();
        Gauge.builder(DIVERGED_RANGES, controller::divergedRangesNow).tag("cluster", cluster)
                .description("ranges where the local layout lags a peer's").register(registry);
        Gauge.builder(CONVERGENCE_LAG, () -> m.convergenceLagNanos() / 1e9).tag("cluster", cluster)
                .baseUnit("seconds").description("last time from a peer change arriving to the local layout refining it")
                .register(registry);
        Gauge.builder(CAP_MISMATCHES, () -> controller.capMismatchesNow().size()).tag("cluster", cluster)
                .description("caps of peers that differ from this cluster's (status names each)").register(registry);
        Gauge.builder(LOCAL_CAP, () -> controller.caps().maxSegments()).tags("cluster", cluster, "cap", "maxSegments")
                .description("this cluster's own cap").register(registry);
        Gauge.builder(LOCAL_CAP, () -> controller.caps().maxEntryBucketsPerSegment())
                .tags("cluster", cluster, "cap", "maxEntryBucketsPerSegment").register(registry);
        for (String peer : controller.peers()) {
            FunctionCounter.builder(CALLS, m, x -> x.successes(peer)).tags("peer", peer, "outcome", "success")
                    .register(registry);
            FunctionCounter.builder(CALLS, m, x -> x.failures(peer)).tags("peer", peer, "outcome", "failure")
                    .register(registry);
            Gauge.builder(UNSUPPORTED, () -> controller.isUnsupported(peer) ? 1 : 0).tags("cluster", cluster, "peer", peer)
                    .description("1 while the peer answers that it has no exchange endpoint (never written to)")
                    .register(registry);
            for (String cap : new String[] {"maxSegments", "maxEntryBucketsPerSegment"}) {
                Gauge.builder(PEER_CAP, () -> peerCap(peer, cap)).tags("cluster", cluster, "peer", peer, "cap", cap)
                        .description("the cap the peer's latest state carries (-1 before one arrived)")
                        .register(registry);
            }
        }
        counter(registry, "invalid", ExchangeMetrics::invalidStates);
        counter(registry, "refused_by_peer", ExchangeMetrics::refusedByPeer);
        counter(registry, "fold_failed", ExchangeMetrics::foldFailures);
        counter(registry, "oversized", ExchangeMetrics::oversizedStates);
    }

    private double peerCap(String peer, String cap) {
        return controller.peerCaps().entrySet().stream().filter(e -> e.getKey().equals(peer)).findFirst()
                .map(e -> (double) (cap.equals("maxSegments") ? e.getValue().maxSegments()
                        : e.getValue().maxEntryBucketsPerSegment())).orElse(-1.0);
    }

    private void counter(MeterRegistry registry, String reason, ToDoubleFunction<ExchangeMetrics> value) {
        FunctionCounter.builder(STATES_NOT_TAKEN, controller.metrics(), value)
                .tags("cluster", controller.cluster(), "reason", reason)
                .description("topic states not taken, by why (the status page names each)").register(registry);
    }
}
