package io.verbatim.pipeline;

import io.verbatim.budget.InFlightBudget;
import io.verbatim.budget.SlowPathBudget;
import io.verbatim.model.Compression;
import io.verbatim.model.Fit;
import io.verbatim.model.Layout;
import io.verbatim.model.Segment;
import io.verbatim.model.entry.Entry;
import io.verbatim.model.entry.EntryFormatException;
import io.verbatim.model.entry.EntryLimits;
import io.verbatim.model.entry.ReplicationStamp;
import io.verbatim.model.entry.SourcePosition;
import java.time.Duration;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.LongSupplier;
import java.util.random.RandomGenerator;
import org.jspecify.annotations.Nullable;
import reactor.core.Disposable;
import reactor.core.Exceptions;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Scheduler;
import reactor.util.Logger;
import reactor.util.Loggers;
import reactor.util.retry.Retry;

/**
 * Replicates one source segment to one remote cluster (PIP-495): a backpressured {@code Flux} from the
 * durable cursor {@code pulsar.repl.<remote>}, through the fit decision against the remote's latest
 * layout, to the remote's segments, with the cursor acknowledged in cursor order.
 *
 * <p>Entries that fit go verbatim: re-stamped, never decompressed. The others are re-batched on the
 * CPU scheduler after the slow-path budget granted a permit, one at a time. An entry is read into the
 * pass only once its bytes fit the window ({@link ReplicatorConfig#maxInFlightBytes()},
 * {@link ReplicatorConfig#maxInFlight()} entries, and the broker's {@link InFlightBudget}); they are given
 * back as it is acknowledged, or when the pass ends. A failure anywhere rewinds to the cursor and re-sends
 * (the destination deduplicates on the source position). When the remote's layout changes, nothing is
 * sent under the new layout until everything sent under the old one is settled: an entry re-routed after a failed send can then never arrive behind a later one, nor be taken for
 * a duplicate of it.
 *
 * <p>It writes only while the {@link ExchangeGate}'s latest verdict on the remote is READY (R-C11),
 * and only once the source segment's parents are drained.
 *
 * <p>{@link #run()} is cold: subscribe to start, dispose to stop (a crash loses nothing but the work
 * since the last acknowledgement). It completes once a sealed source segment is fully replicated, and
 * fails only on what it must not retry (a broken invariant); a {@link ReplicationLink} restarts it then.
 * {@link #handOver()} stops it the graceful way, for another process to go on from the cursor: it reads
 * nothing more, and what it sent is answered and acknowledged first, so the next owner sends nothing again
 * (what it would send again goes by the remote's layout of then, which a remote split since may have changed:
 * a sealed segment's children know nothing of what their parent took).
 */
public final class SegmentReplicator {
    private static final Logger LOG = Loggers.getLogger(SegmentReplicator.class);

    /** What a replicator is doing, for status pages. */
    public enum State {
        CREATED,
        WAITING_FOR_EXCHANGE,
        WAITING_FOR_PARENTS,
        REPLICATING,
        BACKING_OFF,
        DONE,
        /** The remote's latest exchange verdict is UNSUPPORTED: nothing is written to it. */
        UNSUPPORTED,
        /** Ended with an error (a broken invariant); a {@link ReplicationLink} restarts it after backoff. */
        FAILED,
        /** Handed over ({@link #handOver()}): it read nothing more, and what it had sent was answered. */
        HANDED_OVER
    }

