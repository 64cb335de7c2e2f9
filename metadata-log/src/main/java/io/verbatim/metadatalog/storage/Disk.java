package io.verbatim.metadatalog.storage;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;

/**
 * The fsyncs and file operations of one log directory, all through here so that
 * {@link StorageOptions#syncOnSync} turns the fsyncs off at once, {@link Counters} counts them, and a test
 * can stop the process between any two of them ({@link Steps}).
 */
final class Disk {
    final Path dir;
    final boolean fsync;
    final Counters counters;
    private final Steps steps;

    Disk(Path dir, boolean fsync, Counters counters, Steps steps) {
        this.dir = dir;
        this.fsync = fsync;
        this.counters = counters;
        this.steps = steps;
    }

    /**
     * Called before every write, truncate, fsync, create, rename and delete: a test's hook that throws to
     * simulate a process killed right there.
     */
    @FunctionalInterface
    interface Steps {
        Steps NONE = step -> {
        };

        void before(String step) throws IOException;
    }

    void step(String step) throws IOException {
        steps.before(step);
    }

    /** fdatasync (size included) or, with {@code metadata}, fsync. */
    void force(FileChannel channel, boolean metadata) throws IOException {
        steps.before("force");
        if (fsync) {
            channel.force(metadata);
        }
        counters.fsyncs++;
    }

    /** Makes creations, renames and deletions in the directory durable. */
    void syncDirectory() throws IOException {
        steps.before("sync directory");
        if (fsync) {
            try (FileChannel d = FileChannel.open(dir, StandardOpenOption.READ)) {
                d.force(true);
            }
        }
        counters.fsyncs++;
    }

    void syncParent() throws IOException {
        Path parent = dir.toAbsolutePath().getParent();
        if (fsync && parent != null) {
            try (FileChannel d = FileChannel.open(parent, StandardOpenOption.READ)) {
                d.force(true);
            }
        }
        counters.fsyncs++;
    }

    void rename(Path from, Path to) throws IOException {
        steps.before("rename " + from.getFileName());
        Files.move(from, to, StandardCopyOption.ATOMIC_MOVE);
        syncDirectory();
    }

    void delete(Path file) throws IOException {
        unlink(file);
        syncDirectory();
    }

    /** Deletes without the directory fsync (the caller does one after several). */
    void unlink(Path file) throws IOException {
        steps.before("delete " + file.getFileName());
        Files.deleteIfExists(file);
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
