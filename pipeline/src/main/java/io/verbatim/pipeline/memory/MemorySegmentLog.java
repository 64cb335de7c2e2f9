package io.verbatim.pipeline.memory;

import io.verbatim.model.entry.SourcePosition;
import io.verbatim.pipeline.ReplicationCursor;
import io.verbatim.pipeline.SourceSegmentLog;
import io.verbatim.pipeline.StartAt;
import io.verbatim.pipeline.StoredEntry;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.jspecify.annotations.Nullable;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;

/**
 * One segment's log in memory: committed entries in order, a sealed flag, and durable cursors that
 * outlive any reader. The ledger id is the segment id.
 *
 * <p>With {@link #deleteConsumed} on (Pulsar's retention of zero), entries every cursor has acknowledged
 * are dropped from memory as the slowest cursor moves on, so a log's size is bounded by its backlog;
 * entry ids keep counting from where they were, and a new cursor at the earliest starts at the oldest
 * entry kept.
 */
public final class MemorySegmentLog implements SourceSegmentLog {
    /** Consumed entries are dropped in runs of at least this many (or half of what is kept). */
    private static final int TRIM_RUN = 256;

    private final long segmentId;
    /** Entry {@code first + i} at index {@code i}. */
    private final ArrayList<StoredEntry> entries = new ArrayList<>();
    private final Map<String, MemoryCursor> cursors = new ConcurrentHashMap<>();
    private final List<Runnable> listeners = new CopyOnWriteArrayList<>();
    private long first;
    private boolean sealed;
    private volatile boolean deleteConsumed;

    MemorySegmentLog(long segmentId) {
        this.segmentId = segmentId;
    }

    @Override
    public long segmentId() {
        return segmentId;
    }

    /** Appends an entry; refused once sealed. */
    public SourcePosition append(ByteBuffer bytes) {
        StoredEntry stored;
        synchronized (this) {
            if (sealed) {
                throw new IllegalStateException("segment " + segmentId + " is sealed");
            }
            stored = new StoredEntry(SourcePosition.of(segmentId, first + entries.size()), bytes);
            entries.add(stored);
        }
        changed();
        return stored.position();
    }

    /** Seals the log: no more appends; readers complete once they reach the end. */
    public void seal() {
        synchronized (this) {
            sealed = true;
        }
        changed();
    }

    public synchronized boolean isSealed() {
        return sealed;
    }

    /** How many entries were ever appended: the next entry's id. */
    public synchronized long size() {
        return first + entries.size();
    }

    /** The entry with id {@code index}, or null past the end (or when it was consumed and dropped). */
    synchronized @Nullable StoredEntry entryAt(long index) {
        long i = index - first;
        return i >= 0 && i < entries.size() ? entries.get((int) i) : null;
    }

    /** Every entry still kept, in order (all of them unless consumed entries are deleted). */
    public synchronized List<StoredEntry> entries() {
        return List.copyOf(entries);
    }

    /** The id of the oldest entry kept. */
    public synchronized long firstKept() {
        return first;
    }

    /** Whether entries every cursor acknowledged are dropped (off: every entry stays, for tests and checks). */
    public MemorySegmentLog deleteConsumed(boolean value) {
        deleteConsumed = value;
        trim();
        return this;
    }

    /**
     * Drops what every cursor acknowledged, in runs (so the copy a drop costs is paid rarely). Under the
     * log's lock, as cursors are opened: a cursor opened meanwhile at the earliest entry is counted.
     * Acknowledgements only move cursors on, so a position read here is never ahead of the cursor.
     */
    private synchronized void trim() {
        if (!deleteConsumed || cursors.isEmpty()) {
            return;
        }
        long consumed = Long.MAX_VALUE;
        for (MemoryCursor c : cursors.values()) {
            consumed = Math.min(consumed, c.markDeleteEntryId() + 1);
        }
        int drop = (int) Math.min(entries.size(), consumed - first);
        if (drop > 0 && (drop >= TRIM_RUN || drop * 2 >= entries.size())) {
            entries.subList(0, drop).clear();
            first += drop;
        }
    }

    /** The log as values, taken under its lock. */
    synchronized ClusterImage.SegmentImage image() {
        Map<String, Long> marks = new java.util.TreeMap<>();
        cursors.forEach((name, c) -> marks.put(name, c.markDeleteEntryId()));
        return new ClusterImage.SegmentImage(segmentId, first, sealed,
                entries.stream().map(StoredEntry::bytes).toList(), marks);
    }

    /** Takes the entries and cursors of {@code image} into this empty log. */
    synchronized void restore(ClusterImage.SegmentImage image) {
        if (!entries.isEmpty() || first != 0 || !cursors.isEmpty()) {
            throw new IllegalStateException("segment " + segmentId + " is not empty: nothing is restored into it");
        }
        first = image.firstEntryId();
        for (ByteBuffer b : image.entries()) {
            entries.add(new StoredEntry(SourcePosition.of(segmentId, first + entries.size()), b));
        }
        long last = first + entries.size() - 1;
        image.cursors().forEach((name, markDelete) -> {
            if (markDelete < first - 1 || markDelete > last) {
                throw new IllegalArgumentException("segment " + segmentId + ": cursor " + name + " at " + markDelete
                        + " is outside the entries kept [" + first + ", " + last + "]");
            }
            cursors.put(name, new MemoryCursor(this, markDelete));
        });
        sealed = sealed || image.sealed();
    }

    @Override
    public Mono<ReplicationCursor> cursor(String name, StartAt startAt) {
        return Mono.fromCallable(() -> openCursor(name, startAt));
    }

    /** Opens or creates a cursor at once (a segment's replication cursors exist before any producer). */
    public synchronized MemoryCursor openCursor(String name, StartAt startAt) {
        return cursors.computeIfAbsent(name, n -> new MemoryCursor(this, startAt == StartAt.EARLIEST ? firstKept() - 1
                : size() - 1));
    }

    /** Deletes the cursor {@code name} (an unsubscribe): it no longer holds entries or the segment. */
    public void removeCursor(String name) {
        if (cursors.remove(name) != null) {
            changed();
        }
    }

    /** The cursor {@code name}, if it exists. */
    public Optional<MemoryCursor> existingCursor(String name) {
        return Optional.ofNullable(cursors.get(name));
    }

    public Map<String, MemoryCursor> cursors() {
        return Map.copyOf(cursors);
    }

    /**
     * Calls {@code listener} after every append, seal and acknowledgement, on the thread that made the
     * change (listeners must tolerate being re-entered).
     */
    Disposable onChange(Runnable listener) {
        listeners.add(listener);
        return () -> listeners.remove(listener);
    }

    void changed() {
        for (Runnable listener : listeners) {
            listener.run();
        }
        trim();
    }
}
