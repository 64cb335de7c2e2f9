package io.verbatim.metadatalog.storage;

import com.google.protobuf.ByteString;
import io.verbatim.metadatalog.proto.HardStateProto;
import io.verbatim.metadatalog.proto.LogEntryProto;
import io.verbatim.metadatalog.proto.SnapshotMetaProto;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;

/**
 * The Raft log in segment files of one directory, the hard state beside it, and the latest snapshot.
 *
 * <h2>Files</h2>
 * {@code log_inprogress_<first>.seg} is the open segment, {@code log_<first>-<last>.seg} a closed one (a
 * new segment starts once a record would take the open one past {@link StorageOptions#maxSegmentBytes}).
 * A segment is an 8-byte header ({@code "VBLG"}, version 1) then records {@code length u32 | crc32c u32 |
 * LogEntryProto}, big-endian, the CRC over the length bytes and the body. {@code hardstate} holds the
 * hard state in two alternating CRC'd slots ({@link HardStateFile}); {@code snapshot_<term>_<index>} the
 * snapshot ({@link SnapshotFile}); {@code lock} the directory lock.
 *
 * <h2>Fsync policy</h2>
 * Every {@link #sync} makes everything written before it durable: it fdatasyncs the open segment (if it
 * grew), then writes the hard state (if it changed) and fdatasyncs it if the term or the vote changed; a
 * change of the commit index alone is written unforced, as losing it is safe (see {@link HardStateFile}).
 * The driver calls it once per Ready batch, before sending that batch's messages: that is what makes a
 * vote or an acknowledged append durable. {@code append} and {@code saveHardState} only write (or
 * buffer, for the hard state); they fsync only for a structural change, which is durable when it returns:
 * closing a segment (its records forced, then renamed), creating one, cutting a conflicting suffix, and
 * every create, rename or delete is followed by an fsync of the directory. {@code saveSnapshot} syncs
 * first and is durable when it returns. {@link StorageOptions#unsafeNoFsync()} skips every fsync.
 *
 * <h2>What a crash can leave</h2>
 * Closed segments, the hard state at the last sync, and the snapshot are whole. The open segment holds
 * everything up to the last sync and possibly some of what came after it, as a byte prefix that may end
 * in a torn record; {@link #open} cuts that tail (a partial length, a partial body, a bad CRC with nothing
 * valid after it, or a bad CRC over an all-zero 512-byte sector, which writeback may leave before pages it
 * did write). Any other damage (in a closed segment, or a bad record followed by a good one) is a
 * {@link StorageCorruptionException} naming the file and offset: recovery never drops what may be
 * committed. A replaced suffix never comes
 * back: the cut is made durable before any replacement is written, so no old record can survive under
 * the new ones. As the hard state is written after the log in every sync, a crash can leave the log ahead
 * of the hard state, never behind; recovery then raises the term to the log's last term with no vote
 * (no vote in that term was ever sent, since it would have been synced first).
 *
 * <p>Only each entry's offset and term are kept in memory; entries are read from the files. Not
 * thread-safe: one driver thread at a time.
 */
public final class SegmentedRaftStorage implements RaftStorage {
    private final Disk disk;
    private final StorageOptions options;
    private final FileChannel lockChannel;
    private final HardStateFile hardStateFile;
    private final SegmentList segments;
    private @Nullable SnapshotMetaProto snapshot;
    private @Nullable Path snapshotPath;
    private HardStateProto hardState;
    private boolean hardStateDirty;
    private @Nullable Throwable failure;
    private boolean closed;

    private SegmentedRaftStorage(Disk disk, StorageOptions options, FileChannel lockChannel,
            HardStateFile hardStateFile, LogRecovery.Result recovered) {
        this.disk = disk;
        this.options = options;
        this.lockChannel = lockChannel;
        this.hardStateFile = hardStateFile;
        this.segments = new SegmentList(disk, options.maxSegmentBytes(), recovered.segments());
        this.snapshot = recovered.snapshot();
        this.snapshotPath = recovered.snapshotPath();
        this.hardState = raisedToLog(hardStateFile.state());
        // a raised term is written with the next sync
        this.hardStateDirty = !hardState.equals(hardStateFile.state());
    }

    /**
     * Opens (creating it if need be) the log in {@code dir}, locks it, and recovers it: see the class
     * comment. Throws {@link StorageCorruptionException} if what was durable cannot be read back, and
     * {@link IllegalStateException} if another storage holds the directory.
     */
    public static SegmentedRaftStorage open(Path dir, StorageOptions options) {
        return open(dir, options, Disk.Steps.NONE);
    }

