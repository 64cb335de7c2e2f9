package io.verbatim.exchange;

import io.verbatim.exchange.proto.ExchangeRequest;
import io.verbatim.exchange.proto.ExchangeResponse;
import io.verbatim.exchange.proto.TopicState;
import io.verbatim.model.Layout;
import io.verbatim.model.Mutation;
import io.verbatim.model.Outcome;
import io.verbatim.model.Shape;
import io.verbatim.store.LayoutStore;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Scheduler;

/**
 * One cluster's side of the layout exchange (PIP-495) for every topic it holds: the peers' latest
 * states (in memory only), the local policy's cold marks and caps, the fold of peer states into the
 * local layout committed through the {@link LayoutStore}, and the per-peer acknowledged epochs.
 *
 * <p>The HTTP endpoint and the simulator both drive this class: {@link #receive} for an arriving
 * state, {@link #stateFor} and {@link #onAnswer} for the sending side.
 */
public final class Controller {
    private final String cluster;
    private final LayoutStore store;
    private final Scheduler clock;
    private final ExchangeMetrics metrics;
    private volatile Set<String> peers;
    private volatile Caps caps;
    private final Map<String, Set<Integer>> coldMarks = new ConcurrentHashMap<>();
    /** topic → peer → latest state. */
    private final Map<String, Map<String, PeerState>> peerStates = new ConcurrentHashMap<>();
    /** peer → topic → epoch of ours the peer acknowledged. */
    private final Map<String, Map<String, Long>> acknowledged = new ConcurrentHashMap<>();
    private final Map<String, Long> lastHeardNanos = new ConcurrentHashMap<>();
    private final Set<String> heardSinceLeadership = ConcurrentHashMap.newKeySet();
    private final Set<String> unsupported = ConcurrentHashMap.newKeySet();
    private final Map<String, Sinks.One<Boolean>> answers = new ConcurrentHashMap<>();
    /** topic → when a peer state we do not yet refine arrived (for the convergence lag). */
    private final Map<String, Long> divergedSinceNanos = new ConcurrentHashMap<>();
    private final Map<String, List<String>> capMismatches = new ConcurrentHashMap<>();
    private final Map<String, Integer> divergedByTopic = new ConcurrentHashMap<>();
    private final Sinks.Many<String> localChanges = Sinks.many().multicast().directBestEffort();
    private volatile boolean deferOwn;

    public Controller(String cluster, Set<String> peers, Caps caps, LayoutStore store, Scheduler clock) {
        this.cluster = cluster;
        this.peers = Set.copyOf(peers);
        this.caps = caps;
        this.store = store;
        this.clock = clock;
        this.metrics = new ExchangeMetrics();
    }

    public String cluster() {
        return cluster;
    }

    public Set<String> peers() {
        return peers;
    }

    public LayoutStore store() {
        return store;
    }

    public ExchangeMetrics metrics() {
        return metrics;
    }

    /** Changes the replication set; states of clusters that left it are dropped. */
    public void replicationSet(Set<String> value) {
        peers = Set.copyOf(value);
        peerStates.values().forEach(m -> m.keySet().retainAll(peers));
        acknowledged.keySet().retainAll(peers);
    }

    /**
     * This controller just became the leader (or restarted): nothing about peers survives, and until it
     * holds every peer's state its own splits, merges and rebuckets wait (PIP-495, failover).
     */
    public void becomeLeader() {
        peerStates.clear();
        acknowledged.clear();
        heardSinceLeadership.clear();
        deferOwn = !peers.isEmpty();
    }

    /** True while the cluster's own layout changes wait for every peer's state. */
    public boolean deferringOwnChanges() {
        return deferOwn;
    }

    /** Topics whose local state changed (layout or cold marks): each is a reason to push at once. */
    public Flux<String> localChanges() {
        return localChanges.asFlux();
    }

    // ---- receiving ----------------------------------------------------------------------------

    /**
     * Handles a peer's push: checks all of it before keeping any of it, keeps each topic's state unless
     * older than the one held, folds it in, commits, and only then answers with this cluster's states.
     *
     * @throws ExchangeException (as the {@code Mono}'s error) naming the problem; nothing changed then
     */
    public Mono<ExchangeResponse> receive(ExchangeRequest request) {
        return Mono.defer(() -> {
            String from = request.getCluster();
            if (!peers.contains(from)) {
                metrics.ignored.increment();
                return Mono.error(new ExchangeException(403, "cluster '" + from + "' is not in the replication set of "
                        + cluster + " " + peers));
            }
            List<PeerState> states = new ArrayList<>();
            Set<String> seen = new HashSet<>();
            for (TopicState t : request.getTopicsList()) {
                PeerState s = States.fromProto(from, t);
                if (!seen.add(s.topic())) {
                    return Mono.error(ExchangeException.badRequest("topic '" + s.topic() + "' appears twice"));
                }
                PeerState held = held(s.topic(), from);
                if (held != null && s.epoch() < held.epoch()) {
                    return Mono.error(new ExchangeException(409, "topic '" + s.topic() + "' from " + from + " at epoch "
                            + s.epoch() + " is older than epoch " + held.epoch() + " already held"));
                }
                states.add(s);
            }
            states.forEach(this::keep);
            heard(from);
            return Flux.fromIterable(states).concatMap(s -> fold(s.topic())).then(Mono.defer(() ->
                    answer(states.stream().map(PeerState::topic).toList())));
        });
    }

