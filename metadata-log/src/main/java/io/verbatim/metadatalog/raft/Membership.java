package io.verbatim.metadatalog.raft;

import io.verbatim.metadatalog.proto.ListenerDelegationProto;
import io.verbatim.metadatalog.proto.RaftConfigurationProto;
import io.verbatim.metadatalog.proto.RaftPeerProto;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * A configuration read as two disjoint sets of ids, voters and listeners, the quorum over voters, and the
 * admin's delegations (listener -> the follower that feeds it).
 */
record Membership(RaftConfigurationProto proto, Set<String> voters, Set<String> listeners,
        Map<String, String> delegations) {

    static Membership of(RaftConfigurationProto proto) {
        Set<String> voters = new LinkedHashSet<>();
        proto.getPeersList().forEach(p -> voters.add(p.getId()));
        Set<String> listeners = new LinkedHashSet<>();
        proto.getListenersList().forEach(p -> listeners.add(p.getId()));
        Map<String, String> delegations = new TreeMap<>();
        proto.getDelegationsList().forEach(d -> delegations.putIfAbsent(d.getListener(), d.getFollower()));
        return new Membership(proto, Collections.unmodifiableSet(voters), Collections.unmodifiableSet(listeners),
                Collections.unmodifiableMap(delegations));
    }

    /** The listeners the admin assigned to {@code follower}, sorted. */
    Set<String> assignedTo(String follower) {
        Set<String> out = new TreeSet<>();
        delegations.forEach((l, f) -> {
            if (f.equals(follower)) {
                out.add(l);
            }
        });
        return out;
    }

    /**
     * Why the delegations of {@code conf} are invalid, if they are: each names a listener of {@code conf}
     * (once) and a voter of it, and no voter feeds more than {@code maxPerFollower} listeners.
     */
    static Optional<String> delegationRefusal(RaftConfigurationProto conf, int maxPerFollower) {
        Membership m = of(conf);
        Set<String> seen = new TreeSet<>();
        Map<String, Integer> perFollower = new TreeMap<>();
        for (ListenerDelegationProto d : conf.getDelegationsList()) {
            String l = d.getListener();
            String f = d.getFollower();
            if (!m.isListener(l)) {
                return Optional.of("delegation " + l + " -> " + f + ": " + (m.isVoter(l) ? l + " is a voter, "
                        + "only a listener is delegated" : l + " is not a listener of the configuration"));
            }
            if (!m.isVoter(f)) {
                return Optional.of("delegation " + l + " -> " + f + ": " + (m.isListener(f) ? f + " is a listener, "
                        + "only a voter feeds listeners" : f + " is not a voter of the configuration"));
            }
            if (!seen.add(l)) {
                return Optional.of("listener " + l + " is delegated twice; assign it to one follower");
            }
            int n = perFollower.merge(f, 1, Integer::sum);
            if (n > maxPerFollower) {
                return Optional.of("follower " + f + " is assigned " + m.assignedTo(f).size() + " listeners "
                        + m.assignedTo(f) + ", more than maxListenersPerFollower " + maxPerFollower);
            }
        }
        return Optional.empty();
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
