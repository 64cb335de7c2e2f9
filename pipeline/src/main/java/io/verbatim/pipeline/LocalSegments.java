package io.verbatim.pipeline;

import io.verbatim.model.Layout;
import reactor.core.publisher.Flux;

/**
 * The segments of one local topic, as a {@link ReplicationLink} replicates them: the layout that says
 * which exist, and each one's log. The in-memory cluster implements it; so does storage on Pulsar.
 */
public interface LocalSegments {

    /** The topic's name: part of every replicator's identity. */
    String topic();

    /** The topic's current layout. */
    Layout layout();

    /** The topic's layout: the latest one at subscription, then each newer one. */
    Flux<Layout> layouts();

    /**
     * The log of segment {@code segmentId} of the layout.
     *
     * @throws IllegalArgumentException when the topic has no such segment (it never had, or it was pruned)
     */
    SourceSegmentLog log(long segmentId);

    /** The parent-drain gate over this topic's replication cursors. */
    DrainGate drainGate();

    /** Entries of segment {@code segmentId} after cursor {@code cursorName}; 0 without that segment or cursor. */
    long backlog(long segmentId, String cursorName);
}