    /** With a hook before every disk step, to kill the process between any two of them in tests. */
    static SegmentedRaftStorage open(Path dir, StorageOptions options, Disk.Steps steps) {
        FileChannel lock = null;
        HardStateFile hardState = null;
        try {
            boolean created = !Files.isDirectory(dir);
            Files.createDirectories(dir);
            lock = lock(dir);
            Disk disk = new Disk(dir, options.syncOnSync(), new Disk.Counters(), steps);
            if (created) {
                // the directory's own entry, so that a crash right after its first sync cannot lose it
                disk.syncParent();
            }
            hardState = HardStateFile.open(disk);
            return new SegmentedRaftStorage(disk, options, lock, hardState, LogRecovery.run(disk));
        } catch (IOException | RuntimeException e) {
            closeQuietly(hardState, lock, e);
            if (e instanceof IOException io) {
                throw new UncheckedIOException("cannot open the log in " + dir, io);
            }
            throw (RuntimeException) e;
        }
    }

    private static FileChannel lock(Path dir) throws IOException {
        Path path = dir.resolve(FileNames.LOCK);
        FileChannel channel = FileChannel.open(path, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
        FileLock lock;
        try {
            lock = channel.tryLock();
        } catch (OverlappingFileLockException e) {
            lock = null;
        }
        if (lock == null) {
            channel.close();
            throw new IllegalStateException("the log in " + dir + " is in use: another storage holds the lock on "
                    + path);
        }
        return channel;
    }

    @Override
    public Recovered recover() {
        checkUsable();
        return new Recovered(Optional.ofNullable(snapshot), hardState,
                read(snapshotIndex() + 1, lastIndex() + 1, Long.MAX_VALUE));
    }

    @Override
    public void append(List<LogEntryProto> entries) {
        checkUsable();
        if (entries.isEmpty()) {
            return;
        }
        int same = Appends.check(entries, snapshotIndex(), lastIndex(), this::termAt);
        long cut = entries.get(0).getIndex() + same;
        io(() -> {
            if (cut <= lastIndex()) {
                segments.truncateFrom(cut);
            }
            if (same < entries.size()) {
                segments.write(entries.subList(same, entries.size()));
            }
        });
    }

    @Override
    public void saveHardState(HardStateProto state) {
        checkUsable();
        if (state.getSerializedSize() > HardStateFile.SLOT_BYTES - HardStateFile.SLOT_HEADER_BYTES) {
            throw new IllegalArgumentException("hard state of " + state.getSerializedSize() + " bytes is too large");
        }
        hardState = state;
        hardStateDirty = true;
    }

    @Override
    public void sync() {
        checkUsable();
        io(() -> {
            long start = System.nanoTime();
            boolean synced = segments.force();
            if (hardStateDirty) {
                hardStateFile.write(hardState);
                hardStateDirty = false;
                synced = true;
            }
            if (synced) {
                disk.counters.syncs++;
                disk.counters.syncNanos += System.nanoTime() - start;
            }
        });
    }

    @Override
    public void saveSnapshot(SnapshotMetaProto meta, ByteString data) {
        checkUsable();
        long index = meta.getLastIncluded().getIndex();
        long term = meta.getLastIncluded().getTerm();
        if (index < 1 || index <= snapshotIndex()) {
            throw new IllegalArgumentException("snapshot at index " + index + " is not after the stored one at "
                    + snapshotIndex());
        }
        sync();
        boolean agrees = index <= lastIndex() && segments.contains(index) && termAt(index) == term;
        io(() -> {
            Path path = SnapshotFile.write(disk, meta, data);
            if (agrees) {
                segments.dropCovered(index);
            } else {
                segments.dropAll();
            }
            snapshot = meta;
            snapshotPath = path;
            deleteOlderSnapshots();
        });
    }

    @Override
    public Optional<ByteString> snapshotData() {
        checkUsable();
        if (snapshotPath == null) {
            return Optional.empty();
        }
        try {
            return Optional.of(SnapshotFile.read(snapshotPath).data());
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + snapshotPath, e);
        }
    }

