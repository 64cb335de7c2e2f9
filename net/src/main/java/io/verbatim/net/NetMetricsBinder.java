package io.verbatim.net;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;

/** Per listening port: connections open, and connections refused over {@code network.maxConnectionsPerPort}. */
public final class NetMetricsBinder implements MeterBinder {
    public static final String OPEN = "verbatim.net.connections.open";
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
            FunctionCounter.builder(REFUSED, port, NetServer.Port::refused).tag("port", port.name())
                    .description("connections closed at once because the port held network.maxConnectionsPerPort")
                    .register(registry);
        }
    }
}
