package io.verbatim.metastore.storage;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;

/**
 * The fsyncs of one log directory, all through here so that {@link StorageOptions#syncOnSync} turns them
 * all off at once and {@link Counters} counts them.
 */
final class Disk {
    final Path dir;
    final boolean fsync;
    final Counters counters;

    Disk(Path dir, boolean fsync, Counters counters) {
        this.dir = dir;
        this.fsync = fsync;
        this.counters = counters;
    }

    /** fdatasync (size included) or, with {@code metadata}, fsync. */
    void force(FileChannel channel, boolean metadata) throws IOException {
        if (fsync) {
            channel.force(metadata);
        }
        counters.fsyncs++;
    }

    /** Makes creations, renames and deletions in the directory durable. */
    void syncDirectory() throws IOException {
        if (fsync) {
            try (FileChannel d = FileChannel.open(dir, StandardOpenOption.READ)) {
                d.force(true);
            }
        }
        counters.fsyncs++;
    }

    void rename(Path from, Path to) throws IOException {
        Files.move(from, to, StandardCopyOption.ATOMIC_MOVE);
        syncDirectory();
    }

    void delete(Path file) throws IOException {
        Files.deleteIfExists(file);
        syncDirectory();
    }

    /** Mutable counters, copied out as {@link StorageMetrics}. */
    static final class Counters {
        long bytesWritten;
        long syncs;
        long syncNanos;
        long fsyncs;
        long segmentsCreated;
        long recordsTruncatedAtRecovery;
        long bytesTruncatedAtRecovery;
    }
}