    /**
     * Entries {@code [fromIndex, toIndexExclusive)}, as many as fit in {@code maxBytes} of records but at
     * least one if any is stored (etcd's rule, so a large entry never blocks a catch-up). Empty if
     * {@code fromIndex} is after the last entry.
     */
    @Override
    public List<LogEntryProto> read(long fromIndex, long toIndexExclusive, long maxBytes) {
        checkUsable();
        if (fromIndex <= snapshotIndex()) {
            throw new IllegalArgumentException("entry " + fromIndex + " is compacted: the snapshot ends at "
                    + snapshotIndex());
        }
        long to = Math.min(toIndexExclusive, lastIndex() + 1);
        if (fromIndex >= to) {
            return List.of();
        }
        try {
            return segments.read(fromIndex, to, maxBytes);
        } catch (IOException e) {
            fail(e);
            return List.of();
        }
    }

    /**
     * Counters since open. Plain fields written by the driver thread: a metrics thread may read them, a
     * little stale. With {@link StorageOptions#unsafeNoFsync()} {@code fsyncs} counts the skipped ones.
     */
    public StorageMetrics metrics() {
        Disk.Counters c = disk.counters;
        return new StorageMetrics(c.bytesWritten, c.syncs, c.syncNanos, c.fsyncs, c.segmentsCreated, segments.size(),
                c.recordsTruncatedAtRecovery, c.bytesTruncatedAtRecovery);
    }

    public Path directory() {
        return disk.dir;
    }

    public StorageOptions options() {
        return options;
    }

    /** Syncs what is pending (a clean shutdown is not a crash) and releases the files and the lock. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        try {
            if (failure == null) {
                sync();
            }
        } finally {
            release();
        }
    }

    /** Where a crash would cut: the open segment (null if none), its synced and its written size. */
    record CrashPoint(@Nullable Path openSegment, long syncedBytes, long writtenBytes) {
    }

    /** Lets go of everything without syncing, as a killed process would: for crash tests. */
    CrashPoint abandon() {
        Segment open = segments.open();
        CrashPoint point = open == null ? new CrashPoint(null, 0, 0)
                : new CrashPoint(open.path(), open.syncedSize(), open.size());
        release();
        return point;
    }

    long snapshotIndex() {
        return snapshot == null ? 0 : snapshot.getLastIncluded().getIndex();
    }

    long lastIndex() {
        return segments.lastIndex(snapshotIndex());
    }

    long termAt(long index) {
        if (index == snapshotIndex()) {
            return snapshot == null ? 0 : snapshot.getLastIncluded().getTerm();
        }
        return segments.termAt(index);
    }

    private void deleteOlderSnapshots() throws IOException {
        List<Path> older;
        try (Stream<Path> list = Files.list(disk.dir)) {
            older = list.filter(p -> FileNames.parseSnapshot(p.getFileName().toString()).isPresent())
                    .filter(p -> !p.equals(snapshotPath)).toList();
        }
        for (Path p : older) {
            disk.unlink(p);
        }
        if (!older.isEmpty()) {
            disk.syncDirectory();
        }
    }

    private HardStateProto raisedToLog(HardStateProto state) {
        long lastTerm = lastIndex() > snapshotIndex() ? termAt(lastIndex()) : 0;
        return lastTerm > state.getCurrentTerm()
                ? state.toBuilder().setCurrentTerm(lastTerm).clearVotedFor().build()
                : state;
    }

    private interface IoAction {
        void run() throws IOException;
    }

    private void io(IoAction action) {
        try {
            action.run();
        } catch (IOException e) {
            fail(e);
        }
    }

    /**
     * After a failed write or fsync the storage refuses everything: what reached the disk is unknown, and a
     * retried fsync may report success for pages the kernel already dropped (PostgreSQL's fsyncgate).
     */
    private void fail(IOException e) {
        failure = e;
        throw new UncheckedIOException("log in " + disk.dir + " failed; reopen it to recover", e);
    }

    private void checkUsable() {
        if (closed) {
            throw new IllegalStateException("the log in " + disk.dir + " is closed");
        }
        if (failure != null) {
            throw new IllegalStateException("the log in " + disk.dir + " failed earlier; reopen it to recover",
                    failure);
        }
    }

    private void release() {
        closed = true;
        closeQuietly(hardStateFile, lockChannel, segments.release());
    }

    private static void closeQuietly(@Nullable HardStateFile hardState, @Nullable FileChannel lock,
            @Nullable Throwable cause) {
        try {
            if (hardState != null) {
                hardState.release();
            }
        } catch (IOException e) {
            if (cause != null) {
                cause.addSuppressed(e);
            }
        }
        try {
            if (lock != null) {
                lock.close();
            }
        } catch (IOException e) {
            if (cause != null) {
                cause.addSuppressed(e);
            }
        }
    }
}