    private PeerState held(String topic, String peer) {
        Map<String, PeerState> m = peerStates.get(topic);
        return m == null ? null : m.get(peer);
    }

    private void keep(PeerState s) {
        peerStates.computeIfAbsent(s.topic(), t -> new ConcurrentHashMap<>()).merge(s.cluster(), s,
                (old, fresh) -> fresh.epoch() >= old.epoch() ? fresh : old);
    }

    private void heard(String peer) {
        lastHeardNanos.put(peer, clock.now(TimeUnit.NANOSECONDS));
        answerSink(peer).tryEmitValue(true);
        heardSinceLeadership.add(peer);
        if (deferOwn && heardSinceLeadership.containsAll(peers)) {
            deferOwn = false;
        }
    }

    private Mono<ExchangeResponse> answer(Collection<String> topics) {
        return Flux.fromIterable(topics).concatMap(t -> ownState(t).map(States::toProto)).collectList()
                .map(list -> ExchangeResponse.newBuilder().setCluster(cluster).addAllTopics(list).build());
    }

    // ---- sending ------------------------------------------------------------------------------

    /** This cluster's state of every topic it holds, for one push to {@code peer}. */
    public Mono<ExchangeRequest> stateFor(String peer) {
        return store.topics().concatMap(t -> ownState(t).map(States::toProto)).collectList()
                .map(list -> ExchangeRequest.newBuilder().setCluster(cluster).addAllTopics(list).build());
    }

    /** A peer answered a push: record what it acknowledged and fold in the state it sent back. */
    public Mono<Void> onAnswer(String peer, ExchangeRequest sent, ExchangeResponse answer) {
        return Mono.defer(() -> {
            if (!peer.equals(answer.getCluster()) || !peers.contains(peer)) {
                return Mono.error(new ExchangeException(502, "answer from '" + answer.getCluster() + "' to a push to "
                        + peer));
            }
            Map<String, Long> acks = acknowledged.computeIfAbsent(peer, p -> new ConcurrentHashMap<>());
            sent.getTopicsList().forEach(t -> acks.merge(t.getTopic(), t.getEpoch(), Math::max));
            List<String> topics = new ArrayList<>();
            for (TopicState t : answer.getTopicsList()) {
                PeerState s = States.fromProto(peer, t);
                PeerState held = held(s.topic(), peer);
                if (held == null || s.epoch() >= held.epoch()) {
                    keep(s);
                    topics.add(s.topic());
                }
            }
            heard(peer);
            metrics.success(peer);
            return Flux.fromIterable(topics).concatMap(this::fold).then();
        });
    }

    void failed(String peer, Throwable error) {
        metrics.failure(peer);
        if (error instanceof ExchangeException e && e.isUnsupported()) {
            unsupported.add(peer);
            answerSink(peer).tryEmitValue(false);
        }
    }

    /** Whether {@code peer} has answered since this controller started: the replicators' gate (R-C11). */
    public boolean hasAnswered(String peer) {
        return lastHeardNanos.containsKey(peer);
    }

    /**
     * Completes once {@code peer} has taken part in the exchange ({@code true}: replicators may start
     * toward it) or answered that it has no exchange endpoint ({@code false}: report it unsupported and
     * never write to it). The gate of R-C11.
     */
    public Mono<Boolean> awaitAnswer(String peer) {
        return answerSink(peer).asMono();
    }

    private Sinks.One<Boolean> answerSink(String peer) {
        return answers.computeIfAbsent(peer, p -> Sinks.one());
    }

    /** Whether {@code peer} answered that it has no exchange endpoint: never to be written to (R-C11). */
    public boolean isUnsupported(String peer) {
        return unsupported.contains(peer) && !hasAnswered(peer);
    }

    // ---- folding and local policy --------------------------------------------------------------

