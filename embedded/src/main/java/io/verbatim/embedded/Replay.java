package io.verbatim.embedded;

import io.verbatim.embedded.Journal.Record;
import java.nio.ByteBuffer;
import java.util.Map;

/**
 * How each journal record is applied again to the cluster it was written by (see {@link MemorySegments#replay}),
 * under its lock. A record that does not fit what the cluster holds (the journal does not belong to its image,
 * or is damaged) is an {@link IllegalStateException}.
 */
final class Replay {
    private Replay() {
    }

    static void apply(MemorySegments c, Record record) {
        if (!record.topic().equals(c.topic())) {
            throw new IllegalArgumentException("a record of topic " + record.topic() + " replayed on " + c.topic());
        }
        if (record instanceof Record.LedgerOpened r) {
            ledger(c, r.segmentId(), r.ledgerId(), r.firstIndex());
        } else if (record instanceof Record.Appended r) {
            entry(c, r.segmentId(), r.index(), r.bytes());
            c.sequenceSeen(r.sequence());
        } else if (record instanceof Record.Ingested r) {
            entry(c, r.segmentId(), r.index(), r.bytes());
            c.destinations().recovered(r.segmentId(), r.producer(), r.session(), r.position());
            c.sessionSeen(r.session());
        } else if (record instanceof Record.CursorOpened r) {
            cursor(c, r.segmentId(), r.cursor(), r.markDelete());
        } else if (record instanceof Record.Acknowledged r) {
            acknowledged(c, r.segmentId(), r.cursor(), r.markDelete());
        } else if (record instanceof Record.CursorRemoved r) {
            c.logs().removeCursor(r.cursor());
        } else if (record instanceof Record.Adopted r) {
            c.adoptReplayed(r.layout(), r.ledgers());
        } else if (record instanceof Record.MarkReset r) {
            c.destinations().remove(r.key());
        } else if (record instanceof Record.TopicCreated r) {
            throw new IllegalStateException(c.topic() + ": the journal creates the topic again (at epoch "
                    + r.layout().epoch() + ") after what the cluster was restored from");
        }
    }

    /** The first ledger an adopted record gives new segment {@code segmentId}. */
    static long ledger(String topic, Map<Long, Long> replayed, long segmentId) {
        Long ledger = replayed.get(segmentId);
        if (ledger == null) {
            throw new IllegalStateException(topic + ": the journal adopts a layout without a ledger for its new segment "
                    + segmentId);
        }
        return ledger;
    }

    private static void ledger(MemorySegments c, long segmentId, long ledgerId, long firstIndex) {
        MemorySegmentLog log = log(c, segmentId, "a ledger");
        long size = log.size();
        if (firstIndex != size) {
            throw new IllegalStateException(c.topic() + ": the journal opens ledger " + ledgerId + " of segment "
                    + segmentId + " at index " + firstIndex + ", but the segment holds " + size + " entries");
        }
        log.openLedger(ledgerId);
    }

    private static void entry(MemorySegments c, long segmentId, long index, ByteBuffer bytes) {
        MemorySegmentLog log = log(c, segmentId, "an entry");
        if (index != log.size()) {
            throw new IllegalStateException(c.topic() + ": the journal stores an entry of segment " + segmentId
                    + " at index " + index + ", but the segment holds " + log.size() + " entries");
        }
        log.add(bytes);
        log.confirm(index + 1);
    }

    private static void cursor(MemorySegments c, long segmentId, String cursor, long markDelete) {
        MemorySegmentLog log = c.logs().get(segmentId);
        if (log != null) { // a later record may have pruned it
            log.replayCursor(cursor, markDelete);
        }
    }

    private static void acknowledged(MemorySegments c, long segmentId, String cursor, long markDelete) {
        MemorySegmentLog log = c.logs().get(segmentId);
        MemoryCursor held = log == null ? null : log.existingCursor(cursor).orElse(null);
        if (log != null && held != null) { // an acknowledgement may follow its cursor's removal
            held.replayAcknowledged(markDelete);
            log.changed();
        }
    }

    private static MemorySegmentLog log(MemorySegments c, long segmentId, String what) {
        MemorySegmentLog log = c.logs().get(segmentId);
        if (log == null) {
            throw new IllegalStateException(c.topic() + ": the journal has " + what + " of segment " + segmentId
                    + ", which the topic does not hold at epoch " + c.layout().epoch());
        }
        return log;
    }
}
