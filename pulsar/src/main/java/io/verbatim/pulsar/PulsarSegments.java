package io.verbatim.pulsar;

import io.verbatim.model.AdoptionPlan;
import io.verbatim.model.Backoff;
import io.verbatim.model.Layout;
import io.verbatim.model.Segment;
import io.verbatim.pipeline.DrainGate;
import io.verbatim.pipeline.LocalSegments;
import io.verbatim.pipeline.ReplicatorConfig;
import io.verbatim.pipeline.SourceSegmentLog;
import io.verbatim.pipeline.StartAt;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.BiConsumer;
import org.apache.pulsar.common.policies.data.ManagedLedgerInternalStats;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Scheduler;
import reactor.util.retry.Retry;

/**
 * One scalable topic's segments on the local cluster's Pulsar, as a replication link reads them: the
 * layout held here, each segment a topic ({@link SegmentTopics}), each replication cursor a durable
 * subscription.
 *
 * <p>A new layout is taken as its {@link AdoptionPlan} says, the way PIP-468's controller materialises one: the
 * new segments' topics first, each with a replication subscription per peer at its first entry (so nothing
 * written before a replicator starts is missed, and the drain gate never mistakes a missing cursor for a drained
 * one), then the sealed segments' topics terminated, then the topics of segments it no longer has (pruned)
 * deleted, then the layout published. {@link #adopt} is for one caller at a time, as a layout watch is.
 */
public final class PulsarSegments implements LocalSegments {
    /**
     * How {@link #open} retries by default: 100 ms doubling to 10 s between attempts, ±20 %, for as long as the
     * broker cannot be reached.
     */
    public static final Backoff OPEN_BACKOFF = new Backoff(Duration.ofMillis(100), Duration.ofSeconds(10), 0.2);
    private static final Logger log = LoggerFactory.getLogger(PulsarSegments.class);
    private final PulsarStorage storage;
    private final String topic;
    private final List<String> peers;
    private final Scheduler timer;
    private final Duration drainPoll;
    private final Sinks.Many<Layout> layouts = Sinks.many().replay().latest();
    private volatile Layout layout;

    private PulsarSegments(PulsarStorage storage, String topic, List<String> peers, Layout initial, Scheduler timer,
            Duration drainPoll) {
        this.storage = storage;
        this.topic = topic;
        this.peers = List.copyOf(peers);
        this.timer = timer;
        this.drainPoll = drainPoll;
        this.layout = initial;
    }

    /**
     * The topic's segments, starting from {@code initial} once its topics and cursors exist.
     *
     * @param peers the remote clusters this topic replicates to: each gets a cursor on every segment
     * @param timer what the drain gate's polls and the retries wait on
     * @param drainPoll how often the drain gate asks the broker about a parent's backlog
     * @return the segments once their topics and cursors exist, retried on {@link #OPEN_BACKOFF} while the broker
     *     cannot be reached (see {@link #open(PulsarStorage, String, List, Layout, Scheduler, Duration, Backoff)})
     */
    public static Mono<PulsarSegments> open(PulsarStorage storage, String topic, List<String> peers, Layout initial,
            Scheduler timer, Duration drainPoll) {
        return open(storage, topic, peers, initial, timer, drainPoll, OPEN_BACKOFF);
    }

    /**
     * The same, retrying on {@code backoff} (waits on {@code timer}) while the broker cannot be reached or fails:
     * each failed attempt is a WARN naming the admin URL and the cause. An error retrying cannot fix (refused
     * credentials, a 4xx other than a conflict, an untrusted certificate) ends it at once; nothing else does, so
     * a caller that must give up sets its own timeout.
     */
    public static Mono<PulsarSegments> open(PulsarStorage storage, String topic, List<String> peers, Layout initial,
            Scheduler timer, Duration drainPoll, Backoff backoff) {
        return open(storage, topic, peers, initial, timer, drainPoll, backoff, (attempt, e) -> { });
    }

