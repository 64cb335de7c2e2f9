package io.verbatim.runtime.controller;

import io.verbatim.config.ClusterConfig;
import io.verbatim.config.MetadataLogConfig;
import io.verbatim.metadatalog.server.Group;
import io.verbatim.metadatalog.server.MemberStatus;
import io.verbatim.metadatalog.server.NotLeaderException;
import io.verbatim.metadatalog.server.RaftServer;
import io.verbatim.runtime.status.NodeStatus;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Function;
import java.util.stream.Collectors;
import reactor.core.publisher.Mono;

/**
 * Listener delegation in the runtime (SPEC R-H3 … R-H7): the admin's assignment — which voter feeds which
 * listener of a cluster's metadata log — carried by the log's configuration, changed by a configuration
 * change on the leader ({@code setConf}, the review's decision: no automatic selection), the static default
 * spread a log of named broker members starts from when the admin names none, and the leader's view of who
 * feeds whom now.
 */
public final class Delegations {
    private Delegations() {
    }

    /**
     * What differs between the group the YAML names ({@code configured}) and the configuration a member
     * recovered from its disk ({@code held}), which is what it runs on: the log's configuration wins, so an
     * edit of the YAML after the group started changes nothing by itself. Empty when they agree.
     */
    static Optional<String> drift(Group configured, Group held) {
        List<String> out = new ArrayList<>();
        Function<List<Group.Member>, Set<String>> ids = l -> l.stream()
                .map(p -> p.id() + (p.address().isEmpty() ? "" : "@" + p.address()))
                .collect(Collectors.toCollection(TreeSet::new));
        if (!ids.apply(configured.voters()).equals(ids.apply(held.voters()))) {
            out.add("voters " + ids.apply(held.voters()) + " (the YAML names " + ids.apply(configured.voters()) + ")");
        }
        if (!ids.apply(configured.listeners()).equals(ids.apply(held.listeners()))) {
            out.add("listeners " + ids.apply(held.listeners()) + " (the YAML names "
                    + ids.apply(configured.listeners()) + ")");
        }
        if (!of(configured).equals(of(held))) {
            out.add("delegations " + of(held) + " (the YAML names " + of(configured) + "; change them with PUT "
                    + DelegationApi.PATH + ")");
        }
        return out.isEmpty() ? Optional.empty() : Optional.of(String.join("; ", out));
    }

    /**
     * The delegation a networked metadata log of {@code cluster} starts from (every member computes the same from
     * the same file): the admin's {@code clusters[].delegations} when it names any, whole (a listener it does not
     * name is fed by the leader); else, for named broker members with delegation on, {@link #defaultSpread} of
     * the members over the voters; else none, the leader feeds every listener (as before broker members).
     */
    static Map<String, String> initial(ClusterConfig cluster, MetadataLogConfig log) {
        if (!cluster.delegations().isEmpty()) {
            return cluster.delegations();
        }
        if (!log.enabled() || !cluster.namesBrokerMembers()) {
            return Map.of();
        }
        return defaultSpread(cluster.metadataListeners(), cluster.metadataVoters(), log.maxListenersPerFollower());
    }

    /**
     * {@code listeners}, in their order, dealt round-robin to {@code voters} sorted by id, at most
     * {@code maxPerFollower} to each: the first {@code voters × maxPerFollower} listeners are delegated, the rest
     * left to the leader. Deterministic: the same lists give the same assignment in every member.
     */
    static Map<String, String> defaultSpread(List<String> listeners, List<String> voters, int maxPerFollower) {
        if (maxPerFollower < 1) {
            throw new IllegalArgumentException("maxPerFollower is " + maxPerFollower + ": must be at least 1");
        }
        List<String> sorted = voters.stream().sorted().toList();
        Map<String, String> out = new TreeMap<>();
        long capacity = (long) sorted.size() * maxPerFollower;
        for (int i = 0; i < listeners.size() && i < capacity; i++) {
            out.put(listeners.get(i), sorted.get(i % sorted.size()));
        }
        return out;
    }

    /** The admin's assignment in {@code group}, by listener. */
    public static Map<String, String> of(Group group) {
        return new TreeMap<>(group.delegations());
    }

