package io.verbatim.config;

import java.time.Duration;

/**
 * The local metadata log's listener delegation (RATIS-2599's knobs and defaults). Read and validated now;
 * the Raft-backed log that uses it is the metastore's (until then layouts live in memory).
 *
 * @param enabled whether followers may feed listeners
 * @param maxListenersPerFollower how many listeners one follower feeds at most
 * @param followerLagThreshold entries a follower may lag the leader and still feed listeners
 * @param reassignmentInterval how often delegations are reviewed
 */
public record MetadataLogConfig(boolean enabled, int maxListenersPerFollower, int followerLagThreshold,
        Duration reassignmentInterval) {

    public static MetadataLogConfig defaults() {
        return new MetadataLogConfig(false, 5, 100, Duration.ofSeconds(30));
    }
}
