package io.verbatim.runtime.controller;

import io.micrometer.core.instrument.MeterRegistry;
import io.verbatim.config.AutoScaleConfig;
import io.verbatim.exchange.Caps;
import io.verbatim.exchange.Controller;
import io.verbatim.model.Layout;
import io.verbatim.model.Outcome;
import io.verbatim.model.Segment;
import io.verbatim.runtime.broker.LoadSample;
import io.verbatim.runtime.broker.LoadTracker;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.function.ToIntFunction;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * The cluster's PIP-483 policy, evaluated every {@code autoScale.interval} for each topic: the pure
 * {@link AutoScaler} decides from the topic's load, and its splits and rebuckets are committed through the
 * controller (within the effective caps); its cold boundaries become the controller's policy cold marks,
 * re-derived on every evaluation. Manual operations restart the same cooldowns.
 */
public final class PolicyLoop {
    private static final Logger LOG = Loggers.getLogger(PolicyLoop.class);

    private final String cluster;
    private final AutoScaleConfig config;
    private final Controller controller;
    private final Function<String, Layout> layouts;
    private final Function<String, LoadTracker> load;
    private final ToIntFunction<String> consumers;
    private final MeterRegistry registry;
    private final Scheduler timer;
    private final Map<String, AutoScaler.Clocks> clocks = new ConcurrentHashMap<>();
    private final List<String> decisions = new ArrayList<>();
    private volatile Supplier<Optional<String>> stale = Optional::empty;
    private volatile boolean waiting;

    /**
     * @param consumers how many consumers the topic's largest open subscription has
     */
    public PolicyLoop(String cluster, AutoScaleConfig config, Controller controller, Function<String, Layout> layouts,
            Function<String, LoadTracker> load, ToIntFunction<String> consumers, MeterRegistry registry, Scheduler timer) {
        this.cluster = cluster;
        this.config = config;
        this.controller = controller;
        this.layouts = layouts;
        this.load = load;
        this.consumers = consumers;
        this.registry = registry;
        this.timer = timer;
    }

    /**
     * Holds the policy back while {@code why} names a reason its load is not current (the brokers' reports
     * stopped, say): no load is not a cold topic, so nothing is split or marked cold meanwhile.
     */
    PolicyLoop holdWhile(Supplier<Optional<String>> why) {
        this.stale = why;
        return this;
    }

    /** Evaluates every topic of {@code topics} each interval until disposed. */
    public Disposable start(List<String> topics) {
        return Flux.interval(config.interval(), timer)
                .onBackpressureDrop() // a slow evaluation skips ticks rather than ending the loop
                .concatMap(tick -> Flux.fromIterable(topics).concatMap(this::evaluate))
                .subscribe(v -> { }, e -> LOG.error("{}: the auto-scale loop stopped: {}", cluster, e.toString()));
    }

    private AutoScaler.Clocks clocks(String topic) {
        return clocks.getOrDefault(topic, AutoScaler.Clocks.NEVER);
    }

    /** A manual split or rebucket that was applied starts the policy's cooldown as its own would. */
    void manual(String topic, Outcome o, boolean split) {
        if (o instanceof Outcome.Applied) {
            long now = timer.now(TimeUnit.MILLISECONDS);
            AutoScaler.Clocks c = clocks(topic);
            clocks.put(topic, split ? new AutoScaler.Clocks(now, c.lastMergeMs(), c.lastRebucketMs())
                    : new AutoScaler.Clocks(c.lastSplitMs(), c.lastMergeMs(), now));
        }
    }

    Mono<Void> evaluate(String topic) {
        Optional<String> why = stale.get();
        if (why.isPresent()) {
            if (!waiting) {
                waiting = true;
                LOG.info("{}: auto-scale holds back: {}", cluster, why.get());
            }
            return Mono.empty();
        }
        if (waiting) {
            waiting = false;
            LOG.info("{}: auto-scale resumes: the load is current again", cluster);
        }
        Layout layout = layouts.apply(topic);
        long now = timer.now(TimeUnit.MILLISECONDS);
        Map<Long, LoadSample> samples = load.apply(topic).sample(
                layout.activeSegments().stream().map(Segment::id).toList(), config, now);
        int consumerCount = consumers.applyAsInt(topic);
        Caps caps = controller.effectiveCaps(topic);
        AutoScaler.Clocks c = clocks(topic);
        AutoScaler.Decision d = AutoScaler.decide(layout, samples, consumerCount, config, caps, now, c);
        Mono<?> action;
        if (d instanceof AutoScaler.Decision.Split s) {
            action = controller.split(topic, s.segmentId()).doOnNext(o -> {
                if (o instanceof Outcome.Applied) {
                    clocks.put(topic, new AutoScaler.Clocks(now, c.lastMergeMs(), c.lastRebucketMs()));
                }
            });
        } else if (d instanceof AutoScaler.Decision.Rebucket r) {
            action = Flux.fromIterable(r.segmentIds()).concatMap(id -> controller.rebucket(topic, id, r.bucketCount()))
                    .then(Mono.fromRunnable(() -> clocks.put(topic,
                            new AutoScaler.Clocks(c.lastSplitMs(), c.lastMergeMs(), now))));
        } else {
            action = Mono.empty();
        }
        // Cold marks are soft state: re-derived from load on every evaluation, withdrawn once a range is hot.
        Set<Integer> held = controller.policyColdMarksOf(topic);
        Set<Integer> cold = AutoScaler.coldBoundaries(layout, samples, consumerCount, config, caps, now, c, held);
        boolean newMarks = !held.containsAll(cold);
        Mono<Void> marks = controller.policyColdMarks(topic, cold).then(Mono.fromRunnable(() -> {
            if (newMarks) {
                AutoScaler.Clocks after = clocks(topic);
                clocks.put(topic, new AutoScaler.Clocks(after.lastSplitMs(), now, after.lastRebucketMs()));
            }
        }));
        if (!(d instanceof AutoScaler.Decision.NoAction) && !(d instanceof AutoScaler.Decision.MarkCold)) {
            note(topic, d);
        }
        if (newMarks) {
            note(topic, new AutoScaler.Decision.MarkCold(cold.stream().filter(b -> !held.contains(b)).findFirst()
                    .orElseThrow(), "cold"));
        }
        return action.then(marks).onErrorResume(e -> {
            LOG.warn("{}: auto-scale of {} failed: {}", cluster, topic, e.toString());
            return Mono.empty();
        });
    }

    private void note(String topic, AutoScaler.Decision d) {
        registry.counter("verbatim.autoscale.decisions", "topic", topic, "kind",
                d.getClass().getSimpleName().toLowerCase(Locale.ROOT)).increment();
        synchronized (decisions) {
            decisions.add(topic + ": " + d);
        }
        LOG.info("{}: auto-scale {}: {}", cluster, topic, d);
    }

    /** What the policy decided so far, oldest first. */
    public List<String> decisions() {
        synchronized (decisions) {
            return List.copyOf(decisions);
        }
    }
}
