package io.verbatim.pipeline;

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
 */
public record ReplicatorStatus(String id, String segment, SegmentReplicator.State state, long restarts,
        int consecutiveFailures, Optional<String> lastError) {

    /** Whether it failed and has not made progress since. */
    public boolean failing() {
        return consecutiveFailures > 0;
    }
}
