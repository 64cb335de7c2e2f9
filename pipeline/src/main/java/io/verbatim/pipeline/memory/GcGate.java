package io.verbatim.pipeline.memory;

import io.verbatim.model.entry.Entry;
import io.verbatim.pipeline.ReplicatorConfig;
import io.verbatim.pipeline.StoredEntry;
import java.util.Set;

/** PIP-495's GC term: a sealed segment with replication backlog is kept, for as long as the TTL allows. */
final class GcGate {
    private GcGate() {
    }

    static boolean pinned(MemorySegmentLog log, Set<String> peers, long messageTtlMs, long nowMs) {
        for (String peer : peers) {
            MemoryCursor cursor = log.existingCursor(ReplicatorConfig.cursorName(peer));
            if (cursor != null && hasLiveBacklog(log, cursor, messageTtlMs, nowMs)) {
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
        return Entry.parseUnverified(newest.bytes()).metadata().getPublishTime() + messageTtlMs >= nowMs;
    }
}
