package io.verbatim.embedded;

import io.verbatim.pipeline.ReplicatorConfig;
import io.verbatim.pipeline.StartAt;
import io.verbatim.pipeline.StoredEntry;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArraySet;
import org.jspecify.annotations.Nullable;

/**
 * The logs of a {@link MemorySegments}'s segments, by segment id, and the peers it replicates to: every log
 * has a replication cursor per peer, a log made later too (at its first entry). Changed under the cluster's
 * lock; read from anywhere.
 */
final class SegmentLogs {
    private final Map<Long, MemorySegmentLog> byId = new ConcurrentHashMap<>();
    private final Set<String> peers = new CopyOnWriteArraySet<>();
    private final Journaling journaling;
    private volatile boolean deleteConsumed;

    SegmentLogs(Journaling journaling) {
        this.journaling = journaling;
    }

    /** The log of {@code segmentId}, or null when there is none (any more). */
    @Nullable MemorySegmentLog get(long segmentId) {
        return byId.get(segmentId);
    }

    Collection<MemorySegmentLog> all() {
        return byId.values();
    }

    Set<String> peers() {
        return peers;
    }

    /** A new log for {@code segmentId} whose first ledger is {@code ledgerId}, with a cursor per peer. */
    MemorySegmentLog open(long segmentId, long ledgerId) {
        MemorySegmentLog log = new MemorySegmentLog(segmentId, ledgerId, journaling.keeps(), journaling)
                .deleteConsumed(deleteConsumed);
        for (String peer : peers) {
            log.openCursor(ReplicatorConfig.cursorName(peer), StartAt.EARLIEST);
        }
        byId.put(segmentId, log);
        return log;
    }

    /** Drops the log of a pruned segment. */
    void remove(long segmentId) {
        byId.remove(segmentId);
    }

    /** Every log, now and to come, gets the cursor {@code pulsar.repl.<peer>}. */
    void replicateTo(String peer, StartAt startAt) {
        peers.add(peer);
        for (MemorySegmentLog log : byId.values()) {
            log.openCursor(ReplicatorConfig.cursorName(peer), startAt);
        }
    }

    /** Deletes the cursor {@code name} on every log. */
    void removeCursor(String name) {
        byId.values().forEach(l -> l.removeCursor(name));
    }

    /** The log that has (or had) ledger {@code ledgerId}. */
    Optional<MemorySegmentLog> ofLedger(long ledgerId) {
        for (MemorySegmentLog log : byId.values()) {
            if (log.hasLedger(ledgerId)) {
                return Optional.of(log);
            }
        }
        return Optional.empty();
    }

    /** The backlog of cursor {@code name} on segment {@code segmentId}; 0 without such a log or cursor. */
    long backlog(long segmentId, String name) {
        MemorySegmentLog log = byId.get(segmentId);
        MemoryCursor cursor = log == null ? null : log.existingCursor(name).orElse(null);
        return cursor == null ? 0 : cursor.backlog();
    }

    /** Whether every log, now and to come, drops the entries every cursor acknowledged. */
    void deleteConsumed(boolean value) {
        deleteConsumed = value;
        byId.values().forEach(l -> l.deleteConsumed(value));
    }

    /** Every stored entry, by segment id. */
    Map<Long, List<StoredEntry>> contents() {
        Map<Long, List<StoredEntry>> contents = new TreeMap<>();
        byId.forEach((id, log) -> contents.put(id, log.entries()));
        return contents;
    }
}
