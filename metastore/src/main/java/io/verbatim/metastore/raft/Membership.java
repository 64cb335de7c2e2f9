package io.verbatim.metastore.raft;

import io.verbatim.metastore.proto.RaftConfigurationProto;
import io.verbatim.metastore.proto.RaftPeerProto;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

/** A configuration read as two disjoint sets of ids, voters and listeners, and the quorum over voters. */
record Membership(RaftConfigurationProto proto, Set<String> voters, Set<String> listeners) {

    static Membership of(RaftConfigurationProto proto) {
        Set<String> voters = new LinkedHashSet<>();
        proto.getPeersList().forEach(p -> voters.add(p.getId()));
        Set<String> listeners = new LinkedHashSet<>();
        proto.getListenersList().forEach(p -> listeners.add(p.getId()));
        return new Membership(proto, Collections.unmodifiableSet(voters), Collections.unmodifiableSet(listeners));
    }

    boolean isVoter(String id) {
        return voters.contains(id);
    }

    boolean isListener(String id) {
        return listeners.contains(id);
    }

    /** Voters and listeners, sorted (the order the leader visits them in). */
    Set<String> members() {
        Set<String> all = new TreeSet<>(voters);
        all.addAll(listeners);
        return all;
    }

    /** A majority of the voters. */
    int quorum() {
        return voters.size() / 2 + 1;
    }

    /**
     * Why {@code next} may not follow this configuration, if it may not: every id non-empty and once, voters
     * and listeners disjoint, at least one voter, and at most one voter added or removed (a listener
     * promoted to voter counts as one voter added, a voter demoted to listener as one removed); any number
     * of listeners may change together.
     */
    Optional<String> refusal(RaftConfigurationProto next) {
        Set<String> seen = new TreeSet<>();
        List<RaftPeerProto> all = new ArrayList<>(next.getPeersList());
        all.addAll(next.getListenersList());
        for (RaftPeerProto p : all) {
            if (p.getId().isEmpty()) {
                return Optional.of("a member has an empty id (address '" + p.getAddress() + "')");
            }
            if (!seen.add(p.getId())) {
                boolean both = next.getPeersList().stream().anyMatch(v -> v.getId().equals(p.getId()))
                        && next.getListenersList().stream().anyMatch(l -> l.getId().equals(p.getId()));
                return Optional.of(both ? "member " + p.getId() + " is both a voter and a listener"
                        : "member " + p.getId() + " appears twice");
            }
        }
        if (next.getPeersCount() == 0) {
            return Optional.of("a configuration needs at least one voter");
        }
        Membership m = of(next);
        Set<String> added = new TreeSet<>(m.voters);
        added.removeAll(voters);
        Set<String> removed = new TreeSet<>(voters);
        removed.removeAll(m.voters);
        if (added.size() + removed.size() > 1) {
            return Optional.of("one voter change at a time: this adds voters " + added + " and removes voters "
                    + removed + "; change one of them per configuration");
        }
        return Optional.empty();
    }
}
