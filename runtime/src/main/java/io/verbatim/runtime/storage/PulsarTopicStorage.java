package io.verbatim.runtime.storage;

import io.verbatim.config.ControllerReplica;
import io.verbatim.embedded.MemorySegments;
import io.verbatim.model.Backoff;
import io.verbatim.model.Compression;
import io.verbatim.model.Layout;
import io.verbatim.model.Segment;
import io.verbatim.model.entry.Message;
import io.verbatim.model.entry.SourcePosition;
import io.verbatim.pipeline.DrainGate;
import io.verbatim.pipeline.ReplicationCursor;
import io.verbatim.pipeline.SourceSegmentLog;
import io.verbatim.pipeline.StartAt;
import io.verbatim.pulsar.PulsarProducer;
import io.verbatim.pulsar.PulsarSegments;
import io.verbatim.pulsar.PulsarStorage;
import io.verbatim.pulsar.SegmentSubscriptions;
import io.verbatim.pulsar.SegmentTopics;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.LongPredicate;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Scheduler;
import reactor.util.Logger;
import reactor.util.Loggers;
import reactor.util.retry.Retry;

/**
 * A topic's segments on the cluster's Apache Pulsar ({@code storage.type: pulsar}): each segment a
 * persistent topic, each cursor a durable subscription, an application's producers one per segment.
 *
 * <p><b>Backlog without blocking.</b> The SPI asks backlogs synchronously (status, metrics, "caught up"),
 * often on an event loop, and only the broker knows them. So every {@code backlogPoll} this storage asks
 * the broker for each segment's subscriptions at once, without blocking, and answers from the last
 * answer; a segment not yet answered for counts one entry of backlog (not caught up until known). With many
 * broker processes in a cluster, each asks only about the segments it acts on ({@link #actsOn}).
 *
 * <p><b>Garbage collection.</b> {@link #prunable} answers from the poll too ({@link PulsarGc}): a sealed root
 * segment goes once an answer asked after its topic was terminated says every subscription is drained (checked
 * exactly, in the internal stats, when the estimate says so) and no consumer is attached. A layout that no
 * longer holds a segment deletes its topic ({@link PulsarSegments#adopt}).
 *
 * <p><b>Layouts in order.</b> Adoptions are queued: each waits for the one before, so a layout's topics
 * exist before a newer layout seals them. One that fails (the broker is away) is tried again with
 * backoff until it is taken or the storage closes, logged at each failure: a layout change is never
 * silently dropped.
 */
public final class PulsarTopicStorage implements TopicStorage {
    private static final Logger LOG = Loggers.getLogger(PulsarTopicStorage.class);
    static final Duration BACKLOG_POLL = Duration.ofMillis(250);
    /** How old the broker's answer about a sealed segment may be for garbage collection to act on it. */
    static final Duration GC_ANSWER_AGE = BACKLOG_POLL.multipliedBy(10);

    private final String cluster;
    private final PulsarStorage storage;
    private final PulsarSegments segments;
    private final PulsarProducer producer;
    private final Scheduler timer;
    private final Backoff backoff;
    /** Whether garbage collection runs ({@code storage.pruneSealed}): only then are sealed roots asked at every poll. */
    private final boolean collects;
    /** segment id → subscription → entries after its mark-delete position, as the broker last said. */
    private final Map<Long, Map<String, Long>> backlogs = new ConcurrentHashMap<>();
    /** sealed root segment id → whether the broker last said it is drained, for garbage collection. */
    private final Map<Long, PulsarGc.Answer> gcAnswers = new ConcurrentHashMap<>();
    /** segment id → its cursor openings under way and when the last one finished. */
    private final Map<Long, PulsarGc.Opens> opens = new ConcurrentHashMap<>();
    private final Sinks.Empty<Void> closed = Sinks.empty();
    private final Disposable polling;
    /** The segments this process acts on: the only ones polled (every one unless told). */
    private volatile LongPredicate acting = id -> true;
    private Mono<Boolean> lastAdoption = Mono.just(false);
    /** The newest epoch given to {@link #adopt}: an older one still queued is skipped. */
    private volatile long newestQueued = -1;
    private long polls;

    private PulsarTopicStorage(String cluster, String producerName, PulsarStorage storage, PulsarSegments segments,
            Backoff backoff, Scheduler timer, boolean collects) {
        this.cluster = cluster;
        this.collects = collects;
        this.storage = storage;
        this.segments = segments;
        this.backoff = backoff;
        this.timer = timer;
        this.producer = new PulsarProducer(storage, segments, producerName);
        this.polling = Flux.interval(Duration.ZERO, BACKLOG_POLL, timer)
                .onBackpressureDrop()
                .concatMap(t -> poll(), 1)
                .subscribe();
    }