    private final ReplicatorConfig config;
    private final String topic;
    private final Segment source;
    private final SourceSegmentLog log;
    private final DrainGate drainGate;
    private final RemoteCluster remote;
    private final ExchangeGate exchangeGate;
    private final SlowPathBudget budget;
    private final InFlightBudget inFlightBudget;
    private final Scheduler timer;
    private final Scheduler cpu;
    private final ReplicatorMetrics metrics;
    private final EntryLimits limits;
    private final RandomGenerator random;
    private final String id;
    private final String cursorName;
    private final String producerName;
    private final AtomicReference<Layout> latest = new AtomicReference<>();
    private final AtomicReference<State> state = new AtomicReference<>(State.CREATED);
    private final Progress progress;
    private final LongSupplier nowNanos;
    /** Slow-path entries as planned, and what of them the remote already took, until the cursor moves past. */
    private final Map<SourcePosition, SentParts> sentParts = new ConcurrentHashMap<>();
    /**
     * Entries the remote took whole (the fast path) that the cursor has not moved past: read again after a rewind,
     * they are not sent again. The remote's deduplication would drop them at the segment that took them, but not
     * at another one: after a split of the remote, a re-sent entry goes to a child segment, which on Pulsar knows
     * nothing of what its parent took (or it no longer fits, and would go by the slow path).
     */
    private final Set<SourcePosition> takenWhole = ConcurrentHashMap.newKeySet();
    /** Completes when {@link #handOver()} is asked: the cursor is read no further. */
    private final Sinks.Empty<Void> handingOver = Sinks.empty();
    /** Completes when a run ends, however it ends. */
    private final Sinks.Empty<Void> ended = Sinks.empty();
    private volatile boolean handOverAsked;

    private SegmentReplicator(Builder b) {
        this.config = Objects.requireNonNull(b.config, "config");
        this.topic = Objects.requireNonNull(b.topic, "topic");
        if (topic.isBlank()) {
            throw new IllegalArgumentException("topic '" + topic + "' must name the source segment's topic");
        }
        this.source = Objects.requireNonNull(b.source, "source segment");
        this.log = Objects.requireNonNull(b.log, "source log");
        this.remote = Objects.requireNonNull(b.remote, "remote");
        this.drainGate = Objects.requireNonNull(b.drainGate, "drain gate");
        this.exchangeGate = Objects.requireNonNull(b.exchangeGate, "exchange gate");
        this.budget = Objects.requireNonNull(b.budget, "slow-path budget");
        this.inFlightBudget = Objects.requireNonNull(b.inFlightBudget, "in-flight budget");
        this.timer = Objects.requireNonNull(b.timer, "timer scheduler");
        this.cpu = Objects.requireNonNull(b.cpu, "cpu scheduler");
        this.metrics = Objects.requireNonNull(b.metrics, "metrics");
        this.limits = b.limits;
        this.random = b.random;
        this.nowNanos = () -> timer.now(TimeUnit.NANOSECONDS);
        this.progress = b.progress != null ? b.progress : new Progress(nowNanos.getAsLong());
        this.id = config.localCluster() + ":" + topic + "/" + source.descriptor() + "-->" + remote.name();
        this.cursorName = ReplicatorConfig.cursorName(remote.name());
        this.producerName = ReplicatorConfig.producerName(config.localCluster(), source.id());
    }

    public static Builder builder() {
        return new Builder();
    }

    /**
     * {@code <localCluster>:<topic>/<segment descriptor>--><remote>}: unique on a broker (two topics may
     * hold segments with the same descriptor), so it is the replicator's slow-path budget id, its log
     * prefix and its status name.
     */
    public String id() {
        return id;
    }

    public String topic() {
        return topic;
    }

    public State state() {
        return Objects.requireNonNull(state.get());
    }

    public ReplicatorMetrics metrics() {
        return metrics;
    }

    /** Runs the replicator; see the class comment. */
    public Mono<Void> run() {
        return Mono.defer(() -> {
            Disposable layoutWatch = remote.layouts().subscribe(l -> latest.accumulateAndGet(l, SegmentReplicator::newer),
                    e -> LOG.warn("{}: layout stream of {} failed: {}", id, remote.name(), e.toString()));
            // The cursor first: entries written while the gates are closed must wait for us.
            return log.cursor(cursorName, config.startAt())
                    .flatMap(cursor -> whileReady(Mono.defer(() -> parentsDrained().then(firstLayout())
                            .then(Mono.defer(() -> replicate(cursor))))))
                    .doOnSuccess(v -> state.set(handOverAsked ? State.HANDED_OVER : State.DONE))
                    .doOnError(e -> state.set(State.FAILED))
                    .doFinally(s -> {
                        layoutWatch.dispose();
                        ended.tryEmitEmpty();
                    });
        });
    }

