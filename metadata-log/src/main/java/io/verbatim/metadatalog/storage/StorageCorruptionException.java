package io.verbatim.metadatalog.storage;

import java.nio.file.Path;

/**
 * What was durable cannot be read back as written: a bad record before the torn tail, a closed segment
 * that does not hold what its name says, a gap in the log. Recovery refuses to go on rather than drop
 * entries that may be committed; an operator must look at {@link #file} at {@link #offset}.
 */
public final class StorageCorruptionException extends RuntimeException {
    private final transient Path file;
    private final long offset;

    public StorageCorruptionException(Path file, long offset, String problem) {
        super(file + " at offset " + offset + ": " + problem);
        this.file = file;
        this.offset = offset;
    }

    public Path file() {
        return file;
    }

    /** Byte offset in {@link #file} of the first bad byte or record, -1 if the problem is the file itself. */
    public long offset() {
        return offset;
    }
}