    /** Folds the held peer states of {@code topic} into the local layout and commits the result. */
    public Mono<Void> fold(String topic) {
        return store.get(topic).flatMap(before -> store.update(topic, layout -> planFor(topic, layout).mutations(),
                clock.now(TimeUnit.MILLISECONDS)).doOnNext(after -> afterFold(topic, after,
                        after.epoch() != before.epoch()))).then();
    }

    FoldPlan planFor(String topic, Layout layout) {
        Collection<PeerState> states = peerStates.getOrDefault(topic, Map.of()).values();
        FoldPlan plan = Fold.plan(cluster, layout, coldMarks.getOrDefault(topic, Set.of()), caps, states, deferOwn);
        capMismatches.put(topic, plan.capMismatches());
        return plan;
    }

    private void afterFold(String topic, Layout after, boolean changed) {
        Collection<PeerState> states = peerStates.getOrDefault(topic, Map.of()).values();
        Set<Integer> agreed = agreed(topic, after);
        Shape local = Shape.of(after);
        int diverged = 0;
        for (PeerState s : states) {
            diverged += divergence(local, Fold.without(s.shape(), agreed)).diverged().size();
        }
        divergedByTopic.put(topic, diverged);
        boolean refinesAll = diverged == 0;
        long now = clock.now(TimeUnit.NANOSECONDS);
        if (refinesAll) {
            Long since = divergedSinceNanos.remove(topic);
            if (since != null) {
                metrics.convergenceLagNanos.accumulateAndGet(now - since, (a, b) -> b);
            }
        } else {
            divergedSinceNanos.putIfAbsent(topic, now);
        }
        forgetSettledColdMarks(topic, after, states);
        if (changed) {
            localChanges.tryEmitNext(topic); // our layout moved: every peer hears of it at once
        }
    }

    /** The boundaries every cluster agreed to merge: taken out of peers' shapes before comparing. */
    private Set<Integer> agreed(String topic, Layout local) {
        return Fold.agreedToRemove(local, coldMarks.getOrDefault(topic, Set.of()),
                peerStates.getOrDefault(topic, Map.of()).values());
    }

    /** A cold mark is kept until neither this cluster nor any peer has the boundary any more. */
    private void forgetSettledColdMarks(String topic, Layout after, Collection<PeerState> states) {
        Set<Integer> marks = coldMarks.get(topic);
        if (marks == null) {
            return;
        }
        Set<Integer> localBoundaries = Shape.of(after).boundaries();
        marks.removeIf(b -> !localBoundaries.contains(b) && peers.size() == states.size()
                && states.stream().noneMatch(s -> s.shape().boundaries().contains(b)));
    }

    /** This cluster's state of {@code topic}. */
    public Mono<PeerState> ownState(String topic) {
        return store.get(topic).map(l -> PeerState.of(cluster, topic, l, coldMarks.getOrDefault(topic, Set.of()), caps));
    }

    /** The caps effective for {@code topic}: the minimum over this cluster and its peers' latest states. */
    public Caps effectiveCaps(String topic) {
        List<Caps> others = peerStates.getOrDefault(topic, Map.of()).values().stream().map(PeerState::caps).toList();
        return Caps.min(caps, others);
    }

    /**
     * The local policy splits a segment at its midpoint. Refused while deferring after a failover, and
     * when it would exceed an effective cap.
     */
    public Mono<Outcome> split(String topic, long segmentId) {
        return ownChange(topic, Mutation.split(segmentId));
    }

    /** The local policy raises a segment's bucket count (within the effective cap). */
    public Mono<Outcome> rebucket(String topic, long segmentId, int bucketCount) {
        return ownChange(topic, Mutation.rebucket(segmentId, bucketCount));
    }

    private Mono<Outcome> ownChange(String topic, Mutation m) {
        return Mono.defer(() -> {
            if (deferOwn) {
                return Mono.just(new Outcome.Refused(Outcome.Refusal.STALE_EPOCH,
                        "own changes wait until every peer's state is held after the failover"));
            }
            return store.get(topic).flatMap(layout -> {
                Outcome o = layout.apply(m, layout.epoch(), clock.now(TimeUnit.MILLISECONDS));
                if (o instanceof Outcome.Applied a && Fold.exceeds(a.layout(), effectiveCaps(topic))) {
                    return Mono.just((Outcome) new Outcome.Refused(Outcome.Refusal.INVALID_BUCKET_COUNT,
                            "would exceed the effective caps " + effectiveCaps(topic)));
                }
                if (o instanceof Outcome.Applied a) {
                    return store.compareAndSet(topic, layout.epoch(), a.layout())
                            .doOnNext(l -> localChanges.tryEmitNext(topic)).thenReturn(o);
                }
                return Mono.just(o);
            });
        });
    }