    /**
     * Why {@code assignment} cannot be the delegation of {@code conf} under {@code log}'s settings, naming the
     * entry at fault; empty when it can.
     */
    static Optional<String> refusal(Group group, Map<String, String> assignment, MetadataLogConfig log) {
        if (!log.enabled() && !assignment.isEmpty()) {
            return Optional.of("listener delegation is off (metadataLog.enabled is false): the leader feeds every "
                    + "listener");
        }
        List<String> voters = group.voterIds();
        List<String> listeners = group.listenerIds();
        Map<String, Integer> perFollower = new TreeMap<>();
        for (Map.Entry<String, String> e : new TreeMap<>(assignment).entrySet()) {
            if (!listeners.contains(e.getKey())) {
                return Optional.of("delegation " + e.getKey() + " -> " + e.getValue() + ": " + e.getKey()
                        + " is not a listener of the metadata log (expected one of " + listeners + ")");
            }
            if (!voters.contains(e.getValue())) {
                return Optional.of("delegation " + e.getKey() + " -> " + e.getValue() + ": " + e.getValue()
                        + " is not a voter of the metadata log (expected one of " + voters + ")");
            }
            perFollower.merge(e.getValue(), 1, Integer::sum);
        }
        return perFollower.entrySet().stream().filter(e -> e.getValue() > log.maxListenersPerFollower()).findFirst()
                .map(e -> e.getKey() + " would feed " + e.getValue() + " listeners (metadataLog.maxListenersPerFollower "
                        + "is " + log.maxListenersPerFollower() + ")");
    }

    /**
     * Proposes {@code assignment} on {@code leader}'s current configuration; completes once applied there.
     * Fails with {@link IllegalArgumentException} naming what is wrong with the assignment.
     */
    static Mono<Void> propose(RaftServer leader, Map<String, String> assignment, MetadataLogConfig log) {
        return Mono.defer(() -> {
            MemberStatus s = leader.memberStatus();
            if (!s.leads()) {
                return Mono.error(new NotLeaderException(s.memberId(),
                        s.leader().isEmpty() ? Optional.empty() : Optional.of(s.leader())));
            }
            // checked and changed on the member's own configuration, where it proposes: a configuration
            // change committed in between is kept, not reverted
            return leader.updateGroup(group -> {
                refusal(group, assignment, log).ifPresent(why -> {
                    throw new BadAssignment(why);
                });
                return group.withDelegations(assignment);
            }).onErrorMap(e -> e instanceof IllegalArgumentException && !(e instanceof BadAssignment),
                    // what the core still refuses is transient (a configuration not yet committed, a transfer, a
                    // new leader's first commit): the metadata log cannot take the change now
                    e -> new Unavailable(String.valueOf(e.getMessage())));
        });
    }

    /** What is wrong with an assignment, naming the entry at fault. */
    static final class BadAssignment extends IllegalArgumentException {
        private static final long serialVersionUID = 1L;

        BadAssignment(String why) {
            super(why);
        }
    }

    /** The metadata log cannot take a change now; try again. */
    static final class Unavailable extends RuntimeException {
        private static final long serialVersionUID = 1L;

        Unavailable(String why) {
            super(why);
        }
    }

    /** Every listener's feed as {@code leader} (a leader's status) sees it; empty unless it leads. */
    public static List<NodeStatus.ListenerFeed> feeds(MemberStatus leader) {
        if (!leader.leads()) {
            return List.of();
        }
        Map<String, MemberStatus.ListenerSource> sources = leader.listenerSources().stream()
                .collect(Collectors.toMap(MemberStatus.ListenerSource::listener, s -> s, (a, b) -> a));
        Map<String, String> assigned = of(leader.group());
        return leader.group().listenerIds().stream().map(l -> {
            long lag = leader.peers().stream().filter(p -> p.id().equals(l)).findFirst()
                    .map(p -> Math.max(0, leader.commitIndex() - p.matchIndex())).orElse(-1L);
            MemberStatus.ListenerSource s = sources.get(l);
            if (s == null) {
                return new NodeStatus.ListenerFeed(l, assigned.getOrDefault(l, ""), leader.memberId(), false, false, "",
                        0, lag);
            }
            return new NodeStatus.ListenerFeed(l, s.assignedFollower(), s.source(),
                    !s.source().equals(leader.memberId()), s.revoked(), s.revocationReason(), s.revocations(), lag);
        }).toList();
    }
}