    /**
     * Stops the run for another process to take the segment over from the cursor: it reads nothing more, and
     * completes once what it sent was answered and acknowledged (a send that fails then is not sent again: the
     * next owner sends it). Returns what ends when the run did; empty at once when nothing was in flight (it was
     * waiting for the exchange, its parents, or backing off after a failed pass), in which case the caller disposes
     * the run. The caller bounds the wait: a run whose sends hang fails by the send timeout, which ends it too.
     */
    public Mono<Void> handOver() {
        handOverAsked = true; // before the state is read: a pass starting now sees it and reads nothing
        handingOver.tryEmitEmpty();
        State now = state.get();
        return now == State.REPLICATING ? ended.asMono() : Mono.empty();
    }

    /**
     * Runs {@code work} while the remote's latest verdict is READY: an UNSUPPORTED verdict cancels it (what
     * was acknowledged stays; the rest is sent again later), the next READY starts it again. Completes when
     * {@code work} does; never fails because of the gate.
     */
    private Mono<Void> whileReady(Mono<Void> work) {
        return verdicts().switchMap(verdict -> {
            if (verdict == ExchangeGate.Readiness.READY) {
                return work.thenReturn(true);
            }
            state.set(State.UNSUPPORTED);
            LOG.warn("{}: remote {} does not implement the layout exchange; nothing is sent to it", id, remote.name());
            return Mono.<Boolean>never();
        }).next().then();
    }

    /** The gate's verdicts as they change; a completed gate keeps its last verdict, a failed one is asked again. */
    private Flux<ExchangeGate.Readiness> verdicts() {
        return Flux.defer(() -> exchangeGate.readiness(remote.name()))
                .retryWhen(Retry.from(signals -> signals.concatMap(signal -> {
                    LOG.warn("{}: the exchange gate failed, asking again: {}", id, signal.failure().toString());
                    return Mono.delay(backoff(signal.totalRetriesInARow()), timer);
                })))
                .concatWith(Flux.never())
                .distinctUntilChanged()
                .doOnSubscribe(s -> state.set(State.WAITING_FOR_EXCHANGE));
    }

    private Mono<Void> parentsDrained() {
        return Mono.defer(() -> {
            state.set(State.WAITING_FOR_PARENTS);
            return Flux.fromIterable(source.parentIds()).flatMap(p -> drainGate.drained(p, cursorName)).then();
        });
    }

    private Mono<Void> firstLayout() {
        return remote.layouts().next().doOnNext(l -> latest.accumulateAndGet(l, SegmentReplicator::newer)).then();
    }

    /** The remote's newest layout; {@link #firstLayout()} has waited for one. */
    private Layout latestLayout() {
        return Objects.requireNonNull(latest.get(), "no remote layout yet");
    }

    private static Layout newer(@Nullable Layout current, Layout candidate) {
        return current == null || candidate.epoch() > current.epoch() ? candidate : current;
    }

    private Mono<Void> replicate(ReplicationCursor cursor) {
        if (handOverAsked) {
            return Mono.empty();
        }
        return Flux.defer(() -> {
                    state.set(State.REPLICATING); // a pass again after a rewind too: what it sends is in flight
                    return attempt(cursor);
                })
                // handing over, a failed pass is not tried again: the next owner sends what was not answered
                .onErrorResume(e -> handOverAsked && Exceptions.unwrapMultiple(e).stream()
                        .allMatch(SegmentReplicator::isRetryable), e -> {
                            LOG.debug("{}: handed over after {}", id, e.toString());
                            return Flux.empty();
                        })
                .retryWhen(Retry.from(signals -> signals.concatMap(signal -> afterFailure(signal.failure(),
                        signal.totalRetriesInARow()))))
                .then();
    }

