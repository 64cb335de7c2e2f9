package io.verbatim.metadatalog.server;

import io.verbatim.metadatalog.proto.RaftPeerRole;

/** A member's part in its metadata log group now, as its status reports it; named as Ratis' roles. */
public enum MemberRole {
    /** Leads the group in its term: takes proposals and configuration changes, replicates them. */
    LEADER,
    /** A voter campaigning for leadership (also while it pre-votes). */
    CANDIDATE,
    /** A voter following a leader. */
    FOLLOWER,
    /** A member that does not vote: it receives committed entries only. */
    LISTENER;

    static MemberRole of(RaftPeerRole role) {
        return switch (role) {
            case LEADER -> LEADER;
            case CANDIDATE -> CANDIDATE;
            case FOLLOWER -> FOLLOWER;
            case LISTENER -> LISTENER;
            case UNRECOGNIZED -> throw new IllegalArgumentException("role " + role + " is not a member's role");
        };
    }
}
