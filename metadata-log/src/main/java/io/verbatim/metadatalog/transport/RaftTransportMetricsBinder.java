package io.verbatim.metadatalog.transport;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.util.function.ToDoubleFunction;
import org.jspecify.annotations.Nullable;

/**
 * A member's Raft transport meters, tagged {@code member}: messages and bytes sent and received per
 * {@code peer}, reconnects per peer, drops by {@code reason}, refused connections by {@code reason}, and
 * inbound connections open. A peer first counted after {@link #bindTo} gets its meters then.
 */
public final class RaftTransportMetricsBinder implements MeterBinder {
    public static final String MESSAGES_SENT = "verbatim.raft.transport.messages.sent";
    public static final String BYTES_SENT = "verbatim.raft.transport.bytes.sent";
    public static final String MESSAGES_RECEIVED = "verbatim.raft.transport.messages.received";
    public static final String BYTES_RECEIVED = "verbatim.raft.transport.bytes.received";
    public static final String RECONNECTS = "verbatim.raft.transport.reconnects";
    public static final String DROPPED = "verbatim.raft.transport.dropped";
    public static final String REFUSED = "verbatim.raft.transport.connections.refused";
    public static final String CONNECTIONS_OPEN = "verbatim.raft.transport.connections.open";

    private final RaftTransportMetrics metrics;

    public RaftTransportMetricsBinder(RaftTransportMetrics metrics) {
        this.metrics = metrics;
    }

    @Override
    public void bindTo(MeterRegistry registry) {
        String member = metrics.member();
        metrics.onNewPeer(peer -> bindPeer(registry, peer));
        metrics.peers().forEach(peer -> bindPeer(registry, peer));
        for (RaftTransportMetrics.Drop d : RaftTransportMetrics.Drop.values()) {
            FunctionCounter.builder(DROPPED, metrics, m -> m.dropped(d)).tags("member", member, "reason", d.tag())
                    .description("messages not sent or not delivered, by why").register(registry);
        }
        for (RaftTransportMetrics.Refusal r : RaftTransportMetrics.Refusal.values()) {
            FunctionCounter.builder(REFUSED, metrics, m -> m.refused(r)).tags("member", member, "reason", r.tag())
                    .description("inbound connections closed by the server, by why").register(registry);
        }
        Gauge.builder(CONNECTIONS_OPEN, metrics, RaftTransportMetrics::connectionsOpen).tag("member", member)
                .description("inbound connections open").register(registry);
    }

    private void bindPeer(MeterRegistry registry, String peer) {
        counter(registry, MESSAGES_SENT, peer, null, m -> m.messagesSent(peer));
        counter(registry, BYTES_SENT, peer, "bytes", m -> m.bytesSent(peer));
        counter(registry, MESSAGES_RECEIVED, peer, null, m -> m.messagesReceived(peer));
        counter(registry, BYTES_RECEIVED, peer, "bytes", m -> m.bytesReceived(peer));
        counter(registry, RECONNECTS, peer, null, m -> m.reconnects(peer));
    }

    private void counter(MeterRegistry registry, String name, String peer, @Nullable String unit,
            ToDoubleFunction<RaftTransportMetrics> f) {
        FunctionCounter.Builder<RaftTransportMetrics> b = FunctionCounter.builder(name, metrics, f)
                .tags("member", metrics.member(), "peer", peer);
        if (unit != null) {
            b.baseUnit(unit);
        }
        b.register(registry);
    }
}
