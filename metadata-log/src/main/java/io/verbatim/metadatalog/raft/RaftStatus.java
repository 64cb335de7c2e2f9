package io.verbatim.metadatalog.raft;

import io.verbatim.metadatalog.proto.RaftConfigurationProto;
import io.verbatim.metadatalog.proto.RaftPeerRole;
import java.util.List;

/**
 * A member's state for a status page, as {@link RaftNode#status} reads it.
 *
 * @param memberId this member
 * @param role LEADER, CANDIDATE (also while pre-voting), FOLLOWER or LISTENER
 * @param preCandidate whether the candidate is still in its pre-vote round
 * @param term the current term
 * @param leader the leader known in this term, {@code ""} if none
 * @param commitIndex the highest index known committed
 * @param appliedIndex the highest index handed to the state machine and advanced
 * @param firstIndex the first index still in the log: the one after the latest snapshot, or before it by
 *     the tail the last compaction kept ({@code RaftConfig.logTailEntries})
 * @param lastIndex the last index in the log
 * @param configuration the configuration in force (the latest one in the log, committed or not)
 * @param configurationIndex the index of the entry (or snapshot) that holds it
 * @param ticks the ticks this member has seen since it started
 * @param peers the leader's view of every other member, voters and listeners (empty on non-leaders)
 * @param listenerSources on a leader with delegation on, where each listener of the configuration gets
 *     its entries from now (empty otherwise)
 * @param feeding on a delegate follower, the listeners it feeds now (empty otherwise)
 */
public record RaftStatus(
        String memberId,
        RaftPeerRole role,
        boolean preCandidate,
        long term,
        String leader,
        long commitIndex,
        long appliedIndex,
        long firstIndex,
        long lastIndex,
        RaftConfigurationProto configuration,
        long configurationIndex,
        long ticks,
        List<PeerStatus> peers,
        List<ListenerSource> listenerSources,
        List<String> feeding) {

    public RaftStatus {
        peers = List.copyOf(peers);
        listenerSources = List.copyOf(listenerSources);
        feeding = List.copyOf(feeding);
    }

    /** Without delegation's parts. */
    public RaftStatus(String memberId, RaftPeerRole role, boolean preCandidate, long term, String leader,
            long commitIndex, long appliedIndex, long firstIndex, long lastIndex, RaftConfigurationProto configuration,
            long configurationIndex, long ticks, List<PeerStatus> peers) {
        this(memberId, role, preCandidate, term, leader, commitIndex, appliedIndex, firstIndex, lastIndex,
                configuration, configurationIndex, ticks, peers, List.of(), List.of());
    }

    /**
     * Where one listener gets its entries from, as the leader sees it.
     *
     * @param listener the listener
     * @param assignedFollower the follower the admin assigned it to, "" if none
     * @param source who feeds it now: the leader's id, or the delegate follower's
     * @param revoked whether the leader revoked the admin's delegation (and feeds it itself)
     * @param revocationReason why, if revoked
     * @param revokedAtTick the leader's tick of the last revocation, -1 if none this term
     * @param revocations how many times this leader revoked it
     * @param revocationsInARow revocations since it last stayed in force for twice reassignmentTicks
     * @param cooldownTicks the cooldown before a restoration: this revocation's if revoked, else the next
     *     one's (revocationCooldownTicks, doubled for each revocation in a row, at most 16 times as long)
     */
    public record ListenerSource(String listener, String assignedFollower, String source, boolean revoked,
            String revocationReason, long revokedAtTick, long revocations, int revocationsInARow,
            long cooldownTicks) {
    }

    /**
     * The leader's view of one member.
     *
     * @param id the member
     * @param voter whether it votes (else it is a listener)
     * @param matchIndex the highest index known to match the leader's log on it
     * @param nextIndex the next index the leader will send it
     * @param state PROBE (finding where the logs agree), REPLICATE (pipelining) or SNAPSHOT (receiving one)
     * @param inflightAppends appends with entries sent and not yet acknowledged
     * @param lastResponseTick the leader's tick count at its last reply, -1 if none this term
     * @param followerCommit the commit index it last reported
     */
    public record PeerStatus(
            String id,
            boolean voter,
            long matchIndex,
            long nextIndex,
            String state,
            int inflightAppends,
            long lastResponseTick,
            long followerCommit) {
    }
}
