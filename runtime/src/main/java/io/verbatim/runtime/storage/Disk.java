package io.verbatim.runtime.storage;

import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/** The few file operations a data directory's durability rests on. */
final class Disk {
    private Disk() {
    }

    /** Forces {@code dir}'s entries (a file created or renamed in it) to disk, where the file system allows. */
    static void forceDirectory(Path dir) {
        try (FileChannel d = FileChannel.open(dir, StandardOpenOption.READ)) {
            d.force(true);
        } catch (IOException ignored) {
            // some file systems cannot open a directory for reading: the rename is then as durable as they make it
        }
    }

    /** What writes a file's content. */
    @FunctionalInterface
    interface Content {
        void writeTo(OutputStream out) throws IOException;
    }

    /**
     * Replaces {@code file} whole: written to a temporary file, forced, renamed over it, the rename forced; a
     * reader finds the old content or the new one, never a mix.
     */
    static void replace(Path file, Content content) {
        Path dir = Objects.requireNonNull(file.toAbsolutePath().getParent(), "a file's directory");
        Path tmp = null;
        try {
            Files.createDirectories(dir);
            // a name of its own: two writers never write into each other's temporary file
            tmp = Files.createTempFile(dir, file.getFileName() + ".", ".tmp");
            try (FileChannel channel = FileChannel.open(tmp, StandardOpenOption.WRITE,
                    StandardOpenOption.TRUNCATE_EXISTING);
                    OutputStream out = new BufferedOutputStream(Channels.newOutputStream(channel), 1 << 16)) {
                content.writeTo(out);
                out.flush();
                channel.force(true);
            }
            try {
                Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            } catch (AtomicMoveNotSupportedException e) {
                Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING);
            }
            forceDirectory(dir);
        } catch (IOException e) {
            deleteQuietly(tmp);
            throw new UncheckedIOException("cannot write " + file + ": " + e.getMessage(), e);
        } catch (RuntimeException e) {
            deleteQuietly(tmp);
            throw e;
        }
    }

    private static void deleteQuietly(@Nullable Path tmp) {
        if (tmp == null) {
            return;
        }
        try {
            Files.deleteIfExists(tmp);
        } catch (IOException ignored) {
            // a leftover temporary file is harmless: nothing reads it
        }
    }
}
