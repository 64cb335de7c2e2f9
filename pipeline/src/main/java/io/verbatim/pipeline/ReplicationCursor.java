package io.verbatim.pipeline;

import io.verbatim.model.entry.SourcePosition;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * A durable cursor on a segment log. Its mark-delete position survives a replicator crash; reading
 * always starts right after it, so whatever was not acknowledged is read again.
 */
public interface ReplicationCursor {

    /**
     * The committed entries after the mark-delete position, in order, as they are written. Honours
     * backpressure: nothing is read ahead of demand. Completes after the last entry of a sealed segment; a
     * cursor may wait until everything read is acknowledged before it completes (Pulsar tells a subscription
     * that a terminated topic has ended only then). Each call starts right after the mark-delete position.
     */
    Flux<StoredEntry> read();

    /** Moves the mark-delete position to {@code upTo} (cumulative); never backwards. */
    Mono<Void> acknowledge(SourcePosition upTo);

    /** Entries written after the mark-delete position. */
    long backlog();
}
