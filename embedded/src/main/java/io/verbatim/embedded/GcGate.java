package io.verbatim.embedded;

import io.verbatim.model.Layout;
import io.verbatim.model.Segment;
import io.verbatim.model.entry.Entry;
import io.verbatim.pipeline.ReplicatorConfig;
import io.verbatim.pipeline.StoredEntry;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * PIP-495's GC term: a sealed segment with replication backlog is kept, for as long as the TTL allows;
 * and, as for every Pulsar topic, one a subscription has not drained yet.
 */
final class GcGate {
    private GcGate() {
    }

    /**
     * The sealed segments of {@code layout} garbage collection may delete now: no cursor holds live backlog on
     * them, and every parent is gone already, so the parent-drain gate, which stops at a deleted segment, never
     * skips an ancestor still holding backlog.
     */
    static List<Long> prunable(Layout layout, SegmentLogs logs, long messageTtlMs, long nowMs) {
        List<Long> out = new ArrayList<>();
        for (Segment s : layout.segments().values()) {
            MemorySegmentLog log = logs.get(s.id());
            if (s.isSealed() && s.parentIds().isEmpty() && log != null && log.isSealed()
                    && !held(log, messageTtlMs, nowMs)) {
                out.add(s.id());
            }
        }
        return out;
    }

    /** How many sealed logs replication backlog keeps from deletion. */
    static long pinnedCount(SegmentLogs logs, long messageTtlMs, long nowMs) {
        return logs.all().stream().filter(l -> l.isSealed() && pinned(l, logs.peers(), messageTtlMs, nowMs)).count();
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
