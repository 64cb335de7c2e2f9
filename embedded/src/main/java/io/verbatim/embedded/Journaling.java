package io.verbatim.embedded;

import io.verbatim.embedded.Journal.Record;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

/**
 * A {@link MemorySegments}'s side of its {@link Journal}: writes its records (none while it replays them), and
 * makes each appended entry visible once the journal made its record durable.
 */
final class Journaling implements MemorySegmentLog.CursorEvents {
    private final Journal journal;
    private final String topic;
    /** Appended entries not yet durable, in sequence order. */
    private final ArrayDeque<Pending> pending = new ArrayDeque<>();
    private volatile boolean replaying;

    private record Pending(long sequence, MemorySegmentLog log, long upTo) {
    }

    Journaling(Journal journal, String topic) {
        this.journal = journal;
        this.topic = topic;
        if (journal.keeps()) {
            journal.onDurable(this::durableUpTo);
        }
    }

    boolean keeps() {
        return journal.keeps();
    }

    Journal journal() {
        return journal;
    }

    /** Whether records are being replayed (nothing is written then). */
    boolean replaying() {
        return replaying;
    }

    void replaying(boolean value) {
        replaying = value;
    }

    /** Writes {@code record} unless replaying; its sequence number (0 when nothing was written). */
    long write(Record record) {
        return replaying || !journal.keeps() ? 0 : journal.append(record);
    }

    /** Writes {@code record} for the entry at {@code index} of {@code log}, which becomes visible once it is durable. */
    void writeEntry(Record record, MemorySegmentLog log, long index) {
        if (replaying || !journal.keeps()) {
            log.confirm(index + 1);
            return;
        }
        synchronized (pending) { // with the append: a durable notice for it cannot come before it is pending
            pending.add(new Pending(journal.append(record), log, index + 1));
        }
    }

    private void durableUpTo(long sequence) {
        Map<MemorySegmentLog, Long> confirm = new IdentityHashMap<>();
        synchronized (pending) {
            while (!pending.isEmpty() && pending.peek().sequence() <= sequence) {
                Pending p = pending.poll();
                confirm.merge(p.log(), p.upTo(), Math::max);
            }
        }
        // visible before any waiter hears it is durable; readers drained elsewhere (their handlers may wait for it)
        List<MemorySegmentLog> moved = new ArrayList<>(confirm.size());
        confirm.forEach((log, upTo) -> {
            if (log.confirmQuietly(upTo)) {
                moved.add(log);
            }
        });
        if (!moved.isEmpty()) {
            journal.changes().execute(() -> moved.forEach(MemorySegmentLog::changed));
        }
    }

    @Override
    public void opened(long segmentId, String cursor, long markDelete) {
        write(new Record.CursorOpened(topic, segmentId, cursor, markDelete));
    }

    @Override
    public void acknowledged(long segmentId, String cursor, long markDelete) {
        write(new Record.Acknowledged(topic, segmentId, cursor, markDelete));
    }
}