    /** For tests: also told of each failed attempt that will be retried (from 1), before its wait. */
    static Mono<PulsarSegments> open(PulsarStorage storage, String topic, List<String> peers, Layout initial,
            Scheduler timer, Duration drainPoll, Backoff backoff, BiConsumer<Long, Throwable> onRetry) {
        Objects.requireNonNull(topic, "topic");
        Objects.requireNonNull(backoff, "backoff");
        if (drainPoll.isNegative() || drainPoll.isZero()) {
            throw new IllegalArgumentException("drainPoll " + drainPoll + " must be positive");
        }
        PulsarSegments segments = new PulsarSegments(storage, topic, peers, initial, timer, drainPoll);
        String url = storage.settings().adminUrl();
        return Mono.defer(() -> segments.materialise(AdoptionPlan.of(initial)))
                .retryWhen(Retry.from(failures -> failures.concatMap(signal -> {
                    Throwable failure = signal.failure();
                    if (!PulsarStorage.isRetriable(failure)) {
                        log.warn("opening the segments of {} on {} failed, not retried (retrying cannot fix it): {}",
                                topic, url, String.valueOf(failure.getMessage()));
                        return Mono.error(failure);
                    }
                    long attempt = signal.totalRetries() + 1;
                    Duration wait = backoff.delay(attempt, ThreadLocalRandom.current());
                    log.warn("opening the segments of {} on {} failed (attempt {}), retrying in {} ms: {}", topic, url,
                            attempt, wait.toMillis(), String.valueOf(failure.getMessage()));
                    onRetry.accept(attempt, failure);
                    return Mono.delay(wait, timer);
                })))
                .then(Mono.fromRunnable(() -> segments.layouts.tryEmitNext(initial)))
                .thenReturn(segments);
    }

    @Override
    public String topic() {
        return topic;
    }

    @Override
    public Layout layout() {
        return layout;
    }

    @Override
    public Flux<Layout> layouts() {
        return layouts.asFlux();
    }

    /**
     * Takes a newer layout: new segments' topics and cursors, then seals, then the layout published. A
     * layout not newer than the one held is ignored.
     *
     * @return whether it was taken
     */
    public Mono<Boolean> adopt(Layout next) {
        return Mono.defer(() -> {
            Layout current = layout;
            if (next.epoch() <= current.epoch()) {
                return Mono.just(false);
            }
            return materialise(AdoptionPlan.between(current, next)).then(Mono.fromCallable(() -> {
                layout = next;
                layouts.emitNext(next, Sinks.EmitFailureHandler.busyLooping(Duration.ofSeconds(1)));
                return true;
            }));
        });
    }

    /**
     * Carries out {@code plan}: creates its new segments' topics (with their cursors), then terminates what it
     * seals, then deletes the topics of what it prunes (garbage collection).
     */
    private Mono<Void> materialise(AdoptionPlan plan) {
        return Flux.fromIterable(plan.create()).flatMap(this::create, 8).then()
                .then(Flux.fromIterable(plan.seal()).concatMap(s -> storage.seal(topic, s)).then())
                .then(Flux.fromIterable(plan.prune()).flatMap(s -> storage.deleteSegment(topic, s), 8).then());
    }

    private Mono<Void> create(Segment segment) {
        SourceSegmentLog segmentLog = storage.log(topic, segment);
        Mono<Void> cursors = Flux.fromIterable(peers)
                .concatMap(peer -> segmentLog.cursor(ReplicatorConfig.cursorName(peer), StartAt.EARLIEST))
                .then();
        if (segment.isSealed()) {
            // made while it was active, never anew: one gone was deleted by garbage collection once every cursor
            // drained it (a layout held from before that, a member's replica behind, still names it)
            return cursors.onErrorResume(PulsarStorage::isGone, e -> {
                log.info("{}: sealed segment {} is gone (garbage collected); nothing of it to open", topic,
                        segment.descriptor());
                return Mono.empty();
            });
        }
        return storage.createSegment(topic, segment).then(cursors);
    }

