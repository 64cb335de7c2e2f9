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
     * and its own parents are drained the same way (a pruned segment counts as drained). The check is
     * transitive: an empty parent must not open a child's gate while a grandparent still has backlog.
     */
    Mono<Void> drained(long segmentId, String cursorName);
}
