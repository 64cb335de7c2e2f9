package io.verbatim.pipeline;

import java.time.Duration;
import java.util.Optional;


/**
 * One segment's replicator as a {@link ReplicationLink} supervises it, for status pages.
 *
 * @param id the replicator's id ({@link SegmentReplicator#id()}: cluster, topic, segment, remote)
 * @param segment the source segment's descriptor
 * @param state what its current replicator is doing ({@code FAILED} while a restart is pending)
 * @param restarts how often the link restarted it after a failure
 * @param consecutiveFailures failures since it last made progress (acknowledged an entry) or completed
 * @param lastError the last failure, or empty if it never failed
 * @param backlog entries of the segment not yet replicated to the remote
 * @param stalledFor how long it has acknowledged nothing while it has backlog, once that is at least the link's
 *        stall threshold ({@link ReplicationLink.Builder#stallAfter}); empty while it moves or has no backlog.
 *        A replicator that rewinds and reconnects again and again without getting anything through is stalled
 *        without failing: {@code failing} counts only what ended a replicator.
 */
public record ReplicatorStatus(String id, String segment, SegmentReplicator.State state, long restarts,
        int consecutiveFailures, Optional<String> lastError, long backlog, Optional<Duration> stalledFor) {

    /** Without backlog or stall (what a link that is not asked about them knows). */
    public ReplicatorStatus(String id, String segment, SegmentReplicator.State state, long restarts,
            int consecutiveFailures, Optional<String> lastError) {
        this(id, segment, state, restarts, consecutiveFailures, lastError, 0, Optional.empty());
    }

    /** Whether it failed and has not made progress since. */
    public boolean failing() {
        return consecutiveFailures > 0;
    }

    /** Whether it has backlog and has not moved for the stall threshold. */
    public boolean stalled() {
        return stalledFor.isPresent();
    }
}
