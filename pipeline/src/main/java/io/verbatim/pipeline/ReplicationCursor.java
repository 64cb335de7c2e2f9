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

    /**
     * Acknowledges the one entry at {@code position}, past the mark-delete position (Pulsar's individual
     * acknowledgement): a later read, in this process or another, does not give it again, though the entries
     * before it stay unacknowledged. Best effort, nothing waited for: the cumulative {@link #acknowledge} is what
     * counts; a cursor that keeps no such acknowledgements (the default), or has no read open to send one,
     * does nothing.
     */
    default void acknowledgeOne(SourcePosition position) {
    }

    /** Entries written after the mark-delete position. */
    long backlog();
}
