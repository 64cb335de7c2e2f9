package io.verbatim.exchange;

import io.verbatim.exchange.proto.TopicResult;
import io.verbatim.model.Shape;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;

/**
 * What this cluster knows of each peer, in memory only: the replication set; each peer's latest state
 * of every topic; what the peer holds of ours (the epochs it acknowledged, what it refused or did not
 * take, a state of a lost past our next one supersedes); when it was last heard, with the R-C11
 * verdict on it; and whether every peer was heard since this controller became the leader. On becoming
 * the leader it forgets the peers' states, what they acknowledged and what our next state supersedes;
 * the topics to retry, the refusals, the verdicts and when each was last heard stay.
 */
final class PeerBook {
    private final ExchangeMetrics metrics;
    private final Set<String> peers;
    /** topic → peer → latest state. */
    private final Map<String, Map<String, PeerState>> states = new ConcurrentHashMap<>();
    /** peer → topic → epoch of ours the peer acknowledged. */
    private final Map<String, Map<String, Long>> acknowledged = new ConcurrentHashMap<>();
    /** peer → topic → the epoch of ours it holds that we are no longer at: our next state supersedes it. */
    private final Map<String, Map<String, Long>> superseding = new ConcurrentHashMap<>();
    /** peer → topics it did not take (stale or failed there) in its latest answer about them. */
    private final Map<String, Set<String>> retrying = new ConcurrentHashMap<>();
    /** peer → topic → why the peer refused our state of it. */
    private final Map<String, Map<String, String>> refusedByPeer = new ConcurrentHashMap<>();
    private final PeerVerdicts verdicts = new PeerVerdicts();
    private final Map<String, Long> lastHeardNanos = new ConcurrentHashMap<>();
    private final Set<String> heardSinceLeadership = ConcurrentHashMap.newKeySet();
    private volatile boolean awaitingEveryPeer;

    PeerBook(Set<String> peers, ExchangeMetrics metrics) {
        this.peers = sorted(peers);
        this.metrics = metrics;
    }

    /** The peers in name order (pushes start in that order: a seeded simulation repeats itself). */
    private static Set<String> sorted(Set<String> peers) {
        return Collections.unmodifiableSortedSet(new TreeSet<>(peers));
    }

    Set<String> peers() {
        return peers;
    }

    /** Forgets every peer's states and what they hold of ours; waits for every peer again (a failover). */
    void forgetForLeadership() {
        states.clear();
        acknowledged.clear();
        superseding.clear();
        heardSinceLeadership.clear();
        awaitingEveryPeer = !peers.isEmpty();
    }

    /** True from {@link #forgetForLeadership} until every peer was heard. */
    boolean awaitingEveryPeer() {
        return awaitingEveryPeer;
    }

    /** {@code peer} answered or called at {@code nowNanos}. */
    void heard(String peer, long nowNanos) {
        lastHeardNanos.put(peer, nowNanos);
        verdicts.answered(peer);
        heardSinceLeadership.add(peer);
        if (awaitingEveryPeer && heardSinceLeadership.containsAll(peers)) {
            awaitingEveryPeer = false;
        }
    }

    // ---- the peers' states ----------------------------------------------------------------------

    @Nullable PeerState held(String topic, String peer) {
        Map<String, PeerState> m = states.get(topic);
        return m == null ? null : m.get(peer);
    }

    /** Every peer's held state of {@code topic}, by peer: read only, and live. */
    Map<String, PeerState> heldOf(String topic) {
        return Collections.unmodifiableMap(states.getOrDefault(topic, Map.of()));
    }

    /**
     * Keeps {@code s} unless a newer state of its cluster got there first: a call and an answer of the
     * same peer may cross (a superseding state replaced what it superseded before it got here).
     */
    void keep(PeerState s) {
        states.computeIfAbsent(s.topic(), t -> new ConcurrentHashMap<>())
                .merge(s.cluster(), s, (held, fresh) -> held.newerThan(fresh) ? held : fresh);
    }

    /** Drops {@code held}, a state its sender no longer has (it superseded it). */
    void drop(PeerState held) {
        Objects.requireNonNull(states.get(held.topic())).remove(held.cluster(), held);
    }

    /** The held states of {@code topic}, with {@code candidate} in place of its cluster's when not null. */
    Collection<PeerState> statesOf(String topic, @Nullable PeerState candidate) {
        Map<String, PeerState> held = states.getOrDefault(topic, Map.of());
        if (candidate == null) {
            return List.copyOf(held.values()); // one snapshot: what the plan reads is what a settled fold keeps
        }
        Map<String, PeerState> with = new HashMap<>(held);
        with.put(candidate.cluster(), candidate);
        return with.values();
    }

    /** Whether every peer's state is among {@code states}. */
    boolean everyPeerHeld(Collection<PeerState> states) {
        Set<String> from = new HashSet<>();
        states.forEach(s -> from.add(s.cluster()));
        return from.containsAll(peers);
    }

    /** Whether every peer's state is among {@code held} and {@code candidate}. */
    boolean everyPeerHeld(Map<String, PeerState> held, @Nullable PeerState candidate) {
        for (String peer : peers) {
            if (!held.containsKey(peer) && (candidate == null || !candidate.cluster().equals(peer))) {
                return false;
            }
        }
        return true;
    }

    /** The shapes of the held states of {@code topic}. */
    List<Shape> shapesOf(String topic) {
        List<Shape> shapes = new ArrayList<>();
        states.getOrDefault(topic, Map.of()).values().forEach(p -> shapes.add(p.shape()));
        return shapes;
    }

