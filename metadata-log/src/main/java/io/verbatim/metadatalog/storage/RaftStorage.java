package io.verbatim.metadatalog.storage;

import com.google.protobuf.ByteString;
import io.verbatim.metadatalog.proto.HardStateProto;
import io.verbatim.metadatalog.proto.LogEntryProto;
import io.verbatim.metadatalog.proto.SnapshotMetaProto;
import io.verbatim.metadatalog.raft.RecoveredState;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

/**
 * What a member keeps on disk: its hard state (term, vote, commit), its log after the latest snapshot,
 * and that snapshot. Writes are buffered until {@link #sync}: after {@code sync} returns, everything
 * written before it survives a crash; what was written and not synced may be lost, but never half of a
 * record (a torn tail is cut at recovery) and never an entry after a lost one.
 *
 * <p>After a crash the log is a prefix of what was written, no shorter than what was synced (and not
 * replaced since): a replaced suffix never comes back once its replacement was synced, and never mixes
 * with it. The hard state is the one of the last sync or a later one; if the log's last term is above
 * its term, recovery raises the term to it with no vote (a vote in that term was never sent, as it would
 * have been synced first). {@link SegmentedRaftStorage} keeps a change of the commit index alone less
 * durably than a sync (it may fall back to an earlier commit index), which is safe: see its fsync policy.
 *
 * <p>Implementations: {@link SegmentedRaftStorage} (segment files), {@link MemoryRaftStorage} (in memory,
 * with simulated crashes). {@code RaftStorageContract} in the tests is what both pass.
 *
 * <p>One thread uses a storage at a time (the member's driver); it is not thread-safe.
 *
 * <p>A member's storage: {@link #open} (a directory), {@link #inMemory}, or {@link #at} (either).
 */
public interface RaftStorage extends AutoCloseable {

    /**
     * The log in {@code dir} (created if need be, locked while open), recovered, every sync an fsync: what a
     * member whose votes count runs on ({@link SegmentedRaftStorage} on {@link StorageOptions#defaults()}).
     * Throws {@link StorageCorruptionException} if what was durable cannot be read back, and
     * {@link IllegalStateException} if another storage holds the directory.
     */
    static RaftStorage open(Path dir) {
        return SegmentedRaftStorage.open(dir, StorageOptions.defaults());
    }

    /**
     * An empty log in memory ({@link MemoryRaftStorage}): gone with the process, so a member restarted on a
     * new one has forgotten its log and its vote. For a process without a data directory, and for tests.
     */
    static RaftStorage inMemory() {
        return new MemoryRaftStorage();
    }

    /** {@link #open} in {@code dir} when there is one, else {@link #inMemory}. */
    static RaftStorage at(Optional<Path> dir) {
        return dir.map(RaftStorage::open).orElseGet(RaftStorage::inMemory);
    }

    /**
     * The latest snapshot's meta (if any), the hard state, and every entry after the snapshot. Called at
     * start, that is what survived; later, what is stored now (unsynced writes included).
     */
    Recovered recover();

    /**
     * Appends {@code entries}, contiguous and in index order. The first one's index may be at most the
     * last stored index + 1; stored entries at and after it are replaced (Raft's conflicting suffix): the
     * log becomes the stored entries before the first one, then {@code entries}, so stored entries after
     * the batch go too. Entries already stored (same index and term) are not rewritten. Throws
     * {@link IllegalArgumentException}, changing nothing, for a batch that starts at or before the
     * snapshot or after the last index + 1, is not consecutive, or lowers a term.
     */
    void append(List<LogEntryProto> entries);

    /** Replaces the hard state. */
    void saveHardState(HardStateProto state);

    /**
     * Makes everything written so far durable (fsync). The driver calls it once per Ready batch, before
     * it sends that batch's messages: that is what makes a vote or an acknowledged append durable.
     */
    void sync();

    /**
     * Stores a snapshot atomically (a crash leaves either the old or the new one) and then drops the
     * entries it covers. Entries after {@code meta.lastIncluded} are kept if they agree with it (same term
     * at that index), else the whole log is dropped. Syncs what was written before it, and is durable
     * when it returns. {@code meta.lastIncluded.index} must be after the stored snapshot's.
     */
    void saveSnapshot(SnapshotMetaProto meta, ByteString data);

    /** The latest snapshot's data, if any. */
    Optional<ByteString> snapshotData();

    /**
     * Stored entries {@code [fromIndex, toIndexExclusive)} for a catch-up, as many as fit in
     * {@code maxBytes} (record bytes) but at least one if any is stored, so a large entry never stalls a
     * follower. Empty if {@code fromIndex} is after the last entry; throws {@link IllegalArgumentException}
     * if {@code fromIndex} is at or before the snapshot (compacted).
     */
    List<LogEntryProto> read(long fromIndex, long toIndexExclusive, long maxBytes);

    @Override
    void close();

    /** What {@link #recover} found; a member starts from it ({@link RecoveredState}, the core's view of it). */
    record Recovered(Optional<SnapshotMetaProto> snapshot, HardStateProto hardState, List<LogEntryProto> entries)
            implements RecoveredState {
        public Recovered {
            entries = List.copyOf(entries);
        }

        /** A member that never wrote anything. */
        public static Recovered empty() {
            return new Recovered(Optional.empty(), HardStateProto.getDefaultInstance(), List.of());
        }
    }
}
