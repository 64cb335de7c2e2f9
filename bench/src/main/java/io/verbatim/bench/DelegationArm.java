package io.verbatim.bench;

import static io.verbatim.bench.DelegationBench.LISTENERS;
import static io.verbatim.bench.DelegationBench.MODES;
import static io.verbatim.bench.DelegationBench.VOTERS;

import io.verbatim.bench.DelegationRounds.Sample;
import io.verbatim.metadatalog.raft.RaftConfig;
import io.verbatim.metadatalog.raft.RaftStatus;
import io.verbatim.metadatalog.server.RaftServer;
import io.verbatim.metadatalog.storage.RaftStorage;
import io.verbatim.metadatalog.transport.RaftTransportMetrics;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.function.UnaryOperator;
import java.util.stream.Collectors;
import org.jspecify.annotations.Nullable;

/**
 * One group of a P7 run (direct, or delegating up to {@code cap} listeners per follower) and what was measured
 * on it; how it is set up (a group on loopback TCP, the assignment made and waited for) and the leader's view
 * of its delegations.
 */
final class DelegationArm {
    final String name;
    /** 0: delegation off. */
    final int cap;
    final RaftGroup group;
    String leader = "";
    /** listener → the follower the admin assigned it to. */
    final Map<String, String> delegations = new TreeMap<>();
    final Map<Integer, List<Sample>> samples = new LinkedHashMap<>();

    DelegationArm(String name, int cap, RaftGroup group) {
        this.name = name;
        this.cap = cap;
        this.group = group;
        MODES.forEach(m -> samples.put(m, new ArrayList<>()));
    }

    List<Sample> samples(int mode) {
        return Objects.requireNonNull(samples.get(mode));
    }

    List<String> delegatedTo(String follower) {
        return delegations.entrySet().stream().filter(e -> e.getValue().equals(follower)).map(Map.Entry::getKey)
                .toList();
    }

    static RaftGroup group(UnaryOperator<RaftConfig> tune) {
        return RaftGroup.tcp(VOTERS, LISTENERS, 1, m -> RaftStorage.inMemory(), tune);
    }

    /**
     * Assigns listeners to the two followers, {@code cap} each in order (l1.. to the first, the next to the
     * second; the rest stay with the leader), and waits until the leader and both followers act on it.
     */
    static void delegate(DelegationArm arm) {
        RaftServer leader = arm.group.server(arm.leader);
        List<String> followers = arm.group.voters.stream().filter(v -> !v.equals(arm.leader)).sorted().toList();
        for (int i = 0; i < arm.group.listeners.size(); i++) {
            int f = i / arm.cap;
            if (f < followers.size()) {
                arm.delegations.put(arm.group.listeners.get(i), followers.get(f));
            }
        }
        leader.updateGroup(current -> current.withDelegations(arm.delegations)).block(Duration.ofSeconds(10));
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (!actingOn(arm)) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException(arm.name + ": the delegations are not in force after 10 s: leader "
                        + leader.status().listenerSources() + "; followers " + followers.stream()
                        .map(f -> f + " feeds " + arm.group.server(f).status().feeding()).toList());
            }
            RaftGroup.sleep(10);
        }
    }

    /** Whether the leader's sources and the followers' feeding lists are the assignment. */
    private static boolean actingOn(DelegationArm arm) {
        RaftStatus leader = arm.group.server(arm.leader).status();
        for (RaftStatus.ListenerSource s : leader.listenerSources()) {
            if (!s.source().equals(arm.delegations.getOrDefault(s.listener(), arm.leader))) {
                return false;
            }
        }
        for (String f : arm.group.voters) {
            if (!f.equals(arm.leader) && !List.copyOf(arm.group.server(f).status().feeding()).stream().sorted().toList()
                    .equals(arm.delegatedTo(f).stream().sorted().toList())) {
                return false;
            }
        }
        return leader.listenerSources().size() == LISTENERS;
    }

    static String describe(DelegationArm arm) {
        Map<String, List<String>> by = new TreeMap<>();
        arm.group.listeners.forEach(l -> by.computeIfAbsent(arm.delegations.getOrDefault(l, arm.leader + " (leader)"),
                k -> new ArrayList<>()).add(l));
        return by.entrySet().stream().map(e -> e.getKey() + " feeds " + e.getValue()).collect(Collectors.joining("; "));
    }

    /** The leader's revocations so far, by listener. */
    static Map<String, Long> revocations(DelegationArm arm) {
        Map<String, Long> out = new TreeMap<>();
        arm.group.server(arm.leader).status().listenerSources().forEach(x -> out.put(x.listener(), x.revocations()));
        return out;
    }

    /** The listeners a follower feeds now, as the leader sees it (assigned and not revoked). */
    static List<String> inForce(DelegationArm arm) {
        return arm.group.server(arm.leader).status().listenerSources().stream()
                .filter(x -> !x.assignedFollower().isEmpty() && !x.revoked() && x.source().equals(x.assignedFollower()))
                .map(RaftStatus.ListenerSource::listener).toList();
    }

    /** A follower all of whose listeners it feeds now (the first in order), waited for; null if none in time. */
    static @Nullable String delegateInForce(DelegationArm arm, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            List<String> now = inForce(arm);
            for (String f : arm.delegations.values().stream().distinct().sorted().toList()) {
                if (now.containsAll(arm.delegatedTo(f))) {
                    return f;
                }
            }
            if (System.nanoTime() >= deadline) {
                return null;
            }
            RaftGroup.sleep(50);
        }
    }

    /** What each follower sent to the listeners, in bytes. */
    static Map<String, Long> followerBytesToListeners(DelegationArm arm) {
        Map<String, Long> out = new TreeMap<>();
        for (String v : arm.group.voters) {
            if (!v.equals(arm.leader)) {
                RaftTransportMetrics m = arm.group.transportMetrics(v);
                out.put(v, arm.group.listeners.stream().mapToLong(m::bytesSent).sum());
            }
        }
        return out;
    }
}
