package io.verbatim.model.entry;

/**
 * Bounds on what a reader accepts, so that a size field that lies cannot make it allocate
 * without limit.
 *
 * @param maxMetadataBytes the largest {@code MessageMetadata} accepted
 * @param maxUncompressedBytes the largest declared {@code uncompressed_size} accepted
 */
public record EntryLimits(int maxMetadataBytes, int maxUncompressedBytes) {
    /** 1 MiB of metadata; 16 MiB uncompressed (Pulsar's default maximum message size is 5 MiB). */
    public static final EntryLimits DEFAULT = new EntryLimits(1 << 20, 16 << 20);

    public EntryLimits {
        if (maxMetadataBytes < 1) {
            throw new IllegalArgumentException("maxMetadataBytes " + maxMetadataBytes + " must be positive");
        }
        if (maxUncompressedBytes < 0) {
            throw new IllegalArgumentException("maxUncompressedBytes " + maxUncompressedBytes + " is negative");
        }
    }
}
