package io.verbatim.model.entry;

import org.jspecify.annotations.Nullable;


/**
 * Bytes that are not a valid Pulsar entry. The {@link #problem()} says which rule was broken and the
 * message names the offset, field or value; nothing is ever partly read past such an error.
 */
public final class EntryFormatException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** What was wrong with the bytes. */
    public enum Problem {
        /** The entry does not start with the CRC32C magic {@code 0x0e01}. */
        BAD_MAGIC,
        /** The stored CRC32C does not match the bytes. */
        CHECKSUM_MISMATCH,
        /** The bytes end before a size they declare. */
        TRUNCATED,
        /** The metadata declares a size above the limit (or a negative one). */
        OVERSIZED_METADATA,
        /** The metadata is not a valid {@code MessageMetadata} (or single-message metadata). */
        MALFORMED_METADATA,
        /** The compression type is not one of NONE, LZ4, ZLIB, ZSTD, SNAPPY. */
        UNKNOWN_CODEC,
        /** The payload does not decompress to the declared uncompressed size. */
        CORRUPT_PAYLOAD,
        /** The declared uncompressed size is above the limit. */
        OVERSIZED_PAYLOAD,
        /** {@code num_messages_in_batch} does not match the messages in the payload. */
        BATCH_COUNT_MISMATCH,
        /** {@code entry_hash_min}/{@code entry_hash_max} are half-present, off the ring, or inverted. */
        BAD_STAMP,
        /** The replication source-position property is not {@code ledgerId:entryId[:part]}. */
        BAD_SOURCE_POSITION
    }

    private final Problem problem;

    EntryFormatException(Problem problem, String message) {
        super(problem + ": " + message);
        this.problem = problem;
    }

    EntryFormatException(Problem problem, String message, @Nullable Throwable cause) {
        super(problem + ": " + message, cause);
        this.problem = problem;
    }

    public Problem problem() {
        return problem;
    }
}
