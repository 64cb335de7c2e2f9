package io.verbatim.runtime;

import io.verbatim.pipeline.memory.ClusterImage;
import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.Map;
import java.util.Optional;

/**
 * A node's in-memory state on disk, between a clean stop and the next start: every topic's
 * {@link ClusterImage} in {@code <dataDir>/state.pb}, written to a temporary file, forced to disk and
 * renamed over the old one, so a reader finds the previous state or the new one whole, never a mix.
 *
 * <p>A {@code running} marker lives beside it while the node runs. A start that finds the marker knows the
 * previous run did not stop cleanly: the state on disk is from the clean stop before, and what was stored
 * after it is gone (the in-memory storage keeps nothing across a crash; the Raft log and the Pulsar
 * adapter do).
 */
final class NodeStateFile {
    static final String STATE = "state.pb";
    static final String RUNNING = "running";

    private final Path dir;

    NodeStateFile(Path dir) {
        this.dir = dir;
    }

    Path state() {
        return dir.resolve(STATE);
    }

    /** Whether the previous run left its marker: it did not stop cleanly. */
    boolean uncleanStop() {
        return Files.exists(dir.resolve(RUNNING));
    }

    /** Marks the node as running (removed by {@link #write} at a clean stop). */
    void markRunning() {
        try {
            Files.createDirectories(dir);
            Files.writeString(dir.resolve(RUNNING), Long.toString(ProcessHandle.current().pid()));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write in the data directory " + dir + ": " + e.getMessage(), e);
        }
    }

    /** The state written at the last clean stop, by topic; empty when there is none. */
    Optional<Map<String, ClusterImage>> read(String cluster) {
        Path file = state();
        if (!Files.exists(file)) {
            return Optional.empty();
        }
        try (InputStream in = new BufferedInputStream(Files.newInputStream(file))) {
            return Optional.of(StateFormat.read(in, cluster));
        } catch (IOException | RuntimeException e) {
            throw new IllegalStateException("the node state in " + file + " cannot be read (" + e.getMessage()
                    + "); move it away to start this cluster empty", e);
        }
    }

    /**
     * Writes every topic's image, then removes the running marker: the next start finds a clean stop.
     *
     * @param writtenAtMs when, for the header
     */
    void write(String cluster, Map<String, ClusterImage> topics, long writtenAtMs) {
        Path tmp = dir.resolve(STATE + ".tmp");
        try {
            Files.createDirectories(dir);
            try (FileChannel channel = FileChannel.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                    StandardOpenOption.TRUNCATE_EXISTING);
                    OutputStream out = new BufferedOutputStream(java.nio.channels.Channels.newOutputStream(channel),
                            1 << 16)) {
                StateFormat.write(out, cluster, topics, writtenAtMs);
                out.flush();
                channel.force(true);
            }
            try {
                Files.move(tmp, state(), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            } catch (AtomicMoveNotSupportedException e) {
                Files.move(tmp, state(), StandardCopyOption.REPLACE_EXISTING);
            }
            try (FileChannel d = FileChannel.open(dir, StandardOpenOption.READ)) {
                d.force(true); // the rename itself survives a crash
            } catch (IOException ignored) {
                // some file systems cannot open a directory for reading: the rename is then as durable as they make it
            }
            Files.deleteIfExists(dir.resolve(RUNNING));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write the node state to " + state() + ": " + e.getMessage(), e);
        }
    }

}
