package io.verbatim.metadatalog.storage;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.random.RandomGenerator;
import org.junit.jupiter.api.io.TempDir;

/**
 * The contract on disk, with segments of a few records so that every test crosses them. Crashes are
 * simulated (the open segment cut between its synced and its written size), so the fsyncs themselves are
 * off to keep the suite quick; {@code -Dverbatim.realFsync=true} turns them on.
 */
class SegmentedRaftStorageContractTest extends RaftStorageContract {
    @TempDir
    Path root;
    private int opened;

    static StorageOptions options() {
        return new StorageOptions(400, Boolean.getBoolean("verbatim.realFsync"));
    }

    @Override
    protected RaftStorage create() {
        return SegmentedRaftStorage.open(root.resolve("log" + opened++), options());
    }

    @Override
    protected RaftStorage reopen(RaftStorage closed) {
        return SegmentedRaftStorage.open(((SegmentedRaftStorage) closed).directory(), options());
    }

    @Override
    protected RaftStorage crash(RaftStorage storage) {
        return crashAt(storage, null);
    }

    @Override
    protected RaftStorage crashTorn(RaftStorage storage, RandomGenerator random) {
        return crashAt(storage, random);
    }

    /** Kills the storage and cuts its open segment somewhere between what was synced and what was written. */
    static SegmentedRaftStorage crashAt(RaftStorage storage, RandomGenerator random) {
        SegmentedRaftStorage s = (SegmentedRaftStorage) storage;
        SegmentedRaftStorage.CrashPoint point = s.abandon();
        if (point.openSegment() != null) {
            long keep = random == null ? point.syncedBytes()
                    : random.nextLong(point.syncedBytes(), point.writtenBytes() + 1);
            cut(point.openSegment(), keep);
        }
        return SegmentedRaftStorage.open(s.directory(), s.options());
    }

    static void cut(Path file, long size) {
        try (FileChannel c = FileChannel.open(file, StandardOpenOption.WRITE)) {
            c.truncate(size);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