    /** One pass from the cursor: emits each unit once the cursor moved past it. */
    private Flux<Unit> attempt(ReplicationCursor cursor) {
        Sessions sessions = new Sessions(remote, producerName, source.range());
        InFlight inFlight = new InFlight();
        InFlightBudget.Window window = inFlightBudget.window(config.maxInFlightBytes(), config.maxInFlight());
        SendWatch watch = new SendWatch(timer, config.sendTimeout());
        long[] plannedEpoch = {-1};
        // Once a send failed the pass is over (it rewinds to the cursor); a unit still arriving from the
        // cursor's thread is then not sent, so no error of it lands after the pass ended (dropped errors).
        AtomicBoolean over = new AtomicBoolean();
        // The window bounds what is in flight, in bytes and entries: it is taken before an entry is prepared,
        // one entry at a time in cursor order, and given back oldest first as entries are acknowledged (in
        // cursor order too), or all at once when the pass ends. Hence no bound on the sends' concurrency here.
        return cursor.read()
                .takeUntilOther(handingOver.asMono())
                .concatMap(stored -> {
                    progress.read(stored.position(), nowNanos);
                    long bytes = stored.bytes().remaining();
                    return window.tryAcquire(bytes) ? prepare(stored, inFlight, plannedEpoch)
                            : window.acquire(bytes).then(Mono.defer(() -> prepare(stored, inFlight, plannedEpoch)));
                }, 0)
                .flatMapSequential(unit -> over.get() ? Mono.<Unit>never() : send(unit, sessions, inFlight, watch, over),
                        Integer.MAX_VALUE, 1)
                .concatMap(unit -> cursor.acknowledge(unit.position()).thenReturn(unit), 0)
                .map(unit -> {
                    window.releaseOldest();
                    return acknowledged(unit);
                })
                .doOnTerminate(watch::close) // its expired() completes too, and the merge with it
                .mergeWith(watch.expired().doOnError(e -> {
                    over.set(true);
                    metrics.sendFailures.increment();
                }).then(Mono.empty()))
                .doFinally(s -> {
                    over.set(true);
                    watch.close();
                    window.close();
                    sessions.closeAll();
                });
    }

    private Unit acknowledged(Unit unit) {
        progress.acknowledged(unit.position(), nowNanos.getAsLong());
        sentParts.remove(unit.position());
        takenWhole.remove(unit.position());
        metrics.count(unit);
        state.set(State.REPLICATING);
        return unit;
    }

    private Mono<Long> afterFailure(Throwable failure, long inARow) {
        // Sends that fail at once (a lost connection fails every send in flight) may reach the pass's end
        // together, as one composite failure: it is retried when each of them is.
        List<Throwable> failures = Exceptions.unwrapMultiple(failure);
        if (!failures.stream().allMatch(SegmentReplicator::isRetryable)) {
            return Mono.error(failure);
        }
        metrics.rewinds.increment();
        state.set(State.BACKING_OFF);
        if (failures.stream().anyMatch(TimeoutException.class::isInstance)) {
            LOG.info("{}: a send to {} was not answered within {}: rewinding to the cursor", id, remote.name(),
                    config.sendTimeout());
        } else {
            LOG.debug("{}: rewinding to the cursor after {}", id, failures.size() == 1 ? failure.toString()
                    : failures.size() + " failures: " + failures);
        }
        Optional<Throwable> sealedFailure = failures.stream().filter(RemoteException::isSealed).findFirst();
        if (sealedFailure.isPresent()) {
            long sealed = ((RemoteException) sealedFailure.get()).segmentId();
            return remote.layouts().filter(l -> l.segment(sealed).map(s -> !s.isActive()).orElse(true)).next()
                    .timeout(config.sealWait(), Mono.fromRunnable(() -> LOG.warn("{}: {} sealed segment {}, and no "
                            + "layout of it saying so came within {}: sending again", id, remote.name(), sealed,
                            config.sealWait())), timer)
                    .then(Mono.just(inARow));
        }
        // The remote reached again (a partition healed) ends the wait: the backoff grew while it was away.
        return Mono.delay(backoff(inARow), timer).or(remote.reachedAgain().next()).thenReturn(inARow);
    }

