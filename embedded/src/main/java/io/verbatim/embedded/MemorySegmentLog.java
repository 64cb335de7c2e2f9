package io.verbatim.embedded;

import io.verbatim.model.entry.SourcePosition;
import io.verbatim.pipeline.ReplicationCursor;
import io.verbatim.pipeline.SourceSegmentLog;
import io.verbatim.pipeline.StartAt;
import io.verbatim.pipeline.StoredEntry;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.jspecify.annotations.Nullable;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;

/**
 * One segment's log in memory: committed entries in order, a sealed flag, and durable cursors that
 * outlive any reader.
 *
 * <p>Entries are counted by index, from 0, for as long as the segment lives; their positions are Pulsar's,
 * {@code (ledgerId, entryId)}, in the ledger the segment had open when they were written. A log opens a new
 * ledger each time it is opened again after a restart ({@link #openLedger}), so a position is never handed
 * out twice. Cursors count in indexes.
 *
 * <p>Readers see an entry once it is confirmed: at once for a log in memory only; once the cluster's
 * {@link Journal} made it durable otherwise.
 *
 * <p>With {@link #deleteConsumed} on (Pulsar's retention of zero), entries every cursor has acknowledged
 * are dropped from memory as the slowest cursor moves on, so a log's size is bounded by its backlog;
 * indexes keep counting from where they were, and a new cursor at the earliest starts at the oldest entry
 * kept.
 */
public final class MemorySegmentLog implements SourceSegmentLog {
    /** Consumed entries are dropped in runs of at least this many (or half of what is kept). */
    private static final int TRIM_RUN = 256;

    private final long segmentId;
    /** Entry {@code first + i} at index {@code i}. */
    private final ArrayList<StoredEntry> entries = new ArrayList<>();
    private final Map<String, MemoryCursor> cursors = new ConcurrentHashMap<>();
    private final List<Runnable> listeners = new CopyOnWriteArrayList<>();
    /** Ledger {@code k} has id {@code ledgerIds[k]} and starts at index {@code ledgerStarts[k]}; both increase. */
    private long[] ledgerIds = new long[2];
    private long[] ledgerStarts = new long[2];
    private int ledgers;
    private long first;
    /** Entries below this index are visible to readers. */
    private long confirmed;
    private final boolean journaled;
    private boolean sealed;
    private volatile boolean deleteConsumed;
    private final CursorEvents events;

    /** What a log tells its cluster's journal about its cursors. */
    interface CursorEvents {
        CursorEvents NONE = new CursorEvents() {
            @Override
            public void opened(long segmentId, String cursor, long markDelete) {
            }

            @Override
            public void acknowledged(long segmentId, String cursor, long markDelete) {
            }
        };

        void opened(long segmentId, String cursor, long markDelete);

        void acknowledged(long segmentId, String cursor, long markDelete);
    }

    /** A log in memory only, whose one ledger is numbered as the segment. */
    MemorySegmentLog(long segmentId) {
        this(segmentId, segmentId, false, CursorEvents.NONE);
    }

    /**
     * @param ledgerId its first ledger's id
     * @param journaled whether the cluster's journal writes its entries down (then only the cluster appends)
     */
    MemorySegmentLog(long segmentId, long ledgerId, boolean journaled, CursorEvents events) {
        this.segmentId = segmentId;
        this.journaled = journaled;
        this.events = events;
        ledgerIds[0] = ledgerId;
        ledgerStarts[0] = 0;
        ledgers = 1;
    }

    @Override
    public long segmentId() {
        return segmentId;
    }

    /**
     * Appends an entry; refused once sealed. Only for a log in memory only: a journaled log is appended to
     * through its cluster, which writes the entry down first.
     */
    public SourcePosition append(ByteBuffer bytes) {
        if (journaled) {
            throw new IllegalStateException("segment " + segmentId + " is journaled: append through its cluster");
        }
        StoredEntry stored = add(bytes);
        confirm(size());
        return stored.position();
    }

