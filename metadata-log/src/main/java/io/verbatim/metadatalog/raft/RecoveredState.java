package io.verbatim.metadatalog.raft;

import io.verbatim.metadatalog.proto.HardStateProto;
import io.verbatim.metadatalog.proto.LogEntryProto;
import io.verbatim.metadatalog.proto.SnapshotMetaProto;
import java.util.List;
import java.util.Optional;

/**
 * What a member's storage recovered, as {@link RaftNode#start} reads it: the latest snapshot's meta (if
 * any), the hard state, and every entry after the snapshot. The storage's own value implements it
 * ({@code RaftStorage.Recovered}, whose {@code empty()} is a new member's), so the core names no storage
 * type: the dependency runs from the disk to the core, as etcd raft's {@code Storage} does.
 */
public interface RecoveredState {
    /** The latest snapshot's meta; empty if the member never took or received one. */
    Optional<SnapshotMetaProto> snapshot();

    /** The term, vote and commit index last saved. */
    HardStateProto hardState();

    /** Every entry after the snapshot, in index order. */
    List<LogEntryProto> entries();
}