    /** The caps effective for {@code topic}: the minimum over {@code local} and the peers' latest states. */
    Caps effectiveCaps(String topic, Caps local) {
        return Caps.min(local, states.getOrDefault(topic, Map.of()).values().stream().map(PeerState::caps).toList());
    }

    /** Each peer's caps, as its latest state of any topic carries them. */
    Map<String, Caps> peerCaps() {
        Map<String, Caps> latest = new HashMap<>();
        states.values().forEach(m -> latest.putAll(capsOf(m.values())));
        return latest;
    }

    static Map<String, Caps> capsOf(Collection<PeerState> states) {
        Map<String, Caps> out = new HashMap<>();
        states.forEach(s -> out.put(s.cluster(), s.caps()));
        return out;
    }

    /** A copy of every held state, topic → peer → state. */
    Map<String, Map<String, PeerState>> view() {
        Map<String, Map<String, PeerState>> copy = new HashMap<>();
        states.forEach((t, m) -> copy.put(t, Map.copyOf(m)));
        return copy;
    }

    // ---- what each peer holds of ours -----------------------------------------------------------

    /**
     * Records {@code peer}'s results on the states we sent it at {@code sentEpochs}; a topic it did not
     * take is left for {@link #retryTopics}.
     *
     * @return the results of topics it found stale
     */
    List<TopicResult> answered(String peer, Map<String, Long> sentEpochs, List<TopicResult> results) {
        Set<String> retry = retrying.computeIfAbsent(peer, p -> ConcurrentHashMap.newKeySet());
        List<TopicResult> stale = new ArrayList<>();
        for (TopicResult r : results) {
            if (!sentEpochs.containsKey(r.getTopic())) {
                continue; // a result for a topic we did not send: nothing to record
            }
            if (took(peer, r, sentEpochs.get(r.getTopic()))) {
                retry.remove(r.getTopic());
            } else {
                retry.add(r.getTopic());
            }
            if (r.getCode() == TopicResult.Code.STALE) {
                stale.add(r);
            }
        }
        return stale;
    }

    /** Records one topic's result; true when nothing about it needs the call made again. */
    private boolean took(String peer, TopicResult r, long epoch) {
        String topic = r.getTopic();
        switch (r.getCode()) {
            case ACCEPTED:
                Map<String, Long> acked = acknowledged.computeIfAbsent(peer, p -> new ConcurrentHashMap<>());
                Long before = acked.get(topic);
                if (before == null || before < epoch) { // read first: an epoch acknowledged again is the usual case
                    acked.merge(topic, epoch, Math::max);
                }
                forget(superseding, peer, topic);
                forget(refusedByPeer, peer, topic);
                return true;
            case STALE:
                return false;
            case INVALID:
            case UNKNOWN_TOPIC:
                refusedByPeer.computeIfAbsent(peer, p -> new ConcurrentHashMap<>()).put(topic, r.getDetail());
                metrics.refusedByPeer.increment();
                return true;
            default:
                refusedByPeer.computeIfAbsent(peer, p -> new ConcurrentHashMap<>()).put(topic, r.getDetail());
                return false;
        }
    }

    private static void forget(Map<String, ? extends Map<String, ?>> byPeer, String peer, String topic) {
        Map<String, ?> m = byPeer.get(peer);
        if (m != null) {
            m.remove(topic);
        }
    }

    /** {@code peer} holds our state of {@code topic} at {@code epoch}, of a lost past: our next one supersedes it. */
    void supersede(String peer, String topic, long epoch) {
        superseding.computeIfAbsent(peer, p -> new ConcurrentHashMap<>()).put(topic, epoch);
    }

    /** topic → the epoch of ours {@code peer} holds that our next state of the topic supersedes. */
    Map<String, Long> superseding(String peer) {
        return superseding.getOrDefault(peer, Map.of());
    }

    /**
     * Topics {@code peer} did not take in its latest answers (stale or failed there): worth sending again.
     * Sorted, so that they are sent again in the same order in every run ({@code Set.copyOf}'s order changes
     * from one JVM to the next, which made a seeded simulation unrepeatable).
     */
    SortedSet<String> retryTopics(String peer) {
        Set<String> topics = retrying.get(peer);
        return topics == null ? Collections.emptySortedSet() : Collections.unmodifiableSortedSet(new TreeSet<>(topics));
    }

    OptionalLong acknowledgedEpoch(String peer, String topic) {
        Long epoch = acknowledged.getOrDefault(peer, Map.of()).get(topic);
        return epoch == null ? OptionalLong.empty() : OptionalLong.of(epoch);
    }

    Optional<String> refusedOurState(String peer, String topic) {
        return Optional.ofNullable(refusedByPeer.getOrDefault(peer, Map.of()).get(topic));
    }

    // ---- verdicts ---------------------------------------------------------------------------------

    /** {@code peer} answered that it has no exchange endpoint. */
    void unsupported(String peer) {
        verdicts.unsupported(peer);
    }

    boolean hasAnswered(String peer) {
        return lastHeardNanos.containsKey(peer);
    }

    OptionalLong lastHeardNanos(String peer) {
        Long heard = lastHeardNanos.get(peer);
        return heard == null ? OptionalLong.empty() : OptionalLong.of(heard);
    }

    Flux<Boolean> verdicts(String peer) {
        return verdicts.of(peer);
    }

    boolean isUnsupported(String peer) {
        return verdicts.isUnsupported(peer);
    }

    PeerStatus.Verdict verdict(String peer) {
        return verdicts.verdict(peer);
    }
}
