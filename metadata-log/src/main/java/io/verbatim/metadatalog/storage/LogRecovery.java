package io.verbatim.metadatalog.storage;

import io.verbatim.metadatalog.proto.SnapshotMetaProto;
import io.verbatim.metadatalog.storage.FileNames.SegmentName;
import io.verbatim.metadatalog.storage.FileNames.SnapshotName;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;

/**
 * Reads a log directory back at open: drops unfinished temp files, picks the newest readable snapshot,
 * checks every closed segment whole, cuts a torn tail off the open one, and reconciles the log with the
 * snapshot. Anything that cannot be a crash's leftover is a {@link StorageCorruptionException}.
 */
final class LogRecovery {

    record Result(List<Segment> segments, @Nullable SnapshotMetaProto snapshot, @Nullable Path snapshotPath) {
    }

    private LogRecovery() {
    }

    static Result run(Disk disk) throws IOException {
        List<Path> files;
        try (Stream<Path> list = Files.list(disk.dir)) {
            files = list.sorted().toList();
        }
        boolean deleted = false;
        TreeMap<Long, Path> segmentsByFirst = new TreeMap<>();
        Map<Path, SegmentName> names = new TreeMap<>();
        List<Path> snapshots = new ArrayList<>();
        Path open = null;
        for (Path file : files) {
            String name = file.getFileName().toString();
            if (name.endsWith(FileNames.TMP_SUFFIX)) {
                Files.delete(file);
                deleted = true;
            } else if (FileNames.parseSnapshot(name).isPresent()) {
                snapshots.add(file);
            } else if (FileNames.parseSegment(name).isPresent()) {
                SegmentName s = FileNames.parseSegment(name).get();
                if (s.open()) {
                    if (open != null) {
                        throw new StorageCorruptionException(file, -1, "a second open segment (" + open + ")");
                    }
                    open = file;
                } else if (s.last() < s.first()) {
                    throw new StorageCorruptionException(file, -1, "a closed segment whose last index is before its first");
                }
                Path clash = segmentsByFirst.put(s.first(), file);
                if (clash != null) {
                    throw new StorageCorruptionException(file, -1, "starts at the same index as " + clash);
                }
                names.put(file, s);
            }
        }
        if (deleted) {
            disk.syncDirectory();
        }
        if (open != null && open != segmentsByFirst.lastEntry().getValue()) {
            throw new StorageCorruptionException(open, -1, "the open segment is followed by "
                    + segmentsByFirst.lastEntry().getValue());
        }
        SnapshotFile.Loaded snapshot = null;
        Path snapshotPath = null;
        snapshots.sort(Comparator.comparing((Path p) -> snapshotName(p).index())
                .thenComparing(p -> snapshotName(p).term()).reversed());
        for (Path candidate : snapshots) {
            // An older valid snapshot is a safe fallback: if the log was already compacted past it, the gap
            // check below refuses to go on.
            try {
                snapshot = SnapshotFile.read(candidate);
                snapshotPath = candidate;
                break;
            } catch (StorageCorruptionException | IOException e) {
                continue;
            }
        }
        long snapshotIndex = snapshot == null ? 0 : snapshot.meta().getLastIncluded().getIndex();
        long snapshotTerm = snapshot == null ? 0 : snapshot.meta().getLastIncluded().getTerm();
        if (!agreesWithSnapshot(disk, segmentsByFirst, names, snapshotIndex, snapshotTerm)) {
            // A snapshot that replaced a disagreeing log, and a crash before the log's files were all
            // deleted (newest first, so what is left is a prefix of that log).
            for (Path file : segmentsByFirst.descendingMap().values()) {
                disk.delete(file);
            }
            segmentsByFirst.clear();
        }
        List<Segment> segments = new ArrayList<>();
        long expected = -1;
        long lastTerm = 0;
        for (Path file : segmentsByFirst.values()) {
            SegmentName name = Objects.requireNonNull(names.get(file), "the name of a listed segment");
            if (!name.open() && name.last() <= snapshotIndex) {
                // Wholly covered: a compaction that crashed before deleting it.
                disk.delete(file);
                continue;
            }
            if (expected >= 0 && name.first() != expected) {
                throw new StorageCorruptionException(file, -1, "the log has a gap: this segment starts at "
                        + name.first() + ", the one before ends at " + (expected - 1));
            }
            Segment segment = load(disk, file, name, lastTerm);
            segments.add(segment);
            expected = segment.lastIndex() + 1;
            if (segment.count() > 0) {
                lastTerm = segment.termAt(segment.lastIndex());
            }
        }
        reconcile(disk, segments, snapshotIndex);
        return new Result(segments, snapshot == null ? null : snapshot.meta(), snapshotPath);
    }

    private static SnapshotName snapshotName(Path p) {
        return FileNames.parseSnapshot(p.getFileName().toString()).orElseThrow();
    }

