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
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;

/**
 * One segment's log in memory: committed entries in order, a sealed flag, and durable cursors that
 * outlive any reader. The ledger id is the segment id.
 */
public final class MemorySegmentLog implements SourceSegmentLog {
    private final long segmentId;
    private final List<StoredEntry> entries = new ArrayList<>();
    private final Map<String, MemoryCursor> cursors = new ConcurrentHashMap<>();
    private final List<Runnable> listeners = new CopyOnWriteArrayList<>();
    private boolean sealed;

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
            stored = new StoredEntry(SourcePosition.of(segmentId, entries.size()), bytes);
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

    public synchronized int size() {
        return entries.size();
    }

    /** The entry at {@code index}, or null past the end. */
    synchronized StoredEntry entryAt(long index) {
        return index < entries.size() ? entries.get((int) index) : null;
    }

    /** Every committed entry, in order. */
    public synchronized List<StoredEntry> entries() {
        return List.copyOf(entries);
    }

    @Override
    public Mono<ReplicationCursor> cursor(String name, StartAt startAt) {
        return Mono.fromCallable(() -> openCursor(name, startAt));
    }

    /** Opens or creates a cursor at once (a segment's replication cursors exist before any producer). */
    public MemoryCursor openCursor(String name, StartAt startAt) {
        return cursors.computeIfAbsent(name, n -> new MemoryCursor(this, startAt == StartAt.EARLIEST ? -1 : size() - 1));
    }

    /** The cursor {@code name}, or null. */
    public MemoryCursor existingCursor(String name) {
        return cursors.get(name);
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
    }
}
