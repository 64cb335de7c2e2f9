package io.verbatim.metadatalog.storage;

import io.verbatim.metadatalog.proto.LogEntryProto;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;

/**
 * One segment file: an 8-byte header ({@code "VBLG"}, format version) then {@link Records records} of
 * consecutive entries. In memory only each record's offset and term, so a read goes to the file.
 */
final class Segment {
    static final int HEADER_BYTES = 8;
    static final int MAGIC = 0x56424C47;
    static final int VERSION = 1;

    private final long firstIndex;
    private final LongArray offsets;
    private final LongArray terms;
    private Path path;
    private FileChannel channel;
    private boolean open;
    private long size;
    /** Bytes known durable: everything below was forced (or would have been, without fsync). */
    private long syncedSize;

    private Segment(Path path, FileChannel channel, long firstIndex, boolean open, LongArray offsets, LongArray terms,
            long size) {
        this.path = path;
        this.channel = channel;
        this.firstIndex = firstIndex;
        this.open = open;
        this.offsets = offsets;
        this.terms = terms;
        this.size = size;
        this.syncedSize = size;
    }

    /** Creates {@code log_inprogress_<first>} with its header, durable with its name when this returns. */
    static Segment create(Disk disk, long firstIndex) throws IOException {
        Path path = disk.dir.resolve(FileNames.openSegment(firstIndex));
        disk.step("create " + path.getFileName());
        FileChannel channel = FileChannel.open(path, StandardOpenOption.CREATE_NEW, StandardOpenOption.READ,
                StandardOpenOption.WRITE);
        writeHeader(channel);
        disk.force(channel, true);
        disk.syncDirectory();
        disk.counters.segmentsCreated++;
        disk.counters.bytesWritten += HEADER_BYTES;
        return new Segment(path, channel, firstIndex, true, new LongArray(), new LongArray(), HEADER_BYTES);
    }

    /** A segment recovery has read and checked ({@code size} is where its valid records end). */
    static Segment recovered(Path path, long firstIndex, boolean open, Records.Scan scan) throws IOException {
        FileChannel channel = open
                ? FileChannel.open(path, StandardOpenOption.READ, StandardOpenOption.WRITE)
                : FileChannel.open(path, StandardOpenOption.READ);
        return new Segment(path, channel, firstIndex, open, scan.offsets(), scan.terms(), scan.validEnd());
    }

    static void writeHeader(FileChannel channel) throws IOException {
        ByteBuffer header = ByteBuffer.allocate(HEADER_BYTES).putInt(MAGIC).putInt(VERSION).flip();
        while (header.hasRemaining()) {
            channel.write(header, HEADER_BYTES - header.remaining());
        }
    }

    long firstIndex() {
        return firstIndex;
    }

    /** {@code firstIndex - 1} when empty. */
    long lastIndex() {
        return firstIndex + terms.size() - 1;
    }

    int count() {
        return terms.size();
    }

    boolean isOpen() {
        return open;
    }

    Path path() {
        return path;
    }

    long size() {
        return size;
    }

    long syncedSize() {
        return syncedSize;
    }

    boolean contains(long index) {
        return index >= firstIndex && index <= lastIndex();
    }

    long termAt(long index) {
        return terms.get(Math.toIntExact(index - firstIndex));
    }

    /** Writes whole records (their bodies' indices start at {@link #lastIndex} + 1). */
    void write(Disk disk, ByteBuffer records, LongArray relativeOffsets, LongArray recordTerms) throws IOException {
        disk.step("write " + path.getFileName());
        long at = size;
        while (records.hasRemaining()) {
            at += channel.write(records, at);
        }
        for (int i = 0; i < relativeOffsets.size(); i++) {
            offsets.add(size + relativeOffsets.get(i));
            terms.add(recordTerms.get(i));
        }
        size = at;
    }

    /** Forces what was written since the last force; false if there was nothing. */
    boolean force(Disk disk) throws IOException {
        if (syncedSize == size) {
            return false;
        }
        disk.force(channel, false);
        syncedSize = size;
        return true;
    }

    /** Cuts entries at and after {@code index}, durably: no cut entry can come back after a crash. */
    void truncateFrom(Disk disk, long index) throws IOException {
        int keep = Math.toIntExact(index - firstIndex);
        long at = keep < offsets.size() ? offsets.get(keep) : size;
        disk.step("truncate " + path.getFileName());
        channel.truncate(at);
        // The new size must be durable before any record is written at the same offsets, or a crash could
        // leave the new records followed by old ones that happen to frame and check.
        disk.force(channel, true);
        offsets.truncate(keep);
        terms.truncate(keep);
        size = at;
        syncedSize = at;
    }

    /** Forces the records, renames to {@code log_<first>-<last>}, and keeps a read-only handle. */
    void close(Disk disk) throws IOException {
        force(disk);
        Path closed = path.resolveSibling(FileNames.closedSegment(firstIndex, lastIndex()));
        disk.rename(path, closed);
        path = closed;
        open = false;
    }

    /** A closed segment about to be truncated becomes the open one again. */
    void reopen(Disk disk) throws IOException {
        channel.close();
        Path inProgress = path.resolveSibling(FileNames.openSegment(firstIndex));
        disk.rename(path, inProgress);
        path = inProgress;
        channel = FileChannel.open(path, StandardOpenOption.READ, StandardOpenOption.WRITE);
        open = true;
    }

    /**
     * Entries {@code [from, toExclusive)} within this segment, as many as fit in {@code maxBytes} of
     * records, and at least one if {@code atLeastOne}.
     */
    List<LogEntryProto> read(long from, long toExclusive, long maxBytes, boolean atLeastOne) throws IOException {
        int first = Math.toIntExact(from - firstIndex);
        int end = Math.toIntExact(Math.min(toExclusive, lastIndex() + 1) - firstIndex);
        long start = offsets.get(first);
        int n = first;
        long bytes = 0;
        while (n < end && ((atLeastOne && n == first) || bytes + recordEnd(n) - offsets.get(n) <= maxBytes)) {
            bytes += recordEnd(n) - offsets.get(n);
            n++;
        }
        ByteBuffer buf = ByteBuffer.allocate(Math.toIntExact(bytes));
        while (buf.hasRemaining()) {
            if (channel.read(buf, start + buf.position()) < 0) {
                throw new IOException(path + " ends before offset " + (start + bytes));
            }
        }
        List<LogEntryProto> entries = new ArrayList<>(n - first);
        for (int i = first; i < n; i++) {
            int at = Math.toIntExact(offsets.get(i) - start);
            int length = buf.getInt(at);
            entries.add(LogEntryProto.parseFrom(buf.slice(at + Records.HEADER_BYTES, length)));
        }
        return entries;
    }

    private long recordEnd(int i) {
        return i + 1 < offsets.size() ? offsets.get(i + 1) : size;
    }

    /** Closes the handle without forcing anything (close, delete, or a simulated crash). */
    void release() throws IOException {
        channel.close();
    }
}
