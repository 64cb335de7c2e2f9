package io.verbatim.pipeline;

import reactor.core.publisher.Mono;

/**
 * The local cluster's answer to "has this cursor drained this segment": the parent-drain gate of
 * PIP-495 (a segment's replicator publishes only after its parents' replication cursors drained).
 */
@FunctionalInterface
public interface DrainGate {

    /**
     * Completes once the sealed segment {@code segmentId} has no backlog on cursor {@code cursorName}
     * (a pruned segment counts as drained).
     */
    Mono<Void> drained(long segmentId, String cursorName);
}
