package io.verbatim.metadatalog.storage;

import io.verbatim.metadatalog.proto.LogEntryProto;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * The log's segments in index order, the open one (if any) last: where an index lives, how a batch is
 * written (rolling to a new segment at the size limit), how a suffix is cut and covered segments dropped.
 */
final class SegmentList {
    private final Disk disk;
    private final long maxSegmentBytes;
    private final List<Segment> segments;

    SegmentList(Disk disk, long maxSegmentBytes, List<Segment> recovered) {
        this.disk = disk;
        this.maxSegmentBytes = maxSegmentBytes;
        this.segments = new ArrayList<>(recovered);
    }

    int size() {
        return segments.size();
    }

    /** The last entry's index, or {@code orElse} if the segments hold none. */
    long lastIndex(long orElse) {
        return segments.isEmpty() ? orElse : Math.max(orElse, segments.get(segments.size() - 1).lastIndex());
    }

    /** The open segment, or null. */
    @Nullable Segment open() {
        Segment last = segments.isEmpty() ? null : segments.get(segments.size() - 1);
        return last != null && last.isOpen() ? last : null;
    }

    boolean contains(long index) {
        return segmentOf(index) >= 0;
    }

    long termAt(long index) {
        int s = segmentOf(index);
        if (s < 0) {
            throw new IllegalStateException("no entry " + index + " in the log");
        }
        return segments.get(s).termAt(index);
    }

    /** The segment holding {@code index}, or -1. */
    private int segmentOf(long index) {
        int lo = 0;
        int hi = segments.size() - 1;
        while (lo <= hi) {
            int mid = (lo + hi) >>> 1;
            Segment s = segments.get(mid);
            if (index < s.firstIndex()) {
                hi = mid - 1;
            } else if (index > s.lastIndex()) {
                lo = mid + 1;
            } else {
                return mid;
            }
        }
        return -1;
    }

    /** Stored entries {@code [from, to)} ({@code from} stored), at most {@code maxBytes} of records but at least one. */
    List<LogEntryProto> read(long from, long to, long maxBytes) throws IOException {
        List<LogEntryProto> out = new ArrayList<>();
        long budget = maxBytes;
        long next = from;
        for (int s = segmentOf(from); next < to && s < segments.size(); s++) {
            Segment segment = segments.get(s);
            List<LogEntryProto> chunk = segment.read(next, to, budget, out.isEmpty());
            for (LogEntryProto e : chunk) {
                budget -= Records.HEADER_BYTES + e.getSerializedSize();
            }
            out.addAll(chunk);
            next += chunk.size();
            if (next <= segment.lastIndex()) {
                break;
            }
        }
        return out;
    }

    /** Forces the open segment if it grew; false if there was nothing to force. */
    boolean force() throws IOException {
        Segment open = open();
        return open != null && open.force(disk);
    }

    /**
     * Cuts entries at and after {@code index}: later segments deleted newest first (each deletion durable,
     * so a crash leaves a prefix of the log, never a hole), the one holding {@code index} reopened and
     * truncated, durably, before anything is written after the cut.
     */
    void truncateFrom(long index) throws IOException {
        int holder = segmentOf(index);
        while (segments.size() - 1 > holder) {
            Segment dropped = segments.remove(segments.size() - 1);
            dropped.release();
            disk.delete(dropped.path());
        }
        Segment segment = segments.get(holder);
        if (!segment.isOpen()) {
            segment.reopen(disk);
        }
        segment.truncateFrom(disk, index);
    }

    /** Appends entries that start right after the last one, rolling to a new segment at the size limit. */
    void write(List<LogEntryProto> entries) throws IOException {
        Segment segment = openOrCreate(entries.get(0).getIndex());
        int from = 0;
        long pendingBytes = 0;
        for (int i = 0; i < entries.size(); i++) {
            long record = Records.HEADER_BYTES + entries.get(i).getSerializedSize();
            if (segment.count() + (i - from) > 0 && segment.size() + pendingBytes + record > maxSegmentBytes) {
                flush(segment, entries.subList(from, i), pendingBytes);
                from = i;
                pendingBytes = 0;
                segment.close(disk);
                segment = Segment.create(disk, entries.get(i).getIndex());
                segments.add(segment);
            }
            pendingBytes += record;
        }
        flush(segment, entries.subList(from, entries.size()), pendingBytes);
    }

    private Segment openOrCreate(long firstIndex) throws IOException {
        Segment open = open();
        if (open != null) {
            return open;
        }
        Segment created = Segment.create(disk, firstIndex);
        segments.add(created);
        return created;
    }

    /** One write for the records of a batch that fall in one segment. */
    private void flush(Segment segment, List<LogEntryProto> entries, long bytes) throws IOException {
        if (entries.isEmpty()) {
            return;
        }
        ByteBuffer buf = ByteBuffer.allocate(Math.toIntExact(bytes));
        LongArray offsets = new LongArray();
        LongArray terms = new LongArray();
        for (LogEntryProto e : entries) {
            offsets.add(buf.position());
            terms.add(e.getTerm());
            Records.put(buf, e.toByteArray());
        }
        buf.flip();
        segment.write(disk, buf, offsets, terms);
        disk.counters.bytesWritten += bytes;
    }

    /** Deletes the closed segments wholly at or before {@code index}, oldest first, then syncs the directory. */
    void dropCovered(long index) throws IOException {
        boolean deleted = false;
        while (!segments.isEmpty() && !segments.get(0).isOpen() && segments.get(0).lastIndex() <= index) {
            Segment covered = segments.remove(0);
            covered.release();
            disk.unlink(covered.path());
            deleted = true;
        }
        if (deleted) {
            disk.syncDirectory();
        }
    }

    /**
     * Deletes every segment, newest first, each deletion durable before the next: a crash leaves a prefix
     * of the log, which recovery recognizes as disagreeing with the snapshot and drops, never a hole.
     */
    void dropAll() throws IOException {
        while (!segments.isEmpty()) {
            Segment dropped = segments.remove(segments.size() - 1);
            dropped.release();
            disk.delete(dropped.path());
        }
    }

    /** Closes every handle without forcing anything; returns the first failure, if any. */
    @Nullable IOException release() {
        IOException first = null;
        for (Segment s : segments) {
            try {
                s.release();
            } catch (IOException e) {
                first = first == null ? e : first;
            }
        }
        return first;
    }
}
