package io.verbatim.metadatalog.raft;

/**
 * How one member runs the protocol. Times are in ticks: the driver calls {@link RaftNode#tick} at a fixed
 * period of its choosing (say 50 ms), and nothing in the core reads a clock. Build one by name:
 * {@link #defaults(String, String)}, then the {@code withX} copies for what differs (the canonical
 * constructor is what those copies call).
 *
 * @param memberId this member's id, as it appears in the configuration ({@code RaftPeerProto.id})
 * @param groupId the Raft group; messages of other groups are dropped
 * @param electionTicks the election timeout: a follower that hears no leader for a random number of ticks
 *     in {@code [electionTicks, 2*electionTicks)} campaigns; a leader that did not hear from a quorum of
 *     voters within {@code electionTicks} steps down (check-quorum); a voter that heard a leader within
 *     {@code electionTicks} refuses (pre-)votes; a leadership transfer not done within it is abandoned
 * @param heartbeatTicks how often a leader sends heartbeats; less than {@code electionTicks}
 * @param maxEntriesBytesPerAppend at most this many bytes of entries in one AppendEntries (at least one
 *     entry is always sent, however large)
 * @param maxInflightAppends the pipelining window: at most this many AppendEntries carrying entries are
 *     outstanding to one member in the replicate state
 * @param checkQuorum a leader steps down if it has not heard from a quorum of voters in an election
 *     timeout, and voters that hear a leader ignore campaigns (leader stickiness)
 * @param preVote a candidate first asks whether it could win, without raising its term
 * @param snapshotChunkBytes the size of one InstallSnapshot chunk
 * @param delegationEnabled listener delegation: as leader, let the followers the configuration's
 *     {@code delegations} name feed their listeners (the leader then only heartbeats those listeners);
 *     off, the leader feeds every listener itself and sends no assignment, and a follower feeds no
 *     listener whatever a leader assigns it
 * @param maxListenersPerFollower a configuration may assign at most this many listeners to one follower
 * @param followerLagThreshold the leader revokes a delegation when the delegate's match lags the leader's
 *     commit by more than this many entries (counted once the delegate answered in this term)
 * @param reassignmentTicks the leader revokes a delegation when the listener's match has not advanced for
 *     this many ticks while the leader's commit is above it; revoked delegations are reconsidered every
 *     this many ticks
 * @param revocationCooldownTicks a revoked delegation is restored no sooner than this many ticks after the
 *     revocation (and only if the delegate is healthy again); doubled for each revocation of the same
 *     delegation in a row, at most 16 times as long, and back to this once a restored delegation stays in
 *     force for twice {@code reassignmentTicks} (0: restore at the next reconsideration, no backoff)
 * @param logTailEntries a compaction ({@link RaftNode#compact}) keeps up to this many entries at and
 *     before the snapshot's index, so a member that far behind (a voter, or a listener its delegate feeds
 *     committed entries only) is still sent entries, not the whole snapshot; 0 drops every entry the
 *     snapshot covers. The tail is kept in memory only: the storage drops what the snapshot covers, and a
 *     restarted member holds no tail until it compacts again
 * @param maxMessageBytes the largest message the transport sends (its frame limit less the frame's header;
 *     {@link Integer#MAX_VALUE} for none): a proposal or configuration whose entry would make an append
 *     larger is refused ({@link Proposal.TooLarge}), since it could never be sent and nothing would commit
 *     behind it. The driver sets it from its transport ({@code RaftTransport.maxMessageBytes()})
 */
