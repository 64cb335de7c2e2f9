package io.verbatim.metadatalog.raft;

import io.verbatim.metadatalog.proto.RaftMessageProto;
import java.util.Collections;
import java.util.EnumMap;
import java.util.Map;
import java.util.TreeMap;

/**
 * Plain counters of what a member sent (a Micrometer binder at the edge may read them). Heartbeats are
 * AppendEntries with no entries and are counted apart from those carrying entries.
 */
public final class RaftCounters {
    private final EnumMap<RaftMessageProto.BodyCase, Long> messages = new EnumMap<>(RaftMessageProto.BodyCase.class);
    private final TreeMap<String, Long> entryBytes = new TreeMap<>();
    private final TreeMap<String, Long> snapshotBytes = new TreeMap<>();
    private long heartbeats;
    private long entriesSent;
    private long revocations;
    private long restorations;
    private long delegatedEntriesSent;
    private long delegatedEntryBytesSent;

    RaftCounters() {
    }

    void sent(RaftMessageProto message) {
        messages.merge(message.getBodyCase(), 1L, Long::sum);
        if (message.hasAppendEntries() && message.getAppendEntries().getEntriesCount() == 0) {
            heartbeats++;
        }
    }

    void entriesSent(String peer, int count, long bytes) {
        entriesSent += count;
        entryBytes.merge(peer, bytes, Long::sum);
    }

    void revoked() {
        revocations++;
    }

    void restored() {
        restorations++;
    }

    void delegatedEntriesSent(int count, long bytes) {
        delegatedEntriesSent += count;
        delegatedEntryBytesSent += bytes;
    }

    /** Delegations this member, as leader, revoked (it fed those listeners directly meanwhile). */
    public long revocations() {
        return revocations;
    }

    /** Revoked delegations this member, as leader, restored to the admin's assignment. */
    public long restorations() {
        return restorations;
    }

    /** Entries this member sent as a delegate follower to the listeners it feeds (also in {@link #entriesSent}). */
    public long delegatedEntriesSent() {
        return delegatedEntriesSent;
    }

    /** Serialized bytes of the entries this member sent as a delegate follower. */
    public long delegatedEntryBytesSent() {
        return delegatedEntryBytesSent;
    }

    void snapshotSent(String peer, long bytes) {
        snapshotBytes.merge(peer, bytes, Long::sum);
    }

    /** Messages sent with this body, heartbeats included in APPENDENTRIES. */
    public long messagesSent(RaftMessageProto.BodyCase body) {
        return messages.getOrDefault(body, 0L);
    }

    /** AppendEntries sent with no entries. */
    public long heartbeatsSent() {
        return heartbeats;
    }

    /** Entries sent in AppendEntries, counting each copy. */
    public long entriesSent() {
        return entriesSent;
    }

    /** Serialized bytes of entries sent to each peer. */
    public Map<String, Long> entryBytesSentByPeer() {
        return Collections.unmodifiableMap(new TreeMap<>(entryBytes));
    }

    /** Serialized bytes of entries sent to all peers: the leader's entry egress. */
    public long entryBytesSent() {
        return entryBytes.values().stream().mapToLong(Long::longValue).sum();
    }

    /** Snapshot chunk bytes sent to each peer. */
    public Map<String, Long> snapshotBytesSentByPeer() {
        return Collections.unmodifiableMap(new TreeMap<>(snapshotBytes));
    }
}
