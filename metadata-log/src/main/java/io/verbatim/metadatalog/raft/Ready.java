package io.verbatim.metadatalog.raft;

import com.google.protobuf.ByteString;
import io.verbatim.metadatalog.proto.HardStateProto;
import io.verbatim.metadatalog.proto.LogEntryProto;
import io.verbatim.metadatalog.proto.RaftMessageProto;
import io.verbatim.metadatalog.proto.RaftPeerRole;
import io.verbatim.metadatalog.proto.SnapshotMetaProto;
import java.util.List;
import java.util.Optional;

/**
 * What the driver must do next, as etcd raft's {@code Ready}. The driver handles one Ready at a time, in
 * this order:
 * <ol>
 *   <li>if {@link #snapshot} is present: {@code storage.saveSnapshot(meta, data)} and restore the state
 *       machine from {@code data} (the state machine is then at {@code meta.lastIncluded.index});</li>
 *   <li>{@code storage.append(entries)} if not empty (the first may replace a conflicting stored suffix);</li>
 *   <li>{@code storage.saveHardState(hardState)} if present;</li>
 *   <li>{@code storage.sync()} — <b>before any message leaves</b>: a vote, an acknowledgement or an entry
 *       sent is a promise about what is on disk;</li>
 *   <li>send {@link #messages} (best effort; losing them is safe);</li>
 *   <li>apply {@link #committedEntries} in order (entries with no body are a leader's no-op, entries with a
 *       {@code configurationEntry} change the membership: neither goes to the state machine's data);</li>
 *   <li>answer {@link #readStates}: a read with {@code requestId} may be served once the state machine has
 *       applied {@code index};</li>
 *   <li>call {@link RaftNode#advance(Ready)}.</li>
 * </ol>
 * {@link RaftNode#ready()} may not be called again before {@code advance}; {@code tick}, {@code step} and
 * the proposals may (their effects go into the next Ready). A crash anywhere in this list is safe: what
 * was not synced is lost, and nothing that depended on it left the member.
 *
 * @param hardState term, vote and commit to persist, when changed since the last Ready
 * @param entries entries to append, in index order
 * @param snapshot a snapshot received from the leader, to install before the entries
 * @param committedEntries entries to apply, in index order, each after every one before it
 * @param messages messages to send after the sync
 * @param readStates linearizable reads that may be served once applied reaches their index
 * @param softState the role and leader, when changed since the last Ready (not persisted)
 */
public record Ready(
        Optional<HardStateProto> hardState,
        List<LogEntryProto> entries,
        Optional<Snapshot> snapshot,
        List<LogEntryProto> committedEntries,
        List<RaftMessageProto> messages,
        List<ReadState> readStates,
        Optional<SoftState> softState) {

    public Ready {
        entries = List.copyOf(entries);
        committedEntries = List.copyOf(committedEntries);
        messages = List.copyOf(messages);
        readStates = List.copyOf(readStates);
    }

    /** Whether this Ready writes anything that must be synced before its messages are sent. */
    public boolean mustSync() {
        return hardState.isPresent() || !entries.isEmpty() || snapshot.isPresent();
    }

    /** A snapshot to install: its meta (last included term and index, configuration) and the state machine's bytes. */
    public record Snapshot(SnapshotMetaProto meta, ByteString data) {
    }

    /**
     * A confirmed linearizable read: once the state machine has applied {@code index}, reading it answers
     * the read {@code requestId} linearizably.
     */
    public record ReadState(long requestId, long index) {
    }

    /** The volatile role and the leader ({@code ""} when unknown) in a term. */
    public record SoftState(RaftPeerRole role, long term, String leader) {
    }
}