    private Duration backoff(long inARow) {
        synchronized (random) { // the gate's retries and the rewinds may draw at once
            return config.retry().delay(inARow + 1, random);
        }
    }

    private static boolean isRetryable(Throwable t) {
        return t instanceof TimeoutException
                || t instanceof RemoteException e && e.kind() != RemoteException.Kind.UNSUPPORTED;
    }

    /** Turns one stored entry into a unit. Runs one entry at a time, in cursor order. */
    private Mono<Unit> prepare(StoredEntry stored, InFlight inFlight, long[] plannedEpoch) {
        long bytes = stored.bytes().remaining();
        Entry entry;
        try {
            entry = Entry.parseUnverified(stored.bytes());
        } catch (EntryFormatException e) {
            LOG.error("{}: entry {} cannot be read and is not replicated: {}", id, stored.position(), e.getMessage());
            return Mono.just(Unit.skipped(stored.position(), Unit.Path.SKIPPED_UNROUTABLE, bytes));
        }
        if (entry.isReplicated()) {
            return Mono.just(Unit.skipped(stored.position(), Unit.Path.SKIPPED_REPLICATED, bytes));
        }
        if (isExpired(entry)) {
            return Mono.just(Unit.skipped(stored.position(), Unit.Path.SKIPPED_EXPIRED, bytes));
        }
        Layout layout = latestLayout();
        if (takenWhole.contains(stored.position())) { // sent before a rewind, and the remote took it
            return Mono.just(new Unit(stored.position(), Unit.Path.VERBATIM, List.of(), bytes, layout.epoch()));
        }
        if (plannedEpoch[0] != -1 && layout.epoch() != plannedEpoch[0]) {
            // The remote's layout changed: settle everything sent under the old one first.
            return inFlight.whenIdle().then(Mono.defer(() -> plan(stored, entry, latestLayout(), inFlight,
                    plannedEpoch)));
        }
        return plan(stored, entry, layout, inFlight, plannedEpoch);
    }

    private Mono<Unit> plan(StoredEntry stored, Entry entry, Layout layout, InFlight inFlight, long[] plannedEpoch) {
        plannedEpoch[0] = layout.epoch();
        Fit fit = Fit.classify(source.range(), entry.facts(), layout);
        Mono<Unit> unit;
        if (fit instanceof Fit.Verbatim verbatim) {
            SourcePosition position = stored.position();
            Entry stamped = entry.restamp(new ReplicationStamp(config.localCluster(), position));
            inFlight.begin(); // here, not in an operator: the fast path builds as few as it can per entry
            return Mono.just(new Unit(position, Unit.Path.VERBATIM,
                    List.of(new Unit.Outgoing(verbatim.destination().id(), stamped, position)),
                    stored.bytes().remaining(), layout.epoch()));
        } else if (((Fit.Rebatch) fit).reason() == Fit.Reason.ENCRYPTED_BATCH) {
            LOG.error("{}: entry {} is an encrypted batch that does not fit {} and cannot be split; not replicated",
                    id, stored.position(), remote.name());
            unit = Mono.just(Unit.skipped(stored.position(), Unit.Path.SKIPPED_UNROUTABLE, stored.bytes().remaining()));
        } else {
            unit = rebatch(stored, entry, layout);
        }
        return unit.doOnNext(u -> {
            if (!u.sends().isEmpty()) {
                inFlight.begin();
            }
        });
    }

    private Mono<Unit> rebatch(StoredEntry stored, Entry entry, Layout layout) {
        long bytes = stored.bytes().remaining();
        return budget.acquire(id, bytes, Compression.of(entry.metadata().getCompression()))
                .flatMap(permit -> Mono.fromCallable(() -> {
                    try {
                        return rebatchNow(stored, entry, layout);
                    } finally {
                        permit.release(); // the parts are serialized: the slot is free before we ask again
                    }
                }).subscribeOn(cpu).doOnCancel(permit::release));
    }

