package io.verbatim.pipeline;

import reactor.core.publisher.Mono;

/** A segment log of the local cluster, as a replicator reads it. */
public interface SourceSegmentLog {

    long segmentId();

    /**
     * Opens the durable cursor {@code name}, creating it at {@code startAt} if it does not exist yet.
     * An existing cursor keeps its position: {@code startAt} applies only to a new cursor.
     */
    Mono<ReplicationCursor> cursor(String name, StartAt startAt);
}
