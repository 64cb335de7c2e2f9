package io.verbatim.exchange;

import com.google.protobuf.CodedOutputStream;
import io.verbatim.exchange.proto.ExchangeRequest;
import io.verbatim.exchange.proto.TopicState;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;
import java.util.random.RandomGenerator;
import org.jspecify.annotations.Nullable;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.util.Logger;
import reactor.util.Loggers;
import reactor.util.retry.Retry;

/**
 * The sending side of the exchange: for every peer, the whole state of every topic (E9) at start and on
 * every anti-entropy tick, and the state of a topic at once when it changes. Changes that arrive while a
 * push is out are gathered into the next push.
 *
 * <p>A push is cut into calls under the peer's body limit (what its answers say it reads; the local
 * limit until it said; halved, and remembered, when a call is refused as too large; halved when a call gets
 * no answer within the request timeout, and doubled back by calls of at least half that limit answered
 * within a quarter of it), each call retried until the peer answers it: with exponential backoff when the
 * peer is unreachable, busy or conflicting (timeouts, 409, 429, 5xx), and at the anti-entropy cadence when
 * retrying at once cannot help (a peer without the endpoint, 404/501, is reported unsupported and probed
 * again; other 4xx are reported).
 * Topics an answer did not take (stale or failed at the peer) are sent again on their own, a few times
 * with backoff, so one topic never holds up the others. A topic state too large for the peer even alone
 * is reported and left out. Waiting is a
 * {@code Mono.delay} on the injected scheduler, the backoff's jitter drawn from a generator a
 * simulation can seed.
 */
public final class Pusher implements Disposable {
    private static final Logger LOG = Loggers.getLogger(Pusher.class);

    private final Controller controller;
    private final ExchangeTransport transport;
    private final ExchangeConfig config;
    private final Scheduler clock;
    private final RandomGenerator random;
    /** A peer's topics not taken are sent again this many times, backing off, before anti-entropy takes over. */
    private static final int RETRIES_OF_TOPICS = 6;
    /** Calls are never cut below this after timeouts (a call carries one topic at least anyway). */
    private static final int MIN_TIMED_OUT_LIMIT = 1024;

    private final Map<String, Integer> peerLimits = new ConcurrentHashMap<>();
    private final Map<String, Integer> refusedLimits = new ConcurrentHashMap<>();
    /** Per peer, the limit its timeouts taught: halved by a call that timed out, doubled by one answered quickly. */
    private final Map<String, Integer> timedOutLimits = new ConcurrentHashMap<>();
    private final Map<String, String> reported = new ConcurrentHashMap<>();
    private final List<Disposable> loops = new ArrayList<>();

    public Pusher(Controller controller, ExchangeTransport transport, ExchangeConfig config, Scheduler clock) {
        this(controller, transport, config, clock, new SplittableRandom());
    }

    /** @param random where the backoff's jitter comes from (seeded in simulations) */
    public Pusher(Controller controller, ExchangeTransport transport, ExchangeConfig config, Scheduler clock,
            RandomGenerator random) {
        this.controller = controller;
        this.transport = transport;
        this.config = config;
        this.clock = clock;
        this.random = random;
    }

    /**
     * Starts a push loop per peer: every topic at once and on every anti-entropy tick; the topics that
     * changed, as soon as they change (changes that arrive while a push is out are gathered into the
     * next one); then, for a while, the topics the peer did not take.
     */
    public synchronized Pusher start() {
        for (String peer : controller.peers()) {
            Due due = new Due();
            Flux<Object> triggers = Flux.merge(Mono.just(Due.ALL), controller.localChanges(),
                    Flux.interval(config.antiEntropyInterval(), clock).map(t -> Due.ALL));
            loops.add(triggers.doOnNext(due::add).onBackpressureLatest()
                    .concatMap(t -> push(peer, due.take()), 1)
                    .subscribe(v -> { }, e -> LOG.error("{}: push loop to {} stopped: {}", controller.cluster(), peer,
                            e.toString())));
        }
        return this;
    }

    /** What the next push carries: every topic, or the ones that changed. */
    private static final class Due {
        static final Object ALL = new Object();
        private boolean all;
        private Set<String> topics = new LinkedHashSet<>();

        synchronized void add(Object trigger) {
            if (trigger == ALL) {
                all = true;
            } else {
                topics.add((String) trigger);
            }
        }

        /** The due topics (null: every topic), emptied. */
        synchronized @Nullable List<String> take() {
            List<String> taken = all ? null : List.copyOf(topics);
            all = false;
            topics = new LinkedHashSet<>();
            return taken;
        }
    }

    private Mono<Void> push(String peer, @Nullable List<String> topics) {
        return topics == null ? pushUntilAcknowledged(peer)
                : pushTopics(peer, topics).then(Mono.defer(() -> retryNotTaken(peer, 1)));
    }

