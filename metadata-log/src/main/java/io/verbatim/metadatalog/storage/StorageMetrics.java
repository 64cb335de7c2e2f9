package io.verbatim.metadatalog.storage;

/**
 * A point-in-time copy of a {@link SegmentedRaftStorage}'s counters (all since {@code open}).
 *
 * @param bytesWritten record, header and hard-state bytes written to segment and meta files
 * @param syncs {@link RaftStorage#sync} calls that found something to make durable
 * @param syncNanos time spent in those syncs (fsync of the open segment and the hard state)
 * @param fsyncs every fsync of a file or the directory, structural ones included
 * @param segmentsCreated segment files created
 * @param segments segment files now in the log
 * @param recordsTruncatedAtRecovery whole records cut from a torn tail when opening
 * @param bytesTruncatedAtRecovery bytes cut from a torn tail when opening (partial records included)
 */
public record StorageMetrics(
        long bytesWritten,
        long syncs,
        long syncNanos,
        long fsyncs,
        long segmentsCreated,
        long segments,
        long recordsTruncatedAtRecovery,
        long bytesTruncatedAtRecovery) {
}