    /**
     * Whether the log's entries after the snapshot may be kept, as {@code saveSnapshot} decides: the log
     * holds the snapshot's last entry with the same term, or it starts right after it. Decided before
     * wholly covered segments are dropped, else a half-dropped disagreeing log could look as if it started
     * right after the snapshot.
     */
    private static boolean agreesWithSnapshot(Disk disk, TreeMap<Long, Path> segmentsByFirst,
            Map<Path, SegmentName> names, long snapshotIndex, long snapshotTerm) throws IOException {
        if (snapshotIndex == 0 || segmentsByFirst.isEmpty()) {
            return true;
        }
        Map.Entry<Long, Path> holder = segmentsByFirst.floorEntry(snapshotIndex);
        if (holder == null) {
            // The log starts after the snapshot: right after it, or a gap the caller reports.
            return true;
        }
        SegmentName name = Objects.requireNonNull(names.get(holder.getValue()), "the name of a listed segment");
        if (!name.open() && name.last() < snapshotIndex) {
            return segmentsByFirst.containsKey(snapshotIndex + 1);
        }
        Segment segment = load(disk, holder.getValue(), name, 0);
        try {
            return segment.contains(snapshotIndex) && segment.termAt(snapshotIndex) == snapshotTerm;
        } finally {
            segment.release();
        }
    }

    /** What is left once the wholly covered segments are gone must start at or right after the snapshot. */
    private static void reconcile(Disk disk, List<Segment> segments, long snapshotIndex) throws IOException {
        if (segments.isEmpty()) {
            return;
        }
        long first = segments.get(0).firstIndex();
        long last = segments.get(segments.size() - 1).lastIndex();
        if (first > snapshotIndex + 1) {
            throw new StorageCorruptionException(segments.get(0).path(), -1, "the log starts at " + first
                    + " but the newest readable snapshot ends at " + snapshotIndex);
        }
        if (last <= snapshotIndex) {
            // An open segment wholly covered: nothing in it is needed.
            for (int i = segments.size() - 1; i >= 0; i--) {
                segments.get(i).release();
                disk.delete(segments.get(i).path());
            }
            segments.clear();
        }
    }

    private static Segment load(Disk disk, Path file, SegmentName name, long termBefore) throws IOException {
        byte[] bytes = Files.readAllBytes(file);
        if (!hasHeader(bytes)) {
            Records.Scan after = bytes.length > Segment.HEADER_BYTES ? Records.scan(bytes, Segment.HEADER_BYTES) : null;
            if (!name.open() || (after != null && after.offsets().size() > 0)) {
                throw new StorageCorruptionException(file, 0, "not a version " + Segment.VERSION + " segment file");
            }
            // A crash while the open segment was being created.
            cut(disk, file, 0, bytes.length, 0);
            try (FileChannel channel = FileChannel.open(file, StandardOpenOption.WRITE)) {
                Segment.writeHeader(channel);
                disk.force(channel, true);
            }
            bytes = new byte[Segment.HEADER_BYTES];
        }
        Records.Scan scan = Records.scan(bytes, Segment.HEADER_BYTES);
        checkEntries(file, name, scan, termBefore);
        Records.Damage damage = scan.damage();
        if (damage != null) {
            if (!name.open()) {
                throw new StorageCorruptionException(file, damage.offset(), damage.problem() + " in a closed segment");
            }
            if (damage.notATornWrite()) {
                throw new StorageCorruptionException(file, damage.offset(), damage.problem()
                        + ", and a valid record follows: not a torn tail");
            }
            cut(disk, file, damage.offset(), bytes.length, countRecords(bytes, damage.offset()));
        }
        if (!name.open() && scan.indices().size() - 1 + name.first() != name.last()) {
            throw new StorageCorruptionException(file, scan.validEnd(), "holds entries up to "
                    + (name.first() + scan.indices().size() - 1) + ", its name says " + name.last());
        }
        return Segment.recovered(file, name.first(), name.open(), scan);
    }

    private static boolean hasHeader(byte[] bytes) {
        return bytes.length >= Segment.HEADER_BYTES && ByteBuffer.wrap(bytes).getInt(0) == Segment.MAGIC
                && ByteBuffer.wrap(bytes).getInt(4) == Segment.VERSION;
    }

    /** Indices consecutive from the name's first, terms never decreasing. */
    private static void checkEntries(Path file, SegmentName name, Records.Scan scan, long termBefore) {
        long term = termBefore;
        for (int i = 0; i < scan.indices().size(); i++) {
            if (scan.indices().get(i) != name.first() + i) {
                throw new StorageCorruptionException(file, scan.offsets().get(i), "entry " + scan.indices().get(i)
                        + " where entry " + (name.first() + i) + " belongs");
            }
            if (scan.terms().get(i) < term) {
                throw new StorageCorruptionException(file, scan.offsets().get(i), "entry " + scan.indices().get(i)
                        + " has term " + scan.terms().get(i) + " after term " + term);
            }
            term = scan.terms().get(i);
        }
    }

    /** Cuts a torn tail: durably, so that it cannot reappear under records written later. */
    private static void cut(Disk disk, Path file, long at, long size, long records) throws IOException {
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.WRITE)) {
            channel.truncate(at);
            disk.force(channel, true);
        }
        disk.counters.bytesTruncatedAtRecovery += size - at;
        disk.counters.recordsTruncatedAtRecovery += records;
    }

    /** How many whole records (valid or not) the torn tail from {@code at} frames. */
    private static long countRecords(byte[] bytes, int at) {
        long n = 0;
        long pos = at;
        while (pos + Records.HEADER_BYTES <= bytes.length) {
            int length = ByteBuffer.wrap(bytes).getInt((int) pos);
            if (length <= 0 || pos + Records.HEADER_BYTES + length > bytes.length) {
                break;
            }
            n++;
            pos += Records.HEADER_BYTES + length;
        }
        return n;
    }
}