    private Unit rebatchNow(StoredEntry stored, Entry entry, Layout layout) {
        long bytes = stored.bytes().remaining();
        // Planned before (a rewind): the same plan under the same layout; under another one, a plan of what the
        // remote is not known to have taken.
        SentParts before = sentParts.get(stored.position());
        SentParts planned = before == null ? new SentParts(layout.epoch(), new BitSet())
                : before.epoch == layout.epoch() ? before : before.next(layout.epoch());
        List<Rebatcher.Part> parts;
        try {
            parts = Rebatcher.plan(entry, source.range(), layout, config.partsCodec(), limits, planned.excluded);
        } catch (EntryFormatException e) {
            LOG.error("{}: entry {} cannot be opened for re-batching and is not replicated: {}", id,
                    stored.position(), e.getMessage());
            return Unit.skipped(stored.position(), Unit.Path.SKIPPED_UNROUTABLE, bytes);
        }
        planned.planned(parts);
        sentParts.put(stored.position(), planned);
        List<Unit.Outgoing> sends = new ArrayList<>(parts.size());
        for (Rebatcher.Part part : parts) {
            SourcePosition position = stored.position().withPart(part.index());
            sends.add(new Unit.Outgoing(part.destination().id(),
                    part.entry().restamp(new ReplicationStamp(config.localCluster(), position)), position));
        }
        return new Unit(stored.position(), Unit.Path.REBATCHED, sends, bytes, layout.epoch());
    }

    private boolean isExpired(Entry entry) {
        if (config.messageTtl().isZero()) {
            return false;
        }
        long nowMs = timer.now(TimeUnit.MILLISECONDS);
        return entry.metadata().getPublishTime() + config.messageTtl().toMillis() < nowMs;
    }

    /** Sends every part of a unit not already taken; the unit comes back once all are acknowledged. */
    private Mono<Unit> send(Unit unit, Sessions sessions, InFlight inFlight, SendWatch watch, AtomicBoolean over) {
        if (unit.sends().isEmpty()) {
            return Mono.just(unit);
        }
        if (unit.path() == Unit.Path.VERBATIM) {
            return sendVerbatim(unit, sessions, inFlight, watch, over);
        }
        SentParts taken = Objects.requireNonNull(sentParts.get(unit.position()), "a re-batched entry's plan");
        return Flux.fromIterable(unit.sends())
                .filter(o -> !taken.contains(o.segmentId(), o.position().part()))
                .flatMap(o -> sendOne(o, sessions, watch).doOnNext(receipt -> taken.take(o.segmentId(),
                        o.position().part())),
                        unit.sends().size())
                .then(Mono.just(unit))
                .doFinally(s -> inFlight.end())
                .doOnError(e -> over.set(true));
    }

    /**
     * The fast path's send: one send, no part bookkeeping, and as few operators as it takes, since they are most of
     * what the fast path costs per entry besides the destination's copy. Its answer comes as a value
     * ({@link #sendOne} says why) and is settled in one place.
     */
    private Mono<Unit> sendVerbatim(Unit unit, Sessions sessions, InFlight inFlight, SendWatch watch,
            AtomicBoolean over) {
        Unit.Outgoing o = unit.sends().get(0);
        return Mono.defer(() -> {
            SendWatch.Send timed = watch.start();
            return sessions.to(o.segmentId()).send(o.entry(), o.position()).materialize()
                    .handle((signal, sink) -> {
                        timed.finish();
                        inFlight.end();
                        if (signal.isOnNext()) {
                            takenWhole.add(unit.position());
                            if (signal.get() == ProducerSession.Receipt.DUPLICATE) {
                                metrics.duplicateReceipts.increment();
                            }
                            sink.next(unit);
                        } else if (signal.isOnError()) {
                            metrics.sendFailures.increment();
                            over.set(true);
                            sink.error(Objects.requireNonNull(signal.getThrowable()));
                        } else { // a session broke its contract: a failed invariant, which the link restarts
                            over.set(true);
                            sink.error(new IllegalStateException("a send to segment " + o.segmentId()
                                    + " completed without a receipt"));
                        }
                    });
        });
    }

