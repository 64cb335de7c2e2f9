package io.verbatim.metadatalog.transport;

import io.verbatim.metadatalog.proto.RaftMessageProto;
import reactor.core.publisher.Flux;

/**
 * How one member's messages reach the others. Delivery is best effort, as Raft assumes: a message may be
 * lost, delayed or duplicated, and the protocol retries; what a transport does keep is the order of the
 * messages from one sender to one addressee. {@link #send} never blocks; what cannot be sent (no
 * connection, queue full, unknown addressee, too large, after {@link #close()}) is dropped and counted,
 * never thrown.
 *
 * <p>Implementations: {@link NettyRaftTransport} (TCP, optionally mutual TLS, between processes) and
 * {@link MemoryRaftTransport} (one process, faults injected by its {@link MemoryNetwork}). Both count in
 * {@link RaftTransportMetrics}, which {@link RaftTransportMetricsBinder} shows to Micrometer.
 */
public interface RaftTransport extends AutoCloseable {

    /**
     * Sends {@code message} to the member {@link RaftMessages#to} names. Thread-safe; returns at once. The
     * message must be this member's ({@link RaftMessages#from}) and of its group, or it is dropped.
     */
    void send(RaftMessageProto message);

    /**
     * The messages addressed to this member, each from a sender whose identity the transport checked
     * (over TCP: the member the connection authenticated as). Hot: messages arrive whether or not anyone
     * subscribes, up to a bounded buffer, beyond which they are dropped and counted; never signalled on
     * an I/O thread. Completes when the transport closes.
     */
    Flux<RaftMessageProto> inbound();

    /**
     * The largest message {@link #send} can carry, in serialized bytes ({@link Integer#MAX_VALUE}: no limit);
     * a larger one is dropped ({@code oversized}). The driver refuses proposals that could not fit.
     */
    default int maxMessageBytes() {
        return Integer.MAX_VALUE;
    }

    /** Stops sending and receiving and releases what the transport holds; idempotent. */
    @Override
    void close();
}
