package io.verbatim.exchange;

import io.verbatim.exchange.proto.ExchangeRequest;
import io.verbatim.exchange.proto.ExchangeResponse;
import io.verbatim.exchange.proto.TopicResult;
import io.verbatim.exchange.proto.TopicState;
import io.verbatim.layoutstore.LayoutStore;
import io.verbatim.model.Layout;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

/**
 * Both ends of an exchange call, topic by topic: a peer's call checked (each state on its own: kept
 * unless older than the one held, dropping one a superseding state replaces), folded and answered with a
 * result per topic and this cluster's states; our states for a call to a peer (superseding what it must);
 * a peer's answer to our call recorded in the {@link PeerBook} and the states it sent back folded; a
 * call that failed counted. One topic's stale, unusable or failing state never refuses the others.
 */
final class Calls {
    private final String cluster;
    private final LayoutStore store;
    private final Adoption adoption;
    private final Scheduler clock;
    private final Caps caps;
    private final PeerBook book;
    private final ClusterMarks marks;
    private final TopicFolds folds;
    private final ExchangeMetrics metrics;
    private volatile int maxBodyBytes = ExchangeConfig.defaults().maxBodyBytes();

    Calls(String cluster, LayoutStore store, Adoption adoption, Scheduler clock, Caps caps, PeerBook book,
            ClusterMarks marks, TopicFolds folds, ExchangeMetrics metrics) {
        this.cluster = cluster;
        this.store = store;
        this.adoption = adoption;
        this.clock = clock;
        this.caps = caps;
        this.book = book;
        this.marks = marks;
        this.folds = folds;
        this.metrics = metrics;
    }

    /** The largest call this cluster's endpoint reads: told to peers in every answer. */
    void maxBodyBytes(int value) {
        maxBodyBytes = value;
    }

    int maxBodyBytes() {
        return maxBodyBytes;
    }

    // ---- a peer's call ----------------------------------------------------------------------------

    /** Checks, folds and answers a peer's call ({@link Controller#receive}). */
    Mono<ExchangeResponse> receive(ExchangeRequest request) {
        return Mono.defer(() -> {
            String from = request.getCluster();
            Set<String> peers = book.peers();
            if (!peers.contains(from)) {
                metrics.ignored.increment();
                return Mono.error(new ExchangeException(403, "cluster '" + from + "' is not in the replication set of "
                        + cluster + " " + peers));
            }
            Map<String, TopicResult> results = new LinkedHashMap<>();
            List<PeerState> candidates = new ArrayList<>();
            for (TopicState t : request.getTopicsList()) {
                if (results.containsKey(t.getTopic())) {
                    return Mono.error(ExchangeException.badRequest("topic '" + t.getTopic() + "' appears twice"));
                }
                results.put(t.getTopic(), check(from, t, candidates));
            }
            if (candidates.isEmpty() && !results.isEmpty()
                    && results.values().stream().allMatch(r -> r.getCode() == TopicResult.Code.INVALID)) {
                return Mono.error(ExchangeException.badRequest(results.values().iterator().next().getDetail()));
            }
            book.heard(from, clock.now(TimeUnit.NANOSECONDS));
            Map<String, Long> folded = new LinkedHashMap<>();
            return Flux.fromIterable(candidates)
                    .concatMap(s -> foldWith(s).doOnNext(after -> folded.put(s.topic(), after.epoch()))
                            .switchIfEmpty(Mono.fromRunnable(() -> results.put(s.topic(),
                            result(s.topic(), TopicResult.Code.UNKNOWN_TOPIC, 0, "cluster " + cluster
                                    + " does not hold topic '" + s.topic() + "'")))).onErrorResume(e -> {
                        metrics.foldFailures.increment();
                        results.put(s.topic(), result(s.topic(), TopicResult.Code.FAILED, 0, failure(s.topic(), e)));
                        return Mono.empty();
                    }))
                    // answered once this node serves what the call folded: one wait for the whole call, not one
                    // per topic (the folds are committed and kept already, whatever the caller does meanwhile)
                    .then(Mono.defer(() -> Flux.fromIterable(folded.entrySet())
                            .flatMap(e -> adoption.adopted(e.getKey(), e.getValue())).then()))
                    .then(Mono.defer(() -> answer(results)));
        });
    }

    /** A result for one arriving state; a usable one joins {@code candidates}. */
    private TopicResult check(String from, TopicState t, List<PeerState> candidates) {
        PeerState held = book.held(t.getTopic(), from);
        PeerState s;
        try {
            s = States.fromProto(from, t, held);
        } catch (ExchangeException e) {
            metrics.invalidStates.increment();
            return result(t.getTopic(), TopicResult.Code.INVALID, 0, String.valueOf(e.getMessage()));
        }
        boolean supersedes = held != null && t.hasSupersedesEpoch() && t.getSupersedesEpoch() == held.epoch();
        if (held != null && s.olderThan(held) && !supersedes) {
            return result(s.topic(), TopicResult.Code.STALE, held.epoch(), "topic '" + s.topic() + "' from " + from
                    + " at epoch " + s.epoch() + (s.epoch() == held.epoch() ? " with older cold marks" : "")
                    + " is older than the state at epoch " + held.epoch() + " already held");
        }
        if (supersedes && held != null && s.olderThan(held)) {
            book.drop(held); // what the sender no longer has goes
        }
        candidates.add(s);
        return result(s.topic(), TopicResult.Code.ACCEPTED, 0, "");
    }