public record RaftConfig(
        String memberId,
        String groupId,
        int electionTicks,
        int heartbeatTicks,
        long maxEntriesBytesPerAppend,
        int maxInflightAppends,
        boolean checkQuorum,
        boolean preVote,
        int snapshotChunkBytes,
        boolean delegationEnabled,
        int maxListenersPerFollower,
        long followerLagThreshold,
        int reassignmentTicks,
        int revocationCooldownTicks,
        long logTailEntries,
        int maxMessageBytes) {

    /** Delegation's defaults: off, 5 listeners per follower, lag 100 entries, 100 ticks, cooldown 300 ticks. */
    public static final int DEFAULT_MAX_LISTENERS_PER_FOLLOWER = 5;
    public static final long DEFAULT_FOLLOWER_LAG_THRESHOLD = 100;
    public static final int DEFAULT_REASSIGNMENT_TICKS = 100;
    public static final int DEFAULT_REVOCATION_COOLDOWN_TICKS = 300;

    /**
     * The tail a compaction keeps: 1,000 entries, a tenth of the driver's default {@code snapshotEvery}
     * (10,000), a window of a few hundred milliseconds to seconds of writes. Metadata entries are small
     * (tens to hundreds of bytes), so it costs well under a megabyte of memory, where a state machine's
     * snapshot (a layout of 100,000 topics) is megabytes. etcd keeps 5,000 entries after a snapshot.
     */
    public static final long DEFAULT_LOG_TAIL_ENTRIES = 1_000;

    /** No limit on a message's size (an in-memory transport). */
    public static final int UNLIMITED_MESSAGE_BYTES = Integer.MAX_VALUE;

    public RaftConfig {
        if (memberId == null || memberId.isEmpty()) {
            throw new IllegalArgumentException("memberId must be non-empty, was '" + memberId + "'");
        }
        if (groupId == null) {
            throw new IllegalArgumentException("groupId must be non-null");
        }
        if (heartbeatTicks < 1) {
            throw new IllegalArgumentException("heartbeatTicks must be >= 1, was " + heartbeatTicks);
        }
        if (electionTicks <= heartbeatTicks) {
            throw new IllegalArgumentException("electionTicks must be > heartbeatTicks (" + heartbeatTicks
                    + "), was " + electionTicks);
        }
        if (maxEntriesBytesPerAppend < 1) {
            throw new IllegalArgumentException("maxEntriesBytesPerAppend must be >= 1, was " + maxEntriesBytesPerAppend);
        }
        if (maxInflightAppends < 1) {
            throw new IllegalArgumentException("maxInflightAppends must be >= 1, was " + maxInflightAppends);
        }
        if (snapshotChunkBytes < 1) {
            throw new IllegalArgumentException("snapshotChunkBytes must be >= 1, was " + snapshotChunkBytes);
        }
        if (maxListenersPerFollower < 1) {
            throw new IllegalArgumentException("maxListenersPerFollower must be >= 1, was " + maxListenersPerFollower);
        }
        if (followerLagThreshold < 1) {
            throw new IllegalArgumentException("followerLagThreshold must be >= 1, was " + followerLagThreshold);
        }
        if (reassignmentTicks < 1) {
            throw new IllegalArgumentException("reassignmentTicks must be >= 1, was " + reassignmentTicks);
        }
        if (revocationCooldownTicks < 0) {
            throw new IllegalArgumentException("revocationCooldownTicks must be >= 0, was " + revocationCooldownTicks);
        }
        if (logTailEntries < 0) {
            throw new IllegalArgumentException("logTailEntries must be >= 0, was " + logTailEntries);
        }
        if (maxMessageBytes < 1) {
            throw new IllegalArgumentException("maxMessageBytes must be >= 1, was " + maxMessageBytes);
        }
    }

    /**
     * Member {@code memberId} of group {@code groupId} on the defaults: 10 election ticks, 1 heartbeat tick,
     * 1 MiB per append, 8 in flight, check-quorum and pre-vote on, 1 MiB snapshot chunks, listener delegation
     * off (its knobs at their defaults), a tail of {@link #DEFAULT_LOG_TAIL_ENTRIES}, no limit on a message's
     * size. The named way to build one: change what differs with the {@code withX} copies.
     */
    public static RaftConfig defaults(String memberId, String groupId) {
        return new RaftConfig(memberId, groupId, 10, 1, 1 << 20, 8, true, true, 1 << 20, false,
                DEFAULT_MAX_LISTENERS_PER_FOLLOWER, DEFAULT_FOLLOWER_LAG_THRESHOLD, DEFAULT_REASSIGNMENT_TICKS,
                DEFAULT_REVOCATION_COOLDOWN_TICKS, DEFAULT_LOG_TAIL_ENTRIES, UNLIMITED_MESSAGE_BYTES);
    }

    public RaftConfig withElectionTicks(int ticks) {
        return new RaftConfig(memberId, groupId, ticks, heartbeatTicks, maxEntriesBytesPerAppend, maxInflightAppends,
                checkQuorum, preVote, snapshotChunkBytes, delegationEnabled, maxListenersPerFollower,
                followerLagThreshold, reassignmentTicks, revocationCooldownTicks, logTailEntries, maxMessageBytes);
    }

    public RaftConfig withHeartbeatTicks(int ticks) {
        return new RaftConfig(memberId, groupId, electionTicks, ticks, maxEntriesBytesPerAppend, maxInflightAppends,
                checkQuorum, preVote, snapshotChunkBytes, delegationEnabled, maxListenersPerFollower,
                followerLagThreshold, reassignmentTicks, revocationCooldownTicks, logTailEntries, maxMessageBytes);
    }

    public RaftConfig withMaxEntriesBytesPerAppend(long bytes) {
        return new RaftConfig(memberId, groupId, electionTicks, heartbeatTicks, bytes, maxInflightAppends,
                checkQuorum, preVote, snapshotChunkBytes, delegationEnabled, maxListenersPerFollower,
                followerLagThreshold, reassignmentTicks, revocationCooldownTicks, logTailEntries, maxMessageBytes);
    }

    public RaftConfig withMaxInflightAppends(int appends) {
        return new RaftConfig(memberId, groupId, electionTicks, heartbeatTicks, maxEntriesBytesPerAppend, appends,
                checkQuorum, preVote, snapshotChunkBytes, delegationEnabled, maxListenersPerFollower,
                followerLagThreshold, reassignmentTicks, revocationCooldownTicks, logTailEntries, maxMessageBytes);
    }

    public RaftConfig withCheckQuorum(boolean on) {
        return new RaftConfig(memberId, groupId, electionTicks, heartbeatTicks, maxEntriesBytesPerAppend,
                maxInflightAppends, on, preVote, snapshotChunkBytes, delegationEnabled, maxListenersPerFollower,
                followerLagThreshold, reassignmentTicks, revocationCooldownTicks, logTailEntries, maxMessageBytes);
    }

    public RaftConfig withPreVote(boolean on) {
        return new RaftConfig(memberId, groupId, electionTicks, heartbeatTicks, maxEntriesBytesPerAppend,
                maxInflightAppends, checkQuorum, on, snapshotChunkBytes, delegationEnabled, maxListenersPerFollower,
                followerLagThreshold, reassignmentTicks, revocationCooldownTicks, logTailEntries, maxMessageBytes);
    }

    public RaftConfig withSnapshotChunkBytes(int bytes) {
        return new RaftConfig(memberId, groupId, electionTicks, heartbeatTicks, maxEntriesBytesPerAppend,
                maxInflightAppends, checkQuorum, preVote, bytes, delegationEnabled, maxListenersPerFollower,
                followerLagThreshold, reassignmentTicks, revocationCooldownTicks, logTailEntries, maxMessageBytes);
    }

    /** Listener delegation on or off, its knobs unchanged. */
    public RaftConfig withDelegationEnabled(boolean on) {
        return new RaftConfig(memberId, groupId, electionTicks, heartbeatTicks, maxEntriesBytesPerAppend,
                maxInflightAppends, checkQuorum, preVote, snapshotChunkBytes, on, maxListenersPerFollower,
                followerLagThreshold, reassignmentTicks, revocationCooldownTicks, logTailEntries, maxMessageBytes);
    }

    /** At most this many listeners assigned to one follower (see the record's parameters). */
    public RaftConfig withMaxListenersPerFollower(int listeners) {
        return new RaftConfig(memberId, groupId, electionTicks, heartbeatTicks, maxEntriesBytesPerAppend,
                maxInflightAppends, checkQuorum, preVote, snapshotChunkBytes, delegationEnabled, listeners,
                followerLagThreshold, reassignmentTicks, revocationCooldownTicks, logTailEntries, maxMessageBytes);
    }

    /** How far a delegate may lag the leader's commit, in entries, before its delegations are revoked. */
    public RaftConfig withFollowerLagThreshold(long entries) {
        return new RaftConfig(memberId, groupId, electionTicks, heartbeatTicks, maxEntriesBytesPerAppend,
                maxInflightAppends, checkQuorum, preVote, snapshotChunkBytes, delegationEnabled, maxListenersPerFollower,
                entries, reassignmentTicks, revocationCooldownTicks, logTailEntries, maxMessageBytes);
    }

    /** How long a fed listener may stand still, and how often revoked delegations are reconsidered, in ticks. */
    public RaftConfig withReassignmentTicks(int ticks) {
        return new RaftConfig(memberId, groupId, electionTicks, heartbeatTicks, maxEntriesBytesPerAppend,
                maxInflightAppends, checkQuorum, preVote, snapshotChunkBytes, delegationEnabled, maxListenersPerFollower,
                followerLagThreshold, ticks, revocationCooldownTicks, logTailEntries, maxMessageBytes);
    }

    /** The least wait before a revoked delegation is restored, in ticks (see the record's parameters). */
    public RaftConfig withRevocationCooldownTicks(int ticks) {
        return new RaftConfig(memberId, groupId, electionTicks, heartbeatTicks, maxEntriesBytesPerAppend,
                maxInflightAppends, checkQuorum, preVote, snapshotChunkBytes, delegationEnabled, maxListenersPerFollower,
                followerLagThreshold, reassignmentTicks, ticks, logTailEntries, maxMessageBytes);
    }

    /** The tail of entries a compaction keeps (see the record's parameters); 0 keeps none. */
    public RaftConfig withLogTailEntries(long entries) {
        return new RaftConfig(memberId, groupId, electionTicks, heartbeatTicks, maxEntriesBytesPerAppend,
                maxInflightAppends, checkQuorum, preVote, snapshotChunkBytes, delegationEnabled, maxListenersPerFollower,
                followerLagThreshold, reassignmentTicks, revocationCooldownTicks, entries, maxMessageBytes);
    }

    /** The largest message the transport sends (see the record's parameters). */
    public RaftConfig withMaxMessageBytes(int bytes) {
        return new RaftConfig(memberId, groupId, electionTicks, heartbeatTicks, maxEntriesBytesPerAppend,
                maxInflightAppends, checkQuorum, preVote, snapshotChunkBytes, delegationEnabled, maxListenersPerFollower,
                followerLagThreshold, reassignmentTicks, revocationCooldownTicks, logTailEntries, bytes);
    }
}
