package io.verbatim.metastore.transport;

import io.verbatim.metastore.proto.RaftMessageProto;
import reactor.core.publisher.Flux;

/**
 * How one member's messages reach the others. Delivery is best effort, as Raft assumes: a message may be
 * lost, delayed, duplicated or reordered, and the protocol retries. {@link #send} never blocks; what
 * cannot be sent (no connection, queue full) is dropped and counted.
 */
public interface RaftTransport extends AutoCloseable {

    /** Sends {@code message} to the member {@link RaftMessages#to} names. */
    void send(RaftMessageProto message);

    /** The messages addressed to this member, each from a sender whose identity the transport checked. */
    Flux<RaftMessageProto> inbound();

    /** Stops sending and receiving; idempotent. */
    @Override
    void close();
}
