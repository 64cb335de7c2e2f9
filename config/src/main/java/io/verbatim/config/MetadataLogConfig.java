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
    public static final int MAX_LISTENERS_PER_FOLLOWER = 1024;
    /** Entries: a follower further behind than this is catching up, not feeding anyone. */
    public static final int MAX_FOLLOWER_LAG = 1_000_000;

    public MetadataLogConfig {
        if (maxListenersPerFollower < 1 || maxListenersPerFollower > MAX_LISTENERS_PER_FOLLOWER) {
            throw new IllegalArgumentException("maxListenersPerFollower is " + maxListenersPerFollower
                    + ": must be within 1.." + MAX_LISTENERS_PER_FOLLOWER);
        }
        if (followerLagThreshold < 0 || followerLagThreshold > MAX_FOLLOWER_LAG) {
            throw new IllegalArgumentException("followerLagThreshold is " + followerLagThreshold + ": must be within 0.."
                    + MAX_FOLLOWER_LAG);
        }
        Ranges.check("reassignmentInterval", reassignmentInterval, Ranges.MS, Ranges.MAX_INTERVAL);
    }

    public static MetadataLogConfig defaults() {
        return new MetadataLogConfig(false, 5, 100, Duration.ofSeconds(30));
    }
}
