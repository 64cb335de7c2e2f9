package io.verbatim.metadatalog.server;

import java.util.Optional;

/** A command went to a member that is not the group's leader; the leader it knows of, if any, is named. */
public final class NotLeaderException extends RuntimeException {
    private static final long serialVersionUID = 1L;
    private final transient Optional<String> leader;

    public NotLeaderException(String member, Optional<String> leader) {
        super(member + " is not the leader" + leader.map(l -> "; the leader is " + l).orElse(" and knows no leader"));
        this.leader = leader;
    }

    public Optional<String> leader() {
        return leader;
    }
}