    /** The topics the peer did not take (stale there, or their fold failed), again, a few times, backing off. */
    private Mono<Void> retryNotTaken(String peer, int attempt) {
        List<String> topics = List.copyOf(controller.retryTopics(peer));
        if (topics.isEmpty() || attempt > RETRIES_OF_TOPICS) {
            return Mono.empty(); // what is left goes with the next anti-entropy round
        }
        return Mono.delay(config.retry().delay(attempt, random), clock)
                .then(Mono.defer(() -> pushTopics(peer, topics)))
                .then(Mono.defer(() -> retryNotTaken(peer, attempt + 1)));
    }

    /** {@code topics}' states to {@code peer}, in calls under its limit, each retried until the peer answers it. */
    Mono<Void> pushTopics(String peer, List<String> topics) {
        return controller.statesFor(peer, topics)
                .flatMapMany(request -> Flux.fromIterable(calls(request, limit(peer))))
                .concatMap(call -> untilTaken(peer, call))
                .then();
    }

    /**
     * One push of every topic to {@code peer}, each call retried until the peer takes it. The states are
     * read once for the push: the first attempt of each call sends its part of them, a retry reads its
     * topics' states again.
     */
    public Mono<Void> pushUntilAcknowledged(String peer) {
        return controller.topics().collectList().flatMap(topics -> pushTopics(peer, topics))
                .then(Mono.defer(() -> retryNotTaken(peer, 1)));
    }

    /**
     * The body limit calls to {@code peer} are cut to: what it said it reads (else the local limit), and
     * never more than a limit a 413 taught (something in front of the peer may read less than it says).
     */
    int limit(String peer) {
        return Math.min(Math.min(said(peer), refusedLimits.getOrDefault(peer, Integer.MAX_VALUE)),
                timedOutLimits.getOrDefault(peer, Integer.MAX_VALUE));
    }

    /** What {@code peer} said it reads, else the local limit. */
    private int said(String peer) {
        return peerLimits.getOrDefault(peer, Math.min(config.maxBodyBytes(), controller.maxBodyBytes()));
    }

    /** Sends {@code call} (states read for the push), then, until the peer takes it, its topics' states afresh. */
    private Mono<Void> untilTaken(String peer, ExchangeRequest call) {
        List<String> topics = topicsOf(call);
        AtomicReference<ExchangeRequest> first = new AtomicReference<>(call);
        return Mono.defer(() -> {
            ExchangeRequest states = first.getAndSet(null);
            return states != null ? callOnce(peer, topics, states) : callOnce(peer, topics);
        }).retryWhen(Retry.from(signals -> signals.concatMap(s ->
                Mono.delay(delayAfter(peer, s.failure(), s.totalRetriesInARow() + 1), clock))));
    }

    private Mono<Void> untilTaken(String peer, List<String> topics) {
        return Mono.defer(() -> callOnce(peer, topics)).retryWhen(Retry.from(signals -> signals.concatMap(s ->
                Mono.delay(delayAfter(peer, s.failure(), s.totalRetriesInARow() + 1), clock))));
    }

    private Mono<Void> callOnce(String peer, List<String> topics) {
        return controller.statesFor(peer, topics).flatMap(request -> callOnce(peer, topics, request));
    }

    private Mono<Void> callOnce(String peer, List<String> topics, ExchangeRequest request) {
        return Mono.defer(() -> {
            if (topics.size() > 1 && request.getSerializedSize() > limit(peer)) {
                // The limit shrank, or the states grew, since the push was cut: cut this call again.
                return Flux.fromIterable(cut(request, limit(peer))).concatMap(part -> untilTaken(peer, part)).then();
            }
            long sentAtNanos = clock.now(TimeUnit.NANOSECONDS);
            return transport.send(peer, request).timeout(config.requestTimeout(), clock)
                    .doOnNext(answer -> {
                        if (answer.getMaxBodyBytes() > 0) {
                            peerLimits.put(peer, answer.getMaxBodyBytes());
                        }
                        answered(peer, request.getSerializedSize(), clock.now(TimeUnit.NANOSECONDS) - sentAtNanos);
                    })
                    .flatMap(answer -> controller.onAnswer(peer, request, answer))
                    .onErrorResume(e -> e instanceof ExchangeException x && x.status() == 413,
                            e -> tooLarge(peer, topics, request, e))
                    .doOnError(TimeoutException.class, e -> timedOut(peer, topics, request));
        }).doOnError(e -> {
            controller.failed(peer, e);
            LOG.debug("{}: call to {} failed: {}", controller.cluster(), peer, e.toString());
        });
    }

