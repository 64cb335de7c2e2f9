package io.verbatim.metadatalog.server;

import io.verbatim.metadatalog.raft.RaftStatus;
import java.util.List;

/**
 * A member of a metadata log as it reports itself: what a status page, a gauge or a leader lookup reads
 * ({@link RaftServer#memberStatus()}).
 *
 * @param memberId this member
 * @param role its role now
 * @param term its current term
 * @param leader the leader it knows in this term, {@code ""} if none
 * @param commitIndex the highest index it knows committed
 * @param appliedIndex the highest index its state machine applied
 * @param lastIndex the last index in its log
 * @param group the configuration in force (the latest in its log, committed or not)
 * @param peers a leader's view of every other member, voters and listeners (empty on non-leaders)
 * @param listenerSources on a leader with delegation on, where each listener gets its entries from now
 *     (empty otherwise)
 * @param feeding on a delegate follower, the listeners it feeds now (empty otherwise)
 */
public record MemberStatus(String memberId, MemberRole role, long term, String leader, long commitIndex,
        long appliedIndex, long lastIndex, Group group, List<Peer> peers, List<ListenerSource> listenerSources,
        List<String> feeding) {

    public MemberStatus {
        peers = List.copyOf(peers);
        listenerSources = List.copyOf(listenerSources);
        feeding = List.copyOf(feeding);
    }

    /** Whether it leads now. */
    public boolean leads() {
        return role == MemberRole.LEADER;
    }

    /**
     * The leader's view of one other member.
     *
     * @param id the member
     * @param voter whether it votes (else it is a listener)
     * @param matchIndex the highest index known to match the leader's log on it
     */
    public record Peer(String id, boolean voter, long matchIndex) {
    }

    /**
     * Where one listener gets its entries from, as the leader sees it.
     *
     * @param listener the listener
     * @param assignedFollower the follower the admin assigned it to, {@code ""} if none
     * @param source who feeds it now: the leader's id, or the delegate follower's
     * @param revoked whether the leader revoked the admin's delegation (and feeds it itself)
     * @param revocationReason why, if revoked
     * @param revocations how many times this leader revoked it
     */
    public record ListenerSource(String listener, String assignedFollower, String source, boolean revoked,
            String revocationReason, long revocations) {
    }

    /** The plain view of a core's status ({@link RaftServer#status()}). */
    public static MemberStatus of(RaftStatus s) {
        return new MemberStatus(s.memberId(), MemberRole.of(s.role()), s.term(), s.leader(), s.commitIndex(),
                s.appliedIndex(), s.lastIndex(), Group.of(s.configuration()),
                s.peers().stream().map(p -> new Peer(p.id(), p.voter(), p.matchIndex())).toList(),
                s.listenerSources().stream().map(l -> new ListenerSource(l.listener(), l.assignedFollower(), l.source(),
                        l.revoked(), l.revocationReason(), l.revocations())).toList(),
                s.feeding());
    }
}
