package io.verbatim.net;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;

/**
 * Per listening port: connections open (and, among them, not yet authenticated), and connections refused or
 * closed before an answer, by {@link Refusal} ({@code reason} tag).
 */
public final class NetMetricsBinder implements MeterBinder {
    public static final String OPEN = "verbatim.net.connections.open";
    public static final String UNAUTHENTICATED = "verbatim.net.connections.unauthenticated";
    public static final String REFUSED = "verbatim.net.connections.refused";
    private final NetServer server;

    public NetMetricsBinder(NetServer server) {
        this.server = server;
    }

    @Override
    public void bindTo(MeterRegistry registry) {
        for (NetServer.Port port : server.ports()) {
            Gauge.builder(OPEN, port, NetServer.Port::open).tag("port", port.name())
                    .description("connections open on the port").register(registry);
            Gauge.builder(UNAUTHENTICATED, port, NetServer.Port::unauthenticated).tag("port", port.name())
                    .description("connections open on the port that have not authenticated").register(registry);
            for (Refusal reason : Refusal.values()) {
                FunctionCounter.builder(REFUSED, port, p -> p.refused(reason)).tag("port", port.name())
                        .tag("reason", reason.tag())
                        .description("connections refused, or closed before an answer, by why").register(registry);
            }
        }
    }
}
