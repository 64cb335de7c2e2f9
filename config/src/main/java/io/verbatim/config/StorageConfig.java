package io.verbatim.config;

import java.time.Duration;

/**
 * How a cluster keeps its segments in memory.
 *
 * @param deleteConsumed whether entries every cursor (replication and subscription) acknowledged are
 *        dropped as the slowest cursor moves on (Pulsar's retention of zero): a log then holds its backlog
 *        only. Off, every entry stays until its segment is deleted (tests that read what is stored).
 * @param pruneSealed whether garbage collection deletes a sealed segment once every cursor drained it
 *        (PIP-495's GC gating: replication backlog pins it, for as long as the message TTL allows)
 * @param gcInterval how often garbage collection looks for sealed segments to delete
 */
public record StorageConfig(boolean deleteConsumed, boolean pruneSealed, Duration gcInterval) {

    public StorageConfig {
        Ranges.check("gcInterval", gcInterval, Ranges.TEN_MS, Ranges.MAX_INTERVAL);
    }

    public static StorageConfig defaults() {
        return new StorageConfig(false, true, Duration.ofSeconds(10));
    }
}