    @Override
    public SourceSegmentLog log(long segmentId) {
        Segment segment = layout.segment(segmentId).orElseThrow(() -> new IllegalArgumentException(
                "topic " + topic + " has no segment " + segmentId + " in layout epoch " + layout.epoch()));
        return storage.log(topic, segment);
    }

    /**
     * A sealed segment is drained for a cursor once the broker counts no backlog on its subscription, and
     * its parents are drained the same way; a pruned segment, or one without that subscription (it does not
     * replicate there), counts as drained.
     */
    @Override
    public DrainGate drainGate() {
        return this::drained;
    }

    private Mono<Void> drained(long segmentId, String cursorName) {
        List<Long> parents = layout.segment(segmentId).map(Segment::parentIds).orElse(List.of());
        return Flux.fromIterable(parents).flatMap(p -> drained(p, cursorName))
                .then(Mono.defer(() -> selfDrained(segmentId, cursorName)).filter(drained -> drained)
                        .repeatWhenEmpty(polls -> polls.delayElements(drainPoll, timer)))
                .then();
    }

    private Mono<Boolean> selfDrained(long segmentId, String cursorName) {
        var segment = layout.segment(segmentId);
        if (segment.isEmpty()) {
            return Mono.just(true);
        }
        if (!segment.get().isSealed()) {
            return Mono.just(false);
        }
        String subscription = SegmentTopics.subscription(cursorName);
        boolean peer = peers.stream().anyMatch(p -> ReplicatorConfig.cursorName(p).equals(cursorName));
        // exact, not the stats' estimate: the sealed (terminated) topic's last entry is where the mark-delete
        // position must be
        return Mono.fromFuture(() -> storage.admin().topics()
                        .getInternalStatsAsync(storage.segmentTopic(topic, segment.get())))
                .map(stats -> {
                    var cursor = stats.cursors == null ? null : stats.cursors.get(subscription);
                    if (cursor == null) {
                        return !peer; // a peer's cursor is made with the segment; any other does not replicate here
                    }
                    return Objects.equals(cursor.markDeletePosition, stats.lastConfirmedEntry);
                })
                .onErrorReturn(false); // asked again at the next poll
    }

    /**
     * Whether every subscription on {@code segment}'s topic is drained, exactly: each cursor's mark-delete
     * position at the topic's last entry (internal stats, not the stats' backlog estimate), and each peer's
     * replication subscription there (made with the segment: one missing is not counted drained). Asks the
     * broker without blocking; an error is passed on. Only meaningful for a sealed (terminated) segment.
     */
    public Mono<Boolean> drainedByAll(Segment segment) {
        String name = storage.segmentTopic(topic, segment);
        return Mono.fromFuture(() -> storage.admin().topics().getInternalStatsAsync(name))
                .map(stats -> {
                    Map<String, ManagedLedgerInternalStats.CursorStats> cursors =
                            stats.cursors == null ? Map.of() : stats.cursors;
                    boolean peersThere = peers.stream().allMatch(p -> cursors.containsKey(
                            SegmentTopics.subscription(ReplicatorConfig.cursorName(p))));
                    return peersThere && cursors.values().stream()
                            .allMatch(c -> Objects.equals(c.markDeletePosition, stats.lastConfirmedEntry));
                })
                .onErrorMap(e -> storage.failure("read the internal stats of " + name, storage.settings().adminUrl(),
                        e));
    }

    /** The broker's backlog of cursor {@code cursorName} on segment {@code segmentId} (asks the broker: blocks). */
    @Override
    public long backlog(long segmentId, String cursorName) {
        var segment = layout.segment(segmentId);
        if (segment.isEmpty()) {
            return 0;
        }
        return storage.backlog(storage.segmentTopic(topic, segment.get()), SegmentTopics.subscription(cursorName));
    }
}