    private static TopicResult result(String topic, TopicResult.Code code, long heldEpoch, String detail) {
        return TopicResult.newBuilder().setTopic(topic).setCode(code).setHeldEpoch(heldEpoch).setDetail(detail).build();
    }

    private static String failure(String topic, Throwable e) {
        return "folding topic '" + topic + "' failed: " + e;
    }

    private Mono<ExchangeResponse> answer(Map<String, TopicResult> results) {
        return Flux.fromIterable(results.keySet()).concatMap(this::ownProto).collectList()
                .map(list -> ExchangeResponse.newBuilder().setCluster(cluster).addAllTopics(list)
                        .addAllResults(results.values()).setMaxBodyBytes(maxBodyBytes).build());
    }

    /**
     * Folds with {@code candidate} in place of its cluster's held state and keeps it once the fold
     * committed: the layout after, or empty when the topic is not held here (nothing kept).
     */
    private Mono<Layout> foldWith(PeerState candidate) {
        return folds.fold(candidate.topic(), candidate);
    }

    // ---- our call -----------------------------------------------------------------------------------

    /** This cluster's states of {@code topics} for a call to {@code peer} (superseding what it must). */
    Mono<ExchangeRequest> statesFor(String peer, List<String> topics) {
        Map<String, Long> supersede = book.superseding(peer);
        return Flux.fromIterable(topics).concatMap(t -> ownProto(t).map(state -> {
            Long held = supersede.get(t);
            return held == null ? state : state.toBuilder().setSupersedesEpoch(held).build();
        })).collectList().map(list -> ExchangeRequest.newBuilder().setCluster(cluster).addAllTopics(list).build());
    }

    /** Records a peer's answer to our call and folds the states it sent back ({@link Controller#onAnswer}). */
    Mono<Void> onAnswer(String peer, ExchangeRequest sent, ExchangeResponse answer) {
        return Mono.defer(() -> {
            if (!peer.equals(answer.getCluster()) || !book.peers().contains(peer)) {
                return Mono.error(new ExchangeException(502, "answer from '" + answer.getCluster() + "' to a call to "
                        + peer));
            }
            Map<String, Long> sentEpochs = new HashMap<>();
            sent.getTopicsList().forEach(t -> sentEpochs.put(t.getTopic(), t.getEpoch()));
            List<TopicResult> stale = book.answered(peer, sentEpochs, answer.getResultsList());
            List<PeerState> newer = new ArrayList<>();
            for (TopicState t : answer.getTopicsList()) {
                PeerState held = book.held(t.getTopic(), peer);
                PeerState s;
                try {
                    s = States.fromProto(peer, t, held);
                } catch (ExchangeException e) {
                    metrics.invalidStates.increment();
                    continue; // its other topics still count
                }
                if (!s.olderThan(held)) {
                    newer.add(s);
                }
            }
            book.heard(peer, clock.now(TimeUnit.NANOSECONDS));
            metrics.success(peer);
            return Flux.fromIterable(stale).concatMap(r -> supersedeIfLost(peer, r))
                    .thenMany(Flux.fromIterable(newer).concatMap(s -> foldWith(s).onErrorResume(e -> {
                        metrics.foldFailures.increment();
                        return Mono.empty(); // not kept: the next answer or push brings it again
                    })))
                    .then();
        });
    }

    /**
     * The peer holds a state of ours at an epoch we are not at any more (a lost or restored store, a
     * forged epoch): our next state of that topic supersedes it. An older push that arrived late is not
     * that case: our current epoch is at or past what the peer holds, and the next push simply wins.
     */
    private Mono<Void> supersedeIfLost(String peer, TopicResult r) {
        return store.get(r.getTopic()).filter(current -> r.getHeldEpoch() > current.epoch())
                .doOnNext(current -> book.supersede(peer, r.getTopic(), r.getHeldEpoch()))
                .then();
    }

    /** A call to {@code peer} failed: counted; a peer without the endpoint is reported unsupported. */
    void failed(String peer, Throwable error) {
        String why = error.getMessage() == null ? error.toString() : error.getMessage();
        metrics.failure(peer, error instanceof ExchangeException e ? e.status() + ": " + why : why);
        if (error instanceof ExchangeException e && e.isUnsupported()) {
            book.unsupported(peer);
        }
    }

    /** This cluster's state of {@code topic} on the wire, made from the layout at once. */
    private Mono<TopicState> ownProto(String topic) {
        return store.get(topic).map(layout -> States.toProto(topic, layout, marks.exchanged(topic), caps,
                marks.version(topic)));
    }
}
