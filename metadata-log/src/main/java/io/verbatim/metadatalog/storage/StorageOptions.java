package io.verbatim.metadatalog.storage;

/**
 * How a {@link SegmentedRaftStorage} lays out and syncs its log.
 *
 * @param maxSegmentBytes a segment is closed and a new one started once the next record would take it
 *     past this size (a segment holds at least one record, so one large entry may exceed it)
 * @param syncOnSync whether {@link RaftStorage#sync} (and every structural change: a new, closed,
 *     truncated or deleted file) really fsyncs. {@code false} only in tests and benchmarks: a machine crash
 *     then loses what was "synced", and a Raft member running so may break Raft's safety
 */
public record StorageOptions(long maxSegmentBytes, boolean syncOnSync) {

    /** 8 MiB, as Ratis' default segment size. */
    public static final long DEFAULT_MAX_SEGMENT_BYTES = 8L << 20;

    public StorageOptions {
        if (maxSegmentBytes < 64 || maxSegmentBytes > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("maxSegmentBytes must be in [64, 2^31-1], was " + maxSegmentBytes);
        }
    }

    /** 8 MiB segments, every sync an fsync: what a member runs with. */
    public static StorageOptions defaults() {
        return new StorageOptions(DEFAULT_MAX_SEGMENT_BYTES, true);
    }

    /** Never fsyncs: for tests and benchmarks only, never for a member whose votes count. */
    public static StorageOptions unsafeNoFsync() {
        return new StorageOptions(DEFAULT_MAX_SEGMENT_BYTES, false);
    }

    public StorageOptions withMaxSegmentBytes(long bytes) {
        return new StorageOptions(bytes, syncOnSync);
    }
}