    /** One send of the slow path, timed by the pass's {@link SendWatch} (which fails the pass if it hangs). */
    private Mono<ProducerSession.Receipt> sendOne(Unit.Outgoing o, Sessions sessions, SendWatch watch) {
        return Mono.defer(() -> {
            SendWatch.Send timed = watch.start();
            return sessions.to(o.segmentId()).send(o.entry(), o.position())
                    // As a value: a send on a broken session fails as it is subscribed, and when the pass was just
                    // cancelled (another send failed first) that failure is then dropped quietly rather than logged
                    // by Reactor as an error nobody received.
                    .materialize()
                    .doOnNext(signal -> {
                        timed.finish();
                        if (signal.isOnError()) {
                            metrics.sendFailures.increment();
                        } else if (signal.get() == ProducerSession.Receipt.DUPLICATE) {
                            metrics.duplicateReceipts.increment();
                        }
                    })
                    .dematerialize();
        });
    }

    /** Builds a {@link SegmentReplicator}; every collaborator is required unless said otherwise. */
    public static final class Builder {
        private @Nullable ReplicatorConfig config;
        private @Nullable String topic;
        private @Nullable Segment source;
        private @Nullable SourceSegmentLog log;
        private @Nullable DrainGate drainGate;
        private @Nullable RemoteCluster remote;
        private ExchangeGate exchangeGate = ExchangeGate.alwaysReady();
        private SlowPathBudget budget = SlowPathBudget.unlimited();
        private InFlightBudget inFlightBudget = InFlightBudget.unlimited();
        private @Nullable Scheduler timer;
        private @Nullable Scheduler cpu;
        private ReplicatorMetrics metrics = new ReplicatorMetrics();
        private EntryLimits limits = EntryLimits.DEFAULT;
        private RandomGenerator random = new SplittableRandom();
        private @Nullable Progress progress;

        public Builder config(ReplicatorConfig value) {
            config = value;
            return this;
        }

        /** The topic the source segment belongs to: part of the replicator's identity. */
        public Builder topic(String value) {
            topic = value;
            return this;
        }

        /** The source segment as the local layout has it (its range and parents matter). */
        public Builder source(Segment value, SourceSegmentLog segmentLog) {
            source = value;
            log = segmentLog;
            return this;
        }

        public Builder drainGate(DrainGate value) {
            drainGate = value;
            return this;
        }

        public Builder remote(RemoteCluster value) {
            remote = value;
            return this;
        }

        /** Default: every remote is ready. */
        public Builder exchangeGate(ExchangeGate value) {
            exchangeGate = value;
            return this;
        }

        /** Default: unlimited. */
        public Builder budget(SlowPathBudget value) {
            budget = value;
            return this;
        }

        /** The broker's bytes in flight, shared with its other replicators; default: unlimited. */
        public Builder inFlightBudget(InFlightBudget value) {
            inFlightBudget = value;
            return this;
        }

        /** The one clock: backoff, send timeouts and the message TTL read it. */
        public Builder timer(Scheduler value) {
            timer = value;
            return this;
        }

        /** Where the slow path decompresses and re-compresses: a bounded scheduler, never an I/O thread. */
        public Builder cpu(Scheduler value) {
            cpu = value;
            return this;
        }

        public Builder metrics(ReplicatorMetrics value) {
            metrics = value;
            return this;
        }

        public Builder limits(EntryLimits value) {
            limits = value;
            return this;
        }

        /** Where the backoff's jitter comes from (default: a fresh unseeded generator); seed it to replay. */
        public Builder random(RandomGenerator value) {
            random = value;
            return this;
        }

        /** Where it tells when it moved (a link keeps one per segment across restarts); default: its own. */
        Builder progress(Progress value) {
            progress = value;
            return this;
        }

        public SegmentReplicator build() {
            return new SegmentReplicator(this);
        }
    }
}