    /** A call refused as too large: halve the limit and cut it again; one topic alone is reported and left out. */
    private Mono<Void> tooLarge(String peer, List<String> topics, ExchangeRequest request, Throwable e) {
        if (topics.size() == 1) {
            controller.metrics().oversizedStates.increment();
            controller.failed(peer, e);
            LOG.warn("{}: the state of topic '{}' ({} bytes) is too large for {} even alone, and is left out: {}",
                    controller.cluster(), topics.get(0), request.getSerializedSize(), peer, e.getMessage());
            return Mono.empty();
        }
        refusedLimits.put(peer, Math.max(1024, Math.min(limit(peer), request.getSerializedSize()) / 2));
        return callOnce(peer, topics);
    }

    /**
     * A call got no answer within the request timeout: the peer may be unreachable, or still folding a call too
     * large to fold in time (it is cancelled and would be sent again whole, forever). The next calls are cut to
     * half its size, as after a 413, so a large state gets through in calls the peer folds in time; the backoff
     * still spaces the retries.
     */
    private void timedOut(String peer, List<String> topics, ExchangeRequest request) {
        if (topics.size() < 2) {
            return; // one topic cannot be cut: it is retried as it is
        }
        int halved = Math.max(MIN_TIMED_OUT_LIMIT, Math.min(limit(peer), request.getSerializedSize()) / 2);
        Integer before = timedOutLimits.put(peer, halved);
        if (before == null) {
            LOG.info("{}: a call of {} topics ({} bytes) to {} got no answer within {}; cutting the next calls to {} "
                    + "bytes until calls are answered quickly again", controller.cluster(), topics.size(),
                    request.getSerializedSize(), peer, config.requestTimeout(), halved);
        }
    }

    /**
     * A call of {@code bytes} was answered after {@code nanos}. A limit a timeout taught doubles back toward what
     * the peer reads (a partition's timeouts must not leave the calls small for good) once a call of at least half
     * that limit is answered within a quarter of the request timeout: a call twice the limit would then take at
     * most the timeout. A small call answered quickly says nothing of a large one.
     */
    private void answered(String peer, int bytes, long nanos) {
        Integer taught = timedOutLimits.get(peer);
        if (taught == null || bytes * 2L < taught || nanos * 4 > config.requestTimeout().toNanos()) {
            return;
        }
        timedOutLimits.computeIfPresent(peer, (p, limit) -> limit >= said(p) / 2 ? null : limit * 2);
    }

    /** How long to wait before calling again after {@code failure}. */
    private Duration delayAfter(String peer, Throwable failure, long attempt) {
        if (failure instanceof ExchangeException e && !e.isTransient()) {
            String why = e.status() + " " + e.getMessage();
            if (!why.equals(reported.put(peer, why))) {
                LOG.warn("{}: {} refuses our calls ({}); trying again every {}", controller.cluster(), peer, why,
                        config.antiEntropyInterval());
            }
            return config.antiEntropyInterval();
        }
        reported.remove(peer);
        return config.retry().delay(attempt, random);
    }

    /**
     * Cuts a request's topics into calls whose bodies are at most {@code limit} bytes (a topic whose state
     * alone is larger goes alone).
     */
    static List<List<String>> cut(ExchangeRequest request, int limit) {
        List<List<String>> calls = new ArrayList<>();
        for (ExchangeRequest call : calls(request, limit)) {
            calls.add(topicsOf(call));
        }
        return calls;
    }

    /** {@link #cut}, as the requests themselves. */
    static List<ExchangeRequest> calls(ExchangeRequest request, int limit) {
        int overhead = CodedOutputStream.computeStringSize(ExchangeRequest.CLUSTER_FIELD_NUMBER, request.getCluster());
        List<TopicState> states = request.getTopicsList();
        List<ExchangeRequest> calls = new ArrayList<>();
        int from = 0;
        long size = overhead;
        for (int i = 0; i < states.size(); i++) {
            int bytes = CodedOutputStream.computeMessageSize(ExchangeRequest.TOPICS_FIELD_NUMBER, states.get(i));
            if (i > from && size + bytes > limit) {
                calls.add(part(request, from, i));
                from = i;
                size = overhead;
            }
            size += bytes;
        }
        if (from < states.size() || calls.isEmpty()) {
            calls.add(from == 0 ? request : part(request, from, states.size()));
        }
        return calls;
    }

    private static ExchangeRequest part(ExchangeRequest request, int from, int to) {
        return ExchangeRequest.newBuilder().setCluster(request.getCluster())
                .addAllTopics(request.getTopicsList().subList(from, to)).build();
    }

    private static List<String> topicsOf(ExchangeRequest request) {
        List<String> topics = new ArrayList<>(request.getTopicsCount());
        for (TopicState t : request.getTopicsList()) {
            topics.add(t.getTopic());
        }
        return topics;
    }

    @Override
    public synchronized void dispose() {
        loops.forEach(Disposable::dispose);
        loops.clear();
    }

    @Override
    public synchronized boolean isDisposed() {
        return loops.isEmpty();
    }
}
