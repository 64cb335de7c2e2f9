package io.verbatim.metadatalog.transport;

import io.verbatim.metadatalog.proto.RaftMessageProto;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Sinks;

/**
 * The hot stream {@code inbound()} returns: a multicast sink with a bounded buffer. Emitting never waits:
 * a message that does not fit is refused (the caller counts it). Emissions come from several threads (one
 * per connection), so they are serialized here; the section is short because subscribers are handed the
 * message through {@code publishOn} or their own queue.
 */
final class InboundSink {
    private final Sinks.Many<RaftMessageProto> sink;

    InboundSink(int bufferSize) {
        this.sink = Sinks.many().multicast().onBackpressureBuffer(bufferSize, false);
    }

    /** Whether {@code message} was taken (false: the buffer is full, or the sink completed). */
    synchronized boolean emit(RaftMessageProto message) {
        return sink.tryEmitNext(message).isSuccess();
    }

    synchronized void complete() {
        sink.tryEmitComplete();
    }

    Flux<RaftMessageProto> flux() {
        return sink.asFlux();
    }
}
