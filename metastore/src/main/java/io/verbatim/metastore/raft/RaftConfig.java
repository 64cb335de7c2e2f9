package io.verbatim.metastore.raft;

/**
 * How one member runs the protocol. Times are in ticks: the driver calls {@link RaftNode#tick} at a fixed
 * period of its choosing (say 50 ms), and nothing in the core reads a clock.
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
        int snapshotChunkBytes) {

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
    }

    /** Defaults: 10 election ticks, 1 heartbeat tick, 1 MiB per append, 8 in flight, check-quorum and
     * pre-vote on, 1 MiB snapshot chunks. */
    public static RaftConfig defaults(String memberId, String groupId) {
        return new RaftConfig(memberId, groupId, 10, 1, 1 << 20, 8, true, true, 1 << 20);
    }

    public RaftConfig withElectionTicks(int ticks) {
        return new RaftConfig(memberId, groupId, ticks, heartbeatTicks, maxEntriesBytesPerAppend,
                maxInflightAppends, checkQuorum, preVote, snapshotChunkBytes);
    }

    public RaftConfig withHeartbeatTicks(int ticks) {
        return new RaftConfig(memberId, groupId, electionTicks, ticks, maxEntriesBytesPerAppend,
                maxInflightAppends, checkQuorum, preVote, snapshotChunkBytes);
    }

    public RaftConfig withMaxEntriesBytesPerAppend(long bytes) {
        return new RaftConfig(memberId, groupId, electionTicks, heartbeatTicks, bytes, maxInflightAppends,
                checkQuorum, preVote, snapshotChunkBytes);
    }

    public RaftConfig withMaxInflightAppends(int appends) {
        return new RaftConfig(memberId, groupId, electionTicks, heartbeatTicks, maxEntriesBytesPerAppend, appends,
                checkQuorum, preVote, snapshotChunkBytes);
    }

    public RaftConfig withCheckQuorum(boolean on) {
        return new RaftConfig(memberId, groupId, electionTicks, heartbeatTicks, maxEntriesBytesPerAppend,
                maxInflightAppends, on, preVote, snapshotChunkBytes);
    }

    public RaftConfig withPreVote(boolean on) {
        return new RaftConfig(memberId, groupId, electionTicks, heartbeatTicks, maxEntriesBytesPerAppend,
                maxInflightAppends, checkQuorum, on, snapshotChunkBytes);
    }

    public RaftConfig withSnapshotChunkBytes(int bytes) {
        return new RaftConfig(memberId, groupId, electionTicks, heartbeatTicks, maxEntriesBytesPerAppend,
                maxInflightAppends, checkQuorum, preVote, bytes);
    }
}
