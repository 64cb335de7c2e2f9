package io.verbatim.metadatalog.transport;

import io.verbatim.metadatalog.proto.RaftMessageProto;
import io.verbatim.metadatalog.transport.RaftTransportMetrics.Drop;
import java.util.concurrent.atomic.AtomicBoolean;
import reactor.core.publisher.Flux;

/**
 * A member's transport on a {@link MemoryNetwork}: the {@link RaftTransport} contract without sockets,
 * for tests and the in-process runtime. A message is checked as over TCP (its sender must be this member,
 * its group the network's), counted in the same bytes, and delivered on the network's scheduler; one to a
 * member not on the network is dropped ({@code unknown_member}, or {@code not_connected} for one that left).
 * A message in flight to a member that closes is lost, as it would be to a crashed process.
 */
public final class MemoryRaftTransport implements RaftTransport {
    private final String member;
    private final MemoryNetwork network;
    private final InboundSink sink;
    private final RaftTransportMetrics metrics;
    private final AtomicBoolean closed = new AtomicBoolean();

    MemoryRaftTransport(String member, MemoryNetwork network, InboundSink sink) {
        this.member = member;
        this.network = network;
        this.sink = sink;
        this.metrics = new RaftTransportMetrics(member);
    }

    public String member() {
        return member;
    }

    public RaftTransportMetrics metrics() {
        return metrics;
    }

    @Override
    public void send(RaftMessageProto message) {
        if (closed.get()) {
            metrics.drop(Drop.CLOSED);
            return;
        }
        Drop invalid = Outgoing.check(message, member, network.group());
        if (invalid != null) {
            metrics.drop(invalid);
            return;
        }
        network.send(this, RaftMessages.to(message), message);
    }

    /** Hot, as over TCP: signalled on the network's scheduler, bounded, completed by {@link #close()}. */
    @Override
    public Flux<RaftMessageProto> inbound() {
        return sink.flux();
    }

    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            network.leave(this);
            sink.complete();
        }
    }

    void deliver(String from, RaftMessageProto message, int bytes) {
        if (closed.get()) {
            metrics.drop(Drop.NOT_CONNECTED);
        } else if (!sink.emit(message)) {
            metrics.drop(Drop.INBOUND_OVERFLOW);
        } else {
            metrics.received(from, bytes);
        }
    }
}