    /**
     * The topic's segments from {@code held} on: their topics and each peer's replication subscription made
     * (retried with {@code backoff} while the broker cannot be reached). {@code producerName}: what this broker
     * process's producers are called ({@link #producerName}). {@code collects}: garbage collection asks
     * {@link #prunable}, which needs a fresh answer about every sealed root.
     */
    public static Mono<PulsarTopicStorage> open(String cluster, String producerName, PulsarStorage storage, String topic,
            List<String> peers, Layout held, Backoff backoff, Scheduler timer, boolean collects) {
        return PulsarSegments.open(storage, topic, peers, held, timer, BACKLOG_POLL)
                .retryWhen(retry("open topic " + topic + " on " + storage.settings().adminUrl(), cluster, backoff, timer))
                .map(s -> new PulsarTopicStorage(cluster, producerName, storage, s, backoff, timer, collects));
    }

    /**
     * The name of broker member {@code member}'s producers of {@code cluster}'s segments: Pulsar keeps one producer
     * of a name on a topic and deduplicates by name, so each broker process has its own,
     * {@code verbatim.<cluster>.<member>}. The one brokers process of a cluster that names no broker members
     * ({@value ControllerReplica#BROKERS}) keeps the name it always had, {@code verbatim.<cluster>}, and with it the
     * deduplication its topics hold. A member's name does not change as members are added or removed.
     */
    public static String producerName(String cluster, String member) {
        return member.equals(ControllerReplica.BROKERS) ? "verbatim." + cluster : "verbatim." + cluster + "." + member;
    }

    /** Backoff forever on what retrying can fix, a WARN naming {@code what} and the cause at each failure. */
    static Retry retry(String what, String cluster, Backoff backoff, Scheduler timer) {
        // not what retrying cannot fix (refused credentials or access, an untrusted certificate, a bad request):
        // that fails at once, naming what was refused
        return Retry.backoff(Long.MAX_VALUE, backoff.initial()).maxBackoff(backoff.max())
                .jitter(backoff.jitter()).scheduler(timer).filter(PulsarStorage::isRetriable)
                .doBeforeRetry(s -> LOG.warn("{}: cannot {} (attempt {}): {}; trying again", cluster, what,
                        s.totalRetries() + 1, String.valueOf(s.failure().getMessage())));
    }

    private Mono<Void> poll() {
        Layout layout = segments.layout();
        LongPredicate scope = acting;
        // one no longer acted on forgets its answer: acted on again, it counts as unknown until asked again
        backlogs.keySet().removeIf(id -> layout.segment(id).isEmpty() || !scope.test(id));
        gcAnswers.keySet().removeIf(id -> layout.segment(id).map(s -> !s.isSealed() || !s.isRoot()).orElse(true)
                || !scope.test(id));
        opens.keySet().removeIf(id -> layout.segment(id).isEmpty());
        // a sealed segment every subscription drained stays so: asked again only every 20th poll (a subscription
        // opened later starts there with a backlog), so sealed segments do not add up to a load on the broker;
        // but a sealed root, which garbage collection may delete, at every poll when it runs: its answer must be fresh
        boolean all = polls++ % 20 == 0;
        return Flux.fromIterable(layout.segments().values())
                .filter(s -> scope.test(s.id()))
                .filter(s -> all || !s.isSealed() || collects && s.isRoot() || !drained(s.id()))
                .flatMap(s -> ask(s).onErrorResume(e -> Mono.empty()), 4) // asked again at the next poll
                .then();
    }

    /**
     * Asks the broker about {@code s} as the layout held now has it: its subscriptions' backlogs and, for a
     * sealed root that shows none and no consumer attached, whether it is drained exactly. The layout is held
     * only once its seals are taken, so a segment sealed in it is asked about after its topic was terminated.
     */
    private Mono<Void> ask(Segment s) {
        return Mono.defer(() -> {
            long askedAt = timer.now(TimeUnit.MILLISECONDS);
            return SegmentSubscriptions.stats(storage, segments.topic(), s)
                    .doOnNext(stats -> backlogs.put(s.id(), stats.backlogs()))
                    .filter(stats -> collects && s.isSealed() && s.isRoot())
                    // a consumer still attached (not told yet that the topic ended) would reconnect to the deleted
                    // topic, and Pulsar would make it anew: it keeps the segment until it closes
                    .flatMap(stats -> stats.consumers() == 0
                            && stats.backlogs().values().stream().allMatch(n -> n == 0)
                            ? segments.drainedByAll(s) : Mono.just(false))
                    .doOnNext(drained -> gcAnswers.put(s.id(), new PulsarGc.Answer(askedAt, true, drained)))
                    .then();
        });
    }

    private boolean drained(long segmentId) {
        Map<String, Long> b = backlogs.get(segmentId);
        return b != null && b.values().stream().allMatch(n -> n == 0);
    }

    @Override
    public String topic() {
        return segments.topic();
    }

    @Override
    public Layout layout() {
        return segments.layout();
    }