    /**
     * The local policy marks a boundary cold (a manual merge is one too): it is merged once every peer
     * marks it cold or no longer has it.
     */
    public Mono<Void> markCold(String topic, int boundary) {
        return Mono.defer(() -> {
            coldMarks.computeIfAbsent(topic, t -> ConcurrentHashMap.newKeySet()).add(boundary);
            localChanges.tryEmitNext(topic);
            return fold(topic);
        });
    }

    /** The local policy finds the boundary hot again. */
    public void unmarkCold(String topic, int boundary) {
        Set<Integer> marks = coldMarks.get(topic);
        if (marks != null && marks.remove(boundary)) {
            localChanges.tryEmitNext(topic);
        }
    }

    public Set<Integer> coldMarks(String topic) {
        return Set.copyOf(coldMarks.getOrDefault(topic, Set.of()));
    }

    // ---- status -------------------------------------------------------------------------------

    /** Per topic and remote: converged or diverged ranges, lag, age of the last state, caps (E11). */
    public Mono<Map<String, Object>> status(BacklogSource backlog) {
        long now = clock.now(TimeUnit.NANOSECONDS);
        return store.topics().concatMap(topic -> store.get(topic).map(layout -> {
            Map<String, Object> remotes = new LinkedHashMap<>();
            for (String peer : new java.util.TreeSet<>(peers)) {
                PeerState s = held(topic, peer);
                Map<String, Object> r = new LinkedHashMap<>();
                if (s == null) {
                    r.put("state", "no state received");
                } else {
                    Divergence d = divergence(Shape.of(layout), Fold.without(s.shape(), agreed(topic, layout)));
                    r.put("peerEpoch", s.epoch());
                    r.put("acknowledgedEpoch", acknowledged.getOrDefault(peer, Map.of()).getOrDefault(topic, -1L));
                    r.put("convergedRanges", d.converged());
                    r.put("divergedRanges", d.diverged());
                    Long heard = lastHeardNanos.get(peer);
                    // A state may land between reading the clock and here: an age is never negative.
                    r.put("lastStateAgeMillis", heard == null ? -1 : Math.max(0, now - heard) / 1_000_000);
                    r.put("capMismatch", !s.caps().equals(caps));
                }
                r.put("replicationBacklog", backlog.backlog(topic, peer));
                remotes.put(peer, r);
            }
            Long since = divergedSinceNanos.get(topic);
            Map<String, Object> t = new LinkedHashMap<>();
            t.put("epoch", layout.epoch());
            t.put("layout", Shape.of(layout).cells().stream().map(c -> c.range().toHexString() + "/N"
                    + c.buckets().count()).toList());
            t.put("convergenceLagMillis", since == null ? 0 : (now - since) / 1_000_000);
            t.put("capMismatches", capMismatches.getOrDefault(topic, List.of()));
            t.put("effectiveCaps", effectiveCaps(topic));
            t.put("remotes", remotes);
            return Map.entry(topic, (Object) t);
        })).collectMap(Map.Entry::getKey, Map.Entry::getValue, LinkedHashMap::new).map(m -> {
            Map<String, Object> out = new LinkedHashMap<>();
            out.put("cluster", cluster);
            out.put("deferringOwnChanges", deferOwn);
            out.put("topics", m);
            return out;
        });
    }

    /** Diverged ranges over all topics and peers as of the last folds: the gauge of R-F. */
    public int divergedRangesNow() {
        return divergedByTopic.values().stream().mapToInt(Integer::intValue).sum();
    }

    /** A peer's cells the local layout refines (converged) or not yet (diverged: it lags there). */
    record Divergence(List<String> converged, List<String> diverged) {
    }

    static Divergence divergence(Shape local, Shape theirs) {
        List<String> diverged = new ArrayList<>();
        List<String> converged = new ArrayList<>();
        for (Shape.Cell c : theirs.cells()) {
            boolean cut = c.range().start() == 0 || local.boundaries().contains(c.range().start());
            boolean buckets = local.cellAt(c.range().start()).buckets().count() >= c.buckets().count();
            (cut && buckets ? converged : diverged).add(c.range().toHexString() + "/N" + c.buckets().count());
        }
        return new Divergence(converged, diverged);
    }

    /** Replication backlog per segment toward a remote, from the replication side (status only). */
    @FunctionalInterface
    public interface BacklogSource {
        BacklogSource NONE = (topic, remote) -> Map.of();

        Map<String, Long> backlog(String topic, String remote);
    }

    Map<String, Map<String, PeerState>> peerStatesView() {
        Map<String, Map<String, PeerState>> copy = new HashMap<>();
        peerStates.forEach((t, m) -> copy.put(t, Map.copyOf(m)));
        return copy;
    }
}
