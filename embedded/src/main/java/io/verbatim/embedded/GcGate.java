package io.verbatim.embedded;

import io.verbatim.model.entry.Entry;
import io.verbatim.pipeline.ReplicatorConfig;
import io.verbatim.pipeline.StoredEntry;
import java.util.Optional;
import java.util.Set;

/**
 * PIP-495's GC term: a sealed segment with replication backlog is kept, for as long as the TTL allows;
 * and, as for every Pulsar topic, one a subscription has not drained yet.
 */
final class GcGate {
    private GcGate() {
    }

    /** Whether a replication cursor toward one of {@code peers} holds live backlog on {@code log}. */
    static boolean pinned(MemorySegmentLog log, Set<String> peers, long messageTtlMs, long nowMs) {
        for (String peer : peers) {
            Optional<MemoryCursor> cursor = log.existingCursor(ReplicatorConfig.cursorName(peer));
            if (cursor.isPresent() && hasLiveBacklog(log, cursor.get(), messageTtlMs, nowMs)) {
                return true;
            }
        }
        return false;
    }

    /** Whether any cursor at all (replication or subscription) holds live backlog on {@code log}. */
    static boolean held(MemorySegmentLog log, long messageTtlMs, long nowMs) {
        for (MemoryCursor cursor : log.cursors().values()) {
            if (hasLiveBacklog(log, cursor, messageTtlMs, nowMs)) {
                return true;
            }
        }
        return false;
    }

    private static boolean hasLiveBacklog(MemorySegmentLog log, MemoryCursor cursor, long messageTtlMs, long nowMs) {
        if (cursor.backlog() == 0) {
            return false;
        }
        if (messageTtlMs <= 0) {
            return true;
        }
        // Entries are in publish order: the backlog is live if its newest entry has not expired.
        StoredEntry newest = log.entryAt(log.size() - 1);
        return newest == null || Entry.parseUnverified(newest.bytes()).metadata().getPublishTime() + messageTtlMs >= nowMs;
    }
}