    /** Adds an entry at the end, not yet visible: readers see it once {@link #confirm confirmed}. */
    synchronized StoredEntry add(ByteBuffer bytes) {
        if (sealed) {
            throw new IllegalStateException("segment " + segmentId + " is sealed");
        }
        StoredEntry stored = new StoredEntry(positionOf(size()), bytes);
        entries.add(stored);
        return stored;
    }

    /** Makes the entries below index {@code upTo} visible to readers (they are durable) and tells them. */
    void confirm(long upTo) {
        if (confirmQuietly(upTo)) {
            changed();
        }
    }

    /**
     * Makes the entries below index {@code upTo} visible without telling the readers (the caller does, with
     * {@link #changed}, elsewhere); whether anything became visible.
     */
    synchronized boolean confirmQuietly(long upTo) {
        long to = Math.min(upTo, size());
        if (to <= confirmed) {
            return false;
        }
        confirmed = to;
        return true;
    }

    /**
     * Starts a new ledger at the next index: every later entry is in ledger {@code ledgerId}.
     *
     * @throws IllegalArgumentException when {@code ledgerId} is not above every ledger of the log
     */
    synchronized void openLedger(long ledgerId) {
        long current = ledgerIds[ledgers - 1];
        if (ledgerId <= current) {
            throw new IllegalArgumentException("segment " + segmentId + ": ledger " + ledgerId
                    + " is not above its ledger " + current);
        }
        if (ledgerStarts[ledgers - 1] == size()) {
            ledgerIds[ledgers - 1] = ledgerId; // the open ledger holds nothing: no position of it was handed out
            return;
        }
        if (ledgers == ledgerIds.length) {
            ledgerIds = Arrays.copyOf(ledgerIds, ledgers * 2);
            ledgerStarts = Arrays.copyOf(ledgerStarts, ledgers * 2);
        }
        ledgerIds[ledgers] = ledgerId;
        ledgerStarts[ledgers] = size();
        ledgers++;
    }

    /** The id of the ledger new entries go to. */
    public synchronized long currentLedger() {
        return ledgerIds[ledgers - 1];
    }

