package io.verbatim.pipeline;

import io.verbatim.budget.InFlightBudget;
import io.verbatim.budget.SlowPathBudget;
import io.verbatim.model.Layout;
import io.verbatim.model.Segment;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.random.RandomGenerator;
import org.jspecify.annotations.Nullable;
import reactor.core.Disposable;
import reactor.core.Disposables;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Scheduler;
import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * Replication of one local topic toward one remote: a {@link SegmentReplicator} for each segment the
 * {@code owned} predicate selects (a broker runs the segments it owns), started as segments appear,
 * done for good once a sealed segment is drained. Storage-neutral: it sees the topic only as
 * {@link LocalSegments}.
 *
 * <p>It supervises: a replicator that ends with an error is restarted from its durable cursor after
 * {@link ReplicatorConfig#retry()} backoff, the attempt being its failures in a row, which reset once a
 * restarted replicator acknowledges an entry or completes. {@link #status()} shows each segment's
 * replicator, restarts and failures, backlog, and whether it is stalled (backlog, and nothing acknowledged for
 * {@link Builder#stallAfter}: a replicator that keeps rewinding across a partition is stalled, not failing);
 * {@link #stop()} stops every replicator at once and restarts none.
 */
public final class ReplicationLink {
    private static final Logger LOG = Loggers.getLogger(ReplicationLink.class);
    private static final Runnable NOTHING = () -> { };
    /** How long a hand-over's end waits for another's to be told (they end on several threads). */
    private static final Duration HAND_OVER_EMIT = Duration.ofSeconds(1);
    /** A replicator with backlog that acknowledged nothing for 5 s is stalled. */
    public static final Duration DEFAULT_STALL_AFTER = Duration.ofSeconds(5);

    private final LocalSegments local;
    private final RemoteCluster remote;
    private final Predicate<Segment> owned;
    private final Predicate<Segment> handsOver;
    private final Sinks.Many<Long> handedOver = Sinks.many().multicast().directBestEffort();
    private final ReplicatorConfig config;
    private final SlowPathBudget budget;
    private final InFlightBudget inFlightBudget;
    private final ExchangeGate exchangeGate;
    private final Scheduler timer;
    private final Scheduler cpu;
    private final ReplicatorMetrics metrics;
    private final RandomGenerator random;
    private final String cursorName;
    private final long stallAfterNanos;
    /** By segment id; everything below is guarded by {@code this}. */
    private final Map<Long, Supervised> segments = new TreeMap<>();
    private boolean started;
    private @Nullable Disposable layoutWatch;

    private ReplicationLink(Builder b) {
        this.local = Objects.requireNonNull(b.local, "local segments");
        this.remote = Objects.requireNonNull(b.remote, "remote");
        this.owned = Objects.requireNonNull(b.owned, "owned");
        this.handsOver = Objects.requireNonNull(b.handsOver, "handsOver");
        this.config = Objects.requireNonNull(b.config, "config");
        this.budget = Objects.requireNonNull(b.budget, "slow-path budget");
        this.inFlightBudget = Objects.requireNonNull(b.inFlightBudget, "in-flight budget");
        this.exchangeGate = Objects.requireNonNull(b.exchangeGate, "exchange gate");
        this.timer = Objects.requireNonNull(b.timer, "timer scheduler");
        this.cpu = Objects.requireNonNull(b.cpu, "cpu scheduler");
        this.metrics = Objects.requireNonNull(b.metrics, "metrics");
        this.random = Objects.requireNonNull(b.random, "random");
        this.cursorName = ReplicatorConfig.cursorName(remote.name());
        this.stallAfterNanos = b.stallAfter.toNanos();
    }

    public static Builder builder() {
        return new Builder();
    }

    /** The local topic it replicates. */
    public String topic() {
        return local.topic();
    }

    /** Counters summed over every replicator of this link (and of other links sharing them), across restarts. */
    public ReplicatorMetrics metrics() {
        return metrics;
    }

    /** Starts a replicator for every owned segment, now and as segments appear. Idempotent. */
    public ReplicationLink start() {
        synchronized (this) {
            if (started) {
                return this;
            }
            started = true;
        }
        Disposable watch = local.layouts().subscribe(this::onLayout,
                e -> LOG.error("{}: the layout stream of {} failed; no new segments are replicated to {}: {}",
                        config.localCluster(), local.topic(), remote.name(), e.toString()));
        synchronized (this) {
            if (started && layoutWatch == null) {
                layoutWatch = watch;
                return this;
            }
        }
        watch.dispose(); // stopped meanwhile
        return this;
    }

    /**
     * Stops every replicator at once and cancels pending restarts; only the durable cursors keep what was
     * acknowledged (what a broker crash leaves). Nothing restarts until {@link #start()}.
     */
    public void stop() {
        List<Disposable> stopping = new ArrayList<>();
        synchronized (this) {
            started = false;
            if (layoutWatch != null) {
                stopping.add(layoutWatch);
                layoutWatch = null;
            }
            for (Supervised s : segments.values()) {
                s.generation++; // whatever the stopped run signals from now on is ignored
                s.active = false;
                if (s.current != null) {
                    stopping.add(s.current);
                    s.current = null;
                }
                if (s.handingOver != null) {
                    stopping.add(s.handingOver);
                    s.handingOver = null;
                }
            }
        }
        stopping.forEach(Disposable::dispose);
    }

    /**
     * Asks the {@code owned} predicate again (ownership moved): the replicators of segments it no longer selects
     * are stopped at once, their cursors keeping what was acknowledged, and segments it now selects are started
     * (a segment given back later starts again from its cursor). A lost segment that {@link Builder#handsOver}
     * selects is handed over instead ({@link SegmentReplicator#handOver()}): its replicator reads no more, and
     * stops once what it sent was answered, so the next owner sends nothing of it again; {@link #handingOver}
     * says while it does, {@link #handedOver} when it ended. Does nothing on a stopped link.
     */
    public void reconsider() {
        List<Disposable> stopping = new ArrayList<>();
        List<Supervised> handingOver = new ArrayList<>();
        synchronized (this) {
            if (!started) {
                return;
            }
            for (Supervised s : segments.values()) {
                if (s.handingOver != null && !handsOver.test(s.segment)) {
                    stopping.add(s.handingOver); // the hand-over was called off (a lease lapsed): stopped now
                    s.handingOver = null;
                    LOG.debug("{}: its hand-over is called off; stopped", s.replicator.id());
                }
                if (!s.done && s.active && !owned.test(s.segment)) {
                    s.generation++; // whatever the stopped run signals from now on is ignored
                    s.active = false;
                    if (s.current != null) {
                        if (s.running && handsOver.test(s.segment)) {
                            handingOver.add(s);
                        } else {
                            stopping.add(s.current);
                        }
                        s.current = null;
                    }
                    LOG.debug("{}: its segment is no longer owned here; stopped", s.replicator.id());
                }
            }
        }
        stopping.forEach(Disposable::dispose);
        handingOver.forEach(this::handOver);
        onLayout(local.layout());
    }

    /**
     * Hands {@code s} over (its run was taken off it under the lock): the run reads no more, and is disposed once
     * what it sent was answered, or after twice the send timeout at most.
     */
    private void handOver(Supervised s) {
        SegmentReplicator replicator = s.replicator;
        Disposable run = Objects.requireNonNull(s.run, "a running replicator's run");
        Disposable.Swap wait = Disposables.swap();
        synchronized (this) {
            s.handingOver = wait;
        }
        wait.update(replicator.handOver()
                .timeout(config.sendTimeout().multipliedBy(2), timer)
                .doFinally(signal -> {
                    run.dispose();
                    boolean ended;
                    synchronized (this) {
                        ended = s.handingOver == wait;
                        if (ended) {
                            s.handingOver = null;
                        }
                    }
                    if (ended) {
                        LOG.debug("{}: handed over ({})", replicator.id(), signal);
                        handedOver.emitNext(s.segment.id(), Sinks.EmitFailureHandler.busyLooping(HAND_OVER_EMIT));
                        onLayout(local.layout()); // given back meanwhile: it starts again, from the cursor
                    }
                })
                .subscribe(v -> { }, e -> LOG.warn("{}: what it sent was not all answered within {}; stopped",
                        replicator.id(), config.sendTimeout().multipliedBy(2))));
    }

    /** Whether a segment's replicator is still handing it over ({@link #reconsider()}). */
    public synchronized boolean handingOver(long segmentId) {
        Supervised s = segments.get(segmentId);
        return s != null && s.handingOver != null;
    }

    /** Signals a segment's id each time its hand-over ends. */
    public Flux<Long> handedOver() {
        return handedOver.asFlux();
    }

    /** True when no owned segment has replication backlog toward the remote. */
    public boolean caughtUp() {
        for (Segment s : local.layout().segments().values()) {
            if (owned.test(s) && local.backlog(s.id(), cursorName) > 0) {
                return false;
            }
        }
        return true;
    }

    /**
     * Each supervised segment's replicator, by segment id, with its backlog and whether it is stalled (a stopped
     * link shows the states its replicators were in when it stopped).
     */
    public List<ReplicatorStatus> status() {
        List<ReplicatorStatus> out;
        List<Supervised> running = new ArrayList<>();
        synchronized (this) {
            out = new ArrayList<>(segments.size());
            for (Supervised s : segments.values()) {
                SegmentReplicator.State state = s.done ? SegmentReplicator.State.DONE : s.replicator.state();
                out.add(new ReplicatorStatus(s.replicator.id(), s.segment.descriptor(), state, s.restarts,
                        s.consecutiveFailures, Optional.ofNullable(s.lastError)));
                running.add(s);
            }
        }
        // The backlog outside the lock: the storage may hold its own while it hands this link a layout.
        long now = timer.now(TimeUnit.NANOSECONDS);
        for (int i = 0; i < out.size(); i++) {
            ReplicatorStatus r = out.get(i);
            if (r.state() == SegmentReplicator.State.DONE) {
                continue;
            }
            Supervised s = running.get(i);
            long backlog = local.backlog(s.segment.id(), cursorName);
            long stalled = s.progress.stalledNanos(now, backlog);
            out.set(i, new ReplicatorStatus(r.id(), r.segment(), r.state(), r.restarts(), r.consecutiveFailures(),
                    r.lastError(), backlog, stalled >= stallAfterNanos && stalled > 0
                            ? Optional.of(Duration.ofNanos(stalled)) : Optional.empty()));
        }
        return out;
    }

    /** Replicators with backlog that acknowledged nothing for the stall threshold. */
    public List<ReplicatorStatus> stalled() {
        return status().stream().filter(ReplicatorStatus::stalled).toList();
    }

    /** Replicators that failed and have not made progress since. */
    public synchronized int failing() {
        return (int) segments.values().stream().filter(s -> s.consecutiveFailures > 0).count();
    }

    private void onLayout(Layout layout) {
        List<Runnable> launches = new ArrayList<>();
        List<Disposable> stopping = new ArrayList<>();
        synchronized (this) {
            if (!started) {
                return;
            }
            // A segment pruned under its replicator has nothing left to send: garbage collection prunes only what
            // every cursor drained, or what the message TTL expired. Its replicator is stopped (it would wait for
            // the exchange, its parents or a read of a deleted log for ever), and it counts as done.
            for (Supervised s : segments.values()) {
                if (!s.done && layout.segment(s.segment.id()).isEmpty()) {
                    s.generation++; // what the stopped run signals from now on is ignored
                    if (s.current != null) {
                        stopping.add(s.current);
                    }
                    finish(s);
                    LOG.debug("{}: its segment was pruned; stopped", s.replicator.id());
                }
            }
            // A pruned segment whose replicator is done is forgotten: the map stays as large as the layout.
            segments.values().removeIf(s -> s.done && layout.segment(s.segment.id()).isEmpty());
            for (Segment segment : layout.segments().values()) {
                if (!owned.test(segment)) {
                    continue;
                }
                Supervised s = segments.computeIfAbsent(segment.id(), id -> new Supervised(segment,
                        new Progress(timer.now(TimeUnit.NANOSECONDS))));
                if (!s.done && !s.active && s.handingOver == null) {
                    launches.add(launch(s));
                }
            }
        }
        stopping.forEach(Disposable::dispose);
        launches.forEach(Runnable::run);
    }

    /** Builds the next replicator of {@code s}; the returned action subscribes to it, outside the lock. */
    private Runnable launch(Supervised s) {
        long generation = ++s.generation;
        s.replicator = SegmentReplicator.builder()
                .config(config)
                .topic(local.topic())
                .source(s.segment, new SupervisedLog(s.segment.id(), () -> progressed(s, generation)))
                .drainGate(local.drainGate())
                .remote(remote)
                .exchangeGate(exchangeGate)
                .budget(budget)
                .inFlightBudget(inFlightBudget)
                .timer(timer)
                .cpu(cpu)
                .metrics(metrics)
                .random(random)
                .progress(s.progress)
                .build();
        if (local.layout().segment(s.segment.id()).isEmpty()) {
            finish(s); // pruned: nothing left to replicate
            return NOTHING;
        }
        s.active = true;
        SegmentReplicator replicator = s.replicator;
        return () -> subscribe(s, replicator, generation);
    }

    private void subscribe(Supervised s, SegmentReplicator replicator, long generation) {
        synchronized (this) {
            if (generation != s.generation) {
                return; // stopped before it started
            }
        }
        Disposable run = replicator.run().subscribe(v -> { }, e -> failed(s, generation, e),
                () -> completed(s, generation));
        synchronized (this) {
            if (generation == s.generation) {
                s.current = run;
                s.run = run;
                s.running = true;
                return;
            }
        }
        run.dispose(); // it ended already, or the link stopped meanwhile
    }

    private synchronized void failed(Supervised s, long generation, Throwable error) {
        if (generation != s.generation) {
            return;
        }
        long restart = ++s.generation;
        failures(s, s.consecutiveFailures + 1);
        s.lastError = error.toString();
        Duration delay;
        synchronized (random) { // its replicators draw from it too
            delay = config.retry().delay(s.consecutiveFailures, random);
        }
        LOG.warn("{} failed ({} in a row), restarting in {} ms: {}", s.replicator.id(), s.consecutiveFailures,
                delay.toMillis(), error.toString());
        s.running = false;
        s.current = Mono.delay(delay, timer).subscribe(t -> restart(s, restart));
    }

    private void restart(Supervised s, long generation) {
        Runnable launch;
        synchronized (this) {
            if (generation != s.generation || !started) {
                return;
            }
            launch = launch(s);
            if (s.active) { // not pruned meanwhile
                s.restarts++;
                metrics.restarts.increment();
            }
        }
        launch.run();
    }

    private synchronized void completed(Supervised s, long generation) {
        if (generation == s.generation) {
            s.generation++;
            finish(s);
        }
    }

    private void finish(Supervised s) {
        s.done = true;
        s.active = false;
        s.current = null;
        s.running = false;
        failures(s, 0);
    }

    private synchronized void progressed(Supervised s, long generation) {
        if (generation == s.generation && s.consecutiveFailures > 0) {
            failures(s, 0);
        }
    }

    /** Sets the failures in a row of {@code s}, keeping {@link ReplicatorMetrics#failing()} in step. */
    private void failures(Supervised s, int inARow) {
        if (s.consecutiveFailures == 0 && inARow > 0) {
            metrics.failing.increment();
        } else if (s.consecutiveFailures > 0 && inARow == 0) {
            metrics.failing.decrement();
        }
        s.consecutiveFailures = inARow;
    }

    /** Builds a {@link ReplicationLink}; local, remote, config, timer and cpu are required. */
    public static final class Builder {
        private @Nullable LocalSegments local;
        private @Nullable RemoteCluster remote;
        private Predicate<Segment> owned = s -> true;
        private Predicate<Segment> handsOver = s -> false;
        private @Nullable ReplicatorConfig config;
        private SlowPathBudget budget = SlowPathBudget.unlimited();
        private InFlightBudget inFlightBudget = InFlightBudget.unlimited();
        private ExchangeGate exchangeGate = ExchangeGate.alwaysReady();
        private @Nullable Scheduler timer;
        private @Nullable Scheduler cpu;
        private ReplicatorMetrics metrics = new ReplicatorMetrics();
        private RandomGenerator random = new SplittableRandom();
        private Duration stallAfter = DEFAULT_STALL_AFTER;

        private Builder() {
        }

        /**
         * How long a replicator with backlog may acknowledge nothing before {@link #status()} shows it stalled;
         * default {@link #DEFAULT_STALL_AFTER}.
         */
        public Builder stallAfter(Duration value) {
            if (value == null || value.isNegative() || value.isZero() || value.compareTo(ReplicatorConfig.MAX_TIMEOUT) > 0) {
                throw new IllegalArgumentException("stallAfter " + value + " must be a positive duration, at most "
                        + ReplicatorConfig.MAX_TIMEOUT);
            }
            stallAfter = value;
            return this;
        }

        /** The local topic whose segments replicate. */
        public Builder local(LocalSegments value) {
            local = value;
            return this;
        }

        public Builder remote(RemoteCluster value) {
            remote = value;
            return this;
        }

        /** Which segments this link replicates (a broker's own); default: all. */
        public Builder owned(Predicate<Segment> value) {
            owned = value;
            return this;
        }

        /**
         * Which segments that are no longer {@link #owned} this link hands over rather than stops at once (another
         * process takes them over while this one still may act: a move); default: none.
         */
        public Builder handsOver(Predicate<Segment> value) {
            handsOver = value;
            return this;
        }

        /** Every replicator's config; its {@code retry} also spaces the restarts of a failed one. */
        public Builder config(ReplicatorConfig value) {
            config = value;
            return this;
        }

        /** The broker's slow-path budget, shared with its other links; default: unlimited. */
        public Builder budget(SlowPathBudget value) {
            budget = value;
            return this;
        }

        /** Default: the remote is always ready. */
        /** The broker's bytes in flight, shared with its other links; default: unlimited. */
        public Builder inFlightBudget(InFlightBudget value) {
            inFlightBudget = value;
            return this;
        }

        public Builder exchangeGate(ExchangeGate value) {
            exchangeGate = value;
            return this;
        }

        /** The one clock: backoff, restarts, send timeouts. */
        public Builder timer(Scheduler value) {
            timer = value;
            return this;
        }

        /** Where re-batching runs: a bounded scheduler, never an I/O thread. */
        public Builder cpu(Scheduler value) {
            cpu = value;
            return this;
        }

        /** Where every replicator of the link counts (several links may share it); default: its own. */
        public Builder metrics(ReplicatorMetrics value) {
            metrics = value;
            return this;
        }

        /** The jitter of rewinds and restarts (default: a fresh unseeded generator); seed it to replay. */
        public Builder random(RandomGenerator value) {
            random = value;
            return this;
        }

        public ReplicationLink build() {
            return new ReplicationLink(this);
        }
    }

    /** One owned segment: its current replicator and what supervision knows of it. */
    private static final class Supervised {
        /** The segment as the layout first showed it (its id, range and parents never change). */
        final Segment segment;
        /** When its replication last moved, across restarts. */
        final Progress progress;
        /** Bumped by every launch, end and stop: signals of an older run or timer are stale. */
        long generation;
        /** Set by {@link #launch}, which follows every creation under the same lock. */
        @SuppressWarnings("NullAway.Init")
        SegmentReplicator replicator;
        /** The current run, or the pending restart. */
        @Nullable Disposable current;
        /** The run {@link #current} is when {@link #running}. */
        @Nullable Disposable run;
        /** Whether {@link #current} is a replicator's run (not a pending restart). */
        boolean running;
        /** A lost segment's hand-over while it lasts ({@link #handOver}). */
        @Nullable Disposable handingOver;
        /** Running, or waiting to restart. */
        boolean active;
        boolean done;
        long restarts;
        int consecutiveFailures;
        @Nullable String lastError;

        Supervised(Segment segment, Progress progress) {
            this.segment = segment;
            this.progress = progress;
        }
    }

    /**
     * The segment's log, looked up when a run opens its cursor (so a pruned segment fails that run instead
     * of the link), with a cursor that reports the run's first acknowledgement: progress.
     */
    private final class SupervisedLog implements SourceSegmentLog {
        private final long segmentId;
        private final Runnable onFirstAck;

        SupervisedLog(long segmentId, Runnable onFirstAck) {
            this.segmentId = segmentId;
            this.onFirstAck = onFirstAck;
        }

        @Override
        public long segmentId() {
            return segmentId;
        }

        @Override
        public Mono<ReplicationCursor> cursor(String name, StartAt startAt) {
            return Mono.defer(() -> local.log(segmentId).cursor(name, startAt))
                    .map(cursor -> new ProgressCursor(cursor, onFirstAck));
        }
    }
}