    @Override
    public Flux<Layout> layouts() {
        return segments.layouts();
    }

    @Override
    public SourceSegmentLog log(long segmentId) {
        return watched(segments.log(segmentId));
    }

    /**
     * {@code log}, its cursor openings counted: garbage collection takes only an answer asked after every
     * opening on the segment finished, which the broker's stats then show (a subscription made just before the
     * answer it missed could otherwise lose the rest of the segment).
     */
    private SourceSegmentLog watched(SourceSegmentLog log) {
        long id = log.segmentId();
        return new SourceSegmentLog() {
            @Override
            public long segmentId() {
                return id;
            }

            @Override
            public Mono<ReplicationCursor> cursor(String name, StartAt startAt) {
                return Mono.defer(() -> {
                    opens.compute(id, (k, o) -> (o == null ? PulsarGc.Opens.NONE : o).started());
                    return log.cursor(name, startAt).doFinally(signal -> opens.compute(id,
                            (k, o) -> (o == null ? PulsarGc.Opens.NONE : o).done(timer.now(TimeUnit.MILLISECONDS))));
                });
            }
        };
    }

    @Override
    public DrainGate drainGate() {
        return segments.drainGate();
    }

    @Override
    public void actsOn(LongPredicate value) {
        acting = value;
    }

    /** 0 for a segment another broker process acts on: its owner counts it. */
    @Override
    public long backlog(long segmentId, String cursorName) {
        if (segments.layout().segment(segmentId).isEmpty() || !acting.test(segmentId)) {
            return 0;
        }
        Map<String, Long> bySubscription = backlogs.get(segmentId);
        if (bySubscription == null) {
            return 1; // not answered yet: not caught up until known
        }
        return bySubscription.getOrDefault(SegmentTopics.subscription(cursorName), 0L);
    }

    @Override
    public synchronized Mono<Boolean> adopt(Layout next) {
        Mono<Boolean> previous = lastAdoption;
        newestQueued = Math.max(newestQueued, next.epoch());
        Mono<Boolean> adoption = previous.onErrorResume(e -> Mono.just(false))
                // A newer layout queued behind this one makes it moot: taking it would make again, and take writes
                // into, a segment the newer one has pruned (and another node deleted); the newer one's materialising
                // covers what this one changes.
                .then(Mono.defer(() -> next.epoch() < newestQueued ? Mono.just(false) : segments.adopt(next)))
                .retryWhen(retry("take layout epoch " + next.epoch() + " of " + segments.topic(), cluster, backoff, timer))
                .takeUntilOther(closed.asMono())
                .defaultIfEmpty(false)
                // what retrying cannot fix is logged and the next layout taken: the watch feeding this goes on
                .onErrorResume(e -> {
                    LOG.error("{}: cannot take layout epoch {} of {}, going on with the next one: {}", cluster,
                            next.epoch(), segments.topic(), String.valueOf(e.getMessage()));
                    return Mono.just(false);
                })
                .cache();
        lastAdoption = adoption;
        // a caller of a skipped one is answered once a layout at least as new is held, as if it were taken
        return adoption.flatMap(taken -> taken || segments.layout().epoch() >= next.epoch() ? Mono.just(taken)
                : segments.layouts().filter(l -> l.epoch() >= next.epoch()).next().map(l -> false)
                        .takeUntilOther(closed.asMono()).defaultIfEmpty(false));
    }

    @Override
    public Mono<List<SourcePosition>> produce(List<Message> messages, Compression codec) {
        return producer.produce(messages, codec);
    }

    @Override
    public Optional<SourceSegmentLog> findLog(long segmentId) {
        return segments.layout().segment(segmentId).map(s -> watched(segments.log(segmentId)));
    }

    @Override
    public Mono<Void> removeCursor(String name) {
        return Flux.fromIterable(segments.layout().segments().values())
                .flatMap((Segment s) -> SegmentSubscriptions.unsubscribe(storage, segments.topic(), s, name), 4)
                .then();
    }

    /**
     * The sealed root segments every subscription on the broker drained, as the poll last found them (see
     * {@link PulsarGc}); does not block. On Pulsar backlog always pins: {@code messageTtlMs} expires nothing.
     */
    @Override
    public List<Long> prunable(long messageTtlMs) {
        return PulsarGc.prunable(segments.layout(), gcAnswers, opens, timer.now(TimeUnit.MILLISECONDS),
                GC_ANSWER_AGE.toMillis());
    }

    @Override
    public Optional<MemorySegments> memory() {
        return Optional.empty();
    }

    @Override
    public void close() {
        closed.tryEmitEmpty();
        polling.dispose();
        try {
            producer.close();
        } catch (RuntimeException e) {
            LOG.warn("{}: closing the producers of {}: {}", cluster, segments.topic(), String.valueOf(e.getMessage()));
        }
    }
}