    /** Whether {@code ledgerId} is one of this log's ledgers. */
    public synchronized boolean hasLedger(long ledgerId) {
        return ledgerIndex(ledgerId) >= 0;
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

    /** How many entries were ever appended: the next entry's index. */
    public synchronized long size() {
        return first + entries.size();
    }

    /** The entry at {@code index}, or null past what readers may see (or when it was consumed and dropped). */
    synchronized @Nullable StoredEntry entryAt(long index) {
        long i = index - first;
        return i >= 0 && index < confirmed ? entries.get((int) i) : null;
    }

    /** The entry at {@code position}, or null when it is not one of this log's (or not kept, or not yet visible). */
    public synchronized @Nullable StoredEntry entryAt(SourcePosition position) {
        long index = indexOf(position);
        return index < 0 ? null : entryAt(index);
    }

    /** The index of the entry at {@code position}, or -1 when no entry of this log was ever there. */
    synchronized long indexOf(SourcePosition position) {
        int k = ledgerIndex(position.ledgerId());
        if (k < 0) {
            return -1;
        }
        long end = k + 1 < ledgers ? ledgerStarts[k + 1] : size();
        long index = ledgerStarts[k] + position.entryId();
        return position.entryId() < end - ledgerStarts[k] && index >= ledgerStarts[k] ? index : -1;
    }

    private int ledgerIndex(long ledgerId) {
        for (int k = ledgers - 1; k >= 0; k--) {
            if (ledgerIds[k] == ledgerId) {
                return k;
            }
        }
        return -1;
    }

    /** The position of the entry at {@code index}. */
    private SourcePosition positionOf(long index) {
        int k = ledgers - 1;
        while (ledgerStarts[k] > index) {
            k--;
        }
        return SourcePosition.of(ledgerIds[k], index - ledgerStarts[k]);
    }

    /** Every entry still kept and visible, in order (all of them unless consumed entries are deleted). */
    public synchronized List<StoredEntry> entries() {
        return List.copyOf(entries.subList(0, (int) (confirmed - first)));
    }

    /** The index of the oldest entry kept. */
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
            consumed = Math.min(consumed, c.markDeleteIndex() + 1);
        }
        int drop = (int) Math.min(entries.size(), Math.min(consumed, confirmed) - first);
        if (drop > 0 && (drop >= TRIM_RUN || drop * 2 >= entries.size())) {
            entries.subList(0, drop).clear();
            first += drop;
        }
    }

    /** The log as values (every entry, visible or not: the image is what the journal holds), under its lock. */
    synchronized ClusterImage.SegmentImage image() {
        Map<String, Long> marks = new TreeMap<>();
        cursors.forEach((name, c) -> marks.put(name, c.markDeleteIndex()));
        List<ClusterImage.Ledger> ledgerList = new ArrayList<>(ledgers);
        for (int k = 0; k < ledgers; k++) {
            ledgerList.add(new ClusterImage.Ledger(ledgerIds[k], ledgerStarts[k]));
        }
        return new ClusterImage.SegmentImage(segmentId, first, sealed,
                entries.stream().map(StoredEntry::bytes).toList(), marks, ledgerList);
    }

    /** Takes the entries, ledgers and cursors of {@code image} into this empty log; all of them visible. */
    synchronized void restore(ClusterImage.SegmentImage image) {
        if (!entries.isEmpty() || first != 0 || !cursors.isEmpty()) {
            throw new IllegalStateException("segment " + segmentId + " is not empty: nothing is restored into it");
        }
        ledgers = 0;
        ledgerIds = new long[Math.max(2, image.ledgers().size())];
        ledgerStarts = new long[ledgerIds.length];
        for (ClusterImage.Ledger l : image.ledgers()) {
            ledgerIds[ledgers] = l.ledgerId();
            ledgerStarts[ledgers] = l.firstIndex();
            ledgers++;
        }
        first = image.firstEntryId();
        for (ByteBuffer b : image.entries()) {
            entries.add(new StoredEntry(positionOf(first + entries.size()), b));
        }
        confirmed = size();
        long last = first + entries.size() - 1;
        image.cursors().forEach((name, markDelete) -> {
            if (markDelete < first - 1 || markDelete > last) {
                throw new IllegalArgumentException("segment " + segmentId + ": cursor " + name + " at " + markDelete
                        + " is outside the entries kept [" + first + ", " + last + "]");
            }
            cursors.put(name, new MemoryCursor(this, name, markDelete));
        });
        sealed = sealed || image.sealed();
    }

    @Override
    public Mono<ReplicationCursor> cursor(String name, StartAt startAt) {
        return Mono.fromCallable(() -> openCursor(name, startAt));
    }

    /** Opens or creates a cursor at once (a segment's replication cursors exist before any producer). */
    public synchronized MemoryCursor openCursor(String name, StartAt startAt) {
        MemoryCursor existing = cursors.get(name);
        if (existing != null) {
            return existing;
        }
        // at the latest: after what readers may see, so entries not yet durable are read once they are
        MemoryCursor created = new MemoryCursor(this, name, startAt == StartAt.EARLIEST ? firstKept() - 1
                : Math.max(confirmed, first) - 1);
        cursors.put(name, created);
        events.opened(segmentId, name, created.markDeleteIndex());
        return created;
    }

    /** Creates cursor {@code name} at {@code markDelete} as a journal replays it; an existing one stays. */
    synchronized void replayCursor(String name, long markDelete) {
        cursors.computeIfAbsent(name, n -> new MemoryCursor(this, n, Math.max(Math.min(markDelete, size() - 1),
                first - 1)));
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

    /** Tells the journal that cursor {@code name} acknowledged up to {@code markDelete}. */
    void acknowledged(String name, long markDelete) {
        events.acknowledged(segmentId, name, markDelete);
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
