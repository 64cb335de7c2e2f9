package io.verbatim.runtime;

import io.micrometer.core.instrument.Tags;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.verbatim.budget.BrokerBudget;
import io.verbatim.budget.BudgetMetricsBinder;
import io.verbatim.config.ClusterConfig;
import io.verbatim.config.TopicConfig;
import io.verbatim.config.VerbatimConfig;
import io.verbatim.exchange.Caps;
import io.verbatim.exchange.Controller;
import io.verbatim.exchange.ExchangeMetricsBinder;
import io.verbatim.exchange.ExchangeServer;
import io.verbatim.exchange.ExchangeTransport;
import io.verbatim.exchange.HttpTransport;
import io.verbatim.exchange.Pusher;
import io.verbatim.model.Layout;
import io.verbatim.model.Outcome;
import io.verbatim.model.Segment;
import io.verbatim.model.proto.CompressionType;
import io.verbatim.pipeline.ExchangeGate;
import io.verbatim.pipeline.PipelineMetricsBinder;
import io.verbatim.pipeline.ReplicationLink;
import io.verbatim.pipeline.ReplicatorConfig;
import io.verbatim.pipeline.ReplicatorMetrics;
import io.verbatim.pipeline.ReplicatorStatus;
import io.verbatim.pipeline.memory.MemoryCluster;
import io.verbatim.store.InMemoryLayoutStore;
import io.verbatim.store.LayoutStore;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import reactor.core.Disposable;
import reactor.core.Disposables;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.netty.http.server.HttpServerRoutes;
import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * One cluster of the embedded runtime: a controller (its layout store, the exchange endpoint, the
 * status JSON and page, the Prometheus scrape), brokers (each with an ingest endpoint and its own
 * slow-path budget, running the replicators of the segments it owns toward every peer), the segment
 * logs of every topic, and the local PIP-483 policy.
 *
 * <p>Layouts flow one way: the controller commits to the layout store (its own changes, and what the
 * exchange folds in), the brokers watch the store and adopt each new layout (new segments and their
 * replication cursors first, then seals, then publication). The store is the seam the Raft-backed
 * metadata log replaces.
 */
public final class ClusterNode implements AutoCloseable {
    private static final Logger LOG = Loggers.getLogger(ClusterNode.class);
    static final int MAX_FRAME_BYTES = 8 << 20;
    /** Sealed segments garbage collection deleted, per topic. */
    public static final String PRUNED = "verbatim.gc.pruned.segments";

    /** Where a peer is reached: its controller's admin URL and its brokers' ingest URLs. */
    public record Address(String adminUrl, List<String> brokerUrls) {
    }

    /** One broker: its budget, its ingest endpoint, the replication links it runs. */
    private record Broker(int index, BrokerBudget budget, IngestServer ingest, int port) {
    }

    private final VerbatimConfig config;
    private final ClusterConfig self;
    private final Scheduler timer;
    private final Scheduler cpu;
    private final LayoutStore store;
    private final Controller controller;
    private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    private final Map<String, MemoryCluster> topics = new LinkedHashMap<>();
    private final Map<String, LoadTracker> load = new ConcurrentHashMap<>();
    private final Map<String, AutoScaler.Clocks> clocks = new ConcurrentHashMap<>();
    private final Map<String, List<Subscription>> subscriptions = new ConcurrentHashMap<>();
    private final List<Broker> brokers = new ArrayList<>();
    /** topic → remote → counters summed over every broker's link. */
    private final Map<String, Map<String, ReplicatorMetrics>> replication = new ConcurrentHashMap<>();
    private final List<ReplicationLink> links = new ArrayList<>();
    private final List<NetworkRemote> remotes = new ArrayList<>();
    private final Disposable.Composite running = Disposables.composite();
    private final RateWindow rates;
    private final List<String> decisions = new ArrayList<>();
    private ExchangeServer admin;
    private Pusher pusher;
    private ProcessMetrics processMetrics;

    public ClusterNode(VerbatimConfig config, String name, Scheduler timer, Scheduler cpu) {
        this(config, name, new InMemoryLayoutStore(), timer, cpu);
    }

    /**
     * @param store where the controller commits the cluster's layouts and the brokers watch them (the
     *        in-memory store; the Raft-backed metadata log, whose brokers are listeners, later)
     */
    public ClusterNode(VerbatimConfig config, String name, LayoutStore store, Scheduler timer, Scheduler cpu) {
        this.store = store;
        this.config = config;
        this.self = config.cluster(name);
        this.timer = timer;
        this.cpu = cpu;
        List<String> peers = peers();
        this.controller = new Controller(name, Set.copyOf(peers), self.caps(), store, timer);
        this.rates = new RateWindow(timer);
        registry.config().commonTags("cluster", name);
    }

    public String name() {
        return self.name();
    }

    /** Every other cluster of the configuration: the replication set. */
    public List<String> peers() {
        return config.clusters().stream().map(ClusterConfig::name).filter(n -> !n.equals(self.name())).toList();
    }

    /** Creates the topics, starts the brokers' ingest endpoints and the controller's admin endpoint. */
    public synchronized ClusterNode start() {
        processMetrics = ProcessMetrics.bindTo(registry);
        for (TopicConfig t : config.topics()) {
            // The same initial layout on every cluster (PIP-495: a replicated namespace's topic starts alike);
            // a store that already holds the topic (a restart) keeps what it holds.
            Layout initial = Layout.initial(t.initialSegments(), t.bucketBudget(), 0);
            Layout held = store.get(t.name()).switchIfEmpty(Mono.defer(() -> store.create(t.name(), initial))).block();
            MemoryCluster storage = new MemoryCluster(name(), t.name(), held, timer)
                    .deleteConsumed(config.storage().deleteConsumed());
            for (String peer : peers()) {
                storage.replicateTo(peer, config.replication().startAt());
            }
            topics.put(t.name(), storage);
            load.put(t.name(), new LoadTracker());
            clocks.put(t.name(), AutoScaler.Clocks.NEVER);
            running.add(store.watch(t.name()).subscribe(storage::adopt));
            registry.gauge("verbatim.topic.active.segments", Tags.of("topic", t.name()), storage,
                    s -> s.layout().activeSegments().size());
            storage.pinnedSegmentsMetric(config.replication().messageTtl().toMillis()).bindTo(registry);
        }
        controller.becomeLeader();
        for (int i = 0; i < self.brokers(); i++) {
            BrokerBudget budget = new BrokerBudget(config.slowPath(), timer);
            new BudgetMetricsBinder(budget, Tags.of("broker", Integer.toString(i))).bindTo(registry);
            IngestServer ingest = new IngestServer(name(), i, topics::get, this::brokerUrls, config.brokerToken(),
                    MAX_FRAME_BYTES, registry, (topic, segment, messages, bytes) -> load.get(topic)
                            .produced(segment, messages, bytes)).start(0);
            brokers.add(new Broker(i, budget, ingest, ingest.port()));
        }
        admin = new ExchangeServer(controller, config.exchange(),
                Map.of(config.brokerToken(), ExchangeServer.BROKER_ROLE), () -> null, this::backlog)
                .start(self.adminPort(), this::adminRoutes);
        new ExchangeMetricsBinder(controller).bindTo(registry);
        return this;
    }

    /** Connects to the peers: pushes layouts to their controllers and replicates into their brokers. */
    public synchronized ClusterNode connect(Map<String, Address> peers) {
        Map<String, String> adminUrls = new TreeMap<>();
        peers.forEach((peer, address) -> adminUrls.put(peer, address.adminUrl()));
        ExchangeTransport http = new HttpTransport(adminUrls, config.brokerToken());
        Duration half = config.rtt().dividedBy(2);
        // The simulated WAN delays the exchange as it delays replication: half the round trip each way.
        ExchangeTransport transport = half.isZero() ? http : (peer, request) -> Mono.delay(half, timer)
                .then(http.send(peer, request)).delayElement(half, timer);
        pusher = new Pusher(controller, transport, config.exchange(), timer).start();
        ReplicatorConfig replicator = config.replication().forCluster(name());
        ExchangeGate gate = exchangeGate(controller);
        for (var topic : topics.entrySet()) {
            for (String peer : peers()) {
                Address address = peers.get(peer);
                if (address == null) {
                    throw new IllegalArgumentException("no address for peer " + peer + " of " + name());
                }
                ReplicatorMetrics counters = new ReplicatorMetrics();
                replication.computeIfAbsent(topic.getKey(), t -> new ConcurrentHashMap<>()).put(peer, counters);
                NetworkRemote remote = new NetworkRemote(peer, topic.getKey(), address.brokerUrls(),
                        config.brokerToken(), MAX_FRAME_BYTES, config.rtt(), timer);
                remotes.add(remote);
                for (Broker broker : brokers) {
                    links.add(ReplicationLink.builder().local(topic.getValue()).remote(remote)
                            .owned(s -> owner(s.id()) == broker.index()).config(replicator).budget(broker.budget())
                            .exchangeGate(gate).timer(timer).cpu(cpu).metrics(counters).build().start());
                }
                new PipelineMetricsBinder(counters, Tags.of("remote_cluster", peer, "topic", topic.getKey()),
                        () -> backlog(topic.getKey(), peer).values().stream().mapToLong(Long::longValue).sum())
                        .bindTo(registry);
            }
        }
        rates.start(this::replicatedTotals);
        if (config.storage().pruneSealed()) {
            running.add(Flux.interval(config.storage().gcInterval(), timer)
                    .onBackpressureDrop() // a slow round skips ticks rather than ending the loop
                    .concatMap(tick -> Flux.fromIterable(topics.keySet()).concatMap(this::collectGarbage))
                    .subscribe(v -> { }, e -> LOG.error("{}: garbage collection stopped: {}", name(), e.toString())));
        }
        if (config.autoScale().enabled()) {
            running.add(Flux.interval(config.autoScale().interval(), timer)
                    .onBackpressureDrop() // a slow evaluation skips ticks rather than ending the loop
                    .concatMap(tick -> Flux.fromIterable(topics.keySet()).concatMap(this::evaluatePolicy))
                    .subscribe(v -> { }, e -> LOG.error("{}: the auto-scale loop stopped: {}", name(), e.toString())));
        }
        return this;
    }

    /**
     * R-C11: a replicator writes to a remote only while the remote takes part in the exchange: the
     * controller's verdict on it, re-evaluated on every call (a remote that answers after a 404 is ready).
     */
    private static ExchangeGate exchangeGate(Controller controller) {
        return remote -> controller.verdicts(remote)
                .map(ok -> ok ? ExchangeGate.Readiness.READY : ExchangeGate.Readiness.UNSUPPORTED);
    }

    private int owner(long segmentId) {
        return (int) Math.floorMod(segmentId, (long) brokers.size());
    }

    public Address address() {
        return new Address(adminUrl(), brokerUrls());
    }

    public String adminUrl() {
        return admin.baseUrl();
    }

    public List<String> brokerUrls() {
        return brokers.stream().map(b -> "http://127.0.0.1:" + b.port()).toList();
    }

    public Controller controller() {
        return controller;
    }

    public PrometheusMeterRegistry registry() {
        return registry;
    }

    /** The segment logs of {@code topic} on this cluster (what its brokers store). */
    public MemoryCluster storage(String topic) {
        MemoryCluster storage = topics.get(topic);
        if (storage == null) {
            throw new IllegalArgumentException("cluster " + name() + " has no topic '" + topic + "'");
        }
        return storage;
    }

    public List<String> topics() {
        return List.copyOf(topics.keySet());
    }

    public Layout layout(String topic) {
        return storage(topic).layout();
    }

    public Producer producer(String topic, CompressionType codec) {
        return new Producer(storage(topic), load.get(topic), codec);
    }

    /** A PIP-486 subscription of {@code consumers} consumers, reading every segment from its start. */
    public Subscription subscribe(String topic, String subscription, int consumers) {
        return subscription(topic, subscription).consumers(consumers).subscribe();
    }

    /**
     * @param recording whether the subscription keeps every delivery for {@link Subscription#deliveries()}
     *        (checks and tests)
     */
    public Subscription subscribe(String topic, String subscription, int consumers, boolean recording) {
        return subscription(topic, subscription).consumers(consumers).recording(recording).subscribe();
    }

    /**
     * A PIP-486 subscription to set up, then open with {@link Subscription.Builder#subscribe()}: its consumers,
     * its receiver queue size (the configuration's {@code subscriptions.receiverQueueSize} unless set),
     * recording, a listener of every delivery. It reads every segment from its start; its queue depths and
     * backlog are in {@link #registry()}. One open subscription per name and topic.
     */
    public Subscription.Builder subscription(String topic, String subscription) {
        storage(topic); // an unknown topic is refused here
        return new Subscription.Builder(subscription, config.subscriptions(), options -> open(topic, options));
    }

    private Subscription open(String topic, Subscription.Builder options) {
        List<Subscription> open = subscriptions.computeIfAbsent(topic, t -> new CopyOnWriteArrayList<>());
        Subscription s;
        synchronized (open) {
            if (open.stream().anyMatch(o -> o.name().equals(options.name()) && !o.isDisposed())) {
                throw new IllegalStateException("subscription '" + options.name() + "' of topic " + topic
                        + " is open already on cluster " + name() + " (one per name: they would share a cursor)");
            }
            s = new Subscription(storage(topic), load.get(topic), cpu, options);
            open.add(s);
        }
        SubscriptionMetricsBinder metrics = new SubscriptionMetricsBinder(s, Tags.of("topic", topic));
        metrics.bindTo(registry);
        s.onDispose(() -> {
            metrics.unbindFrom(registry);
            open.remove(s);
        });
        running.add(s);
        return s;
    }

    // ---- admin operations (what Pulsar's /admin/v2/scalable split / rebucket / merge calls do) ------

    public Mono<Outcome> split(String topic, long segmentId) {
        return controller.split(topic, segmentId).doOnNext(o -> recordManual(topic, o, "split"));
    }

    public Mono<Outcome> rebucket(String topic, long segmentId, int bucketCount) {
        return controller.rebucket(topic, segmentId, bucketCount).doOnNext(o -> recordManual(topic, o, "rebucket"));
    }

    /** A manual merge of a replicated topic is a cold mark: merged once every peer agrees (PIP-495). */
    public Mono<Void> markCold(String topic, int boundary) {
        return controller.markCold(topic, boundary);
    }

    /**
     * A manual rebucket-down of a replicated topic is a cold mark too: the segment's range goes down to
     * {@code bucketCount} once every cluster issued it (or holds no more there).
     */
    public Mono<Void> lowerBuckets(String topic, long segmentId, int bucketCount) {
        return Mono.defer(() -> {
            Segment s = layout(topic).segment(segmentId).filter(Segment::isActive).orElseThrow(() ->
                    new IllegalArgumentException("segment " + segmentId + " of " + topic + " is not active"));
            return controller.markBucketsCold(topic, s.range(), bucketCount);
        });
    }

    /** Withdraws an operator's cold mark on {@code boundary}; true if there was one. */
    public boolean unmarkCold(String topic, int boundary) {
        return controller.unmarkCold(topic, boundary);
    }

    /** Withdraws an operator's lowering of {@code range}; true if there was one. */
    public boolean unmarkBuckets(String topic, io.verbatim.model.HashRange range) {
        return controller.unmarkBucketsCold(topic, range);
    }

    private void recordManual(String topic, Outcome o, String kind) {
        if (o instanceof Outcome.Applied) {
            long now = timer.now(TimeUnit.MILLISECONDS);
            AutoScaler.Clocks c = clocks.get(topic);
            clocks.put(topic, kind.equals("split") ? new AutoScaler.Clocks(now, c.lastMergeMs(), c.lastRebucketMs())
                    : new AutoScaler.Clocks(c.lastSplitMs(), c.lastMergeMs(), now));
        }
    }

    // ---- garbage collection -------------------------------------------------------------------

    /**
     * Deletes the sealed segments of {@code topic} that every cursor, replication and subscription,
     * drained (PIP-495's GC gating; replication backlog older than the message TTL does not pin).
     */
    private Mono<Void> collectGarbage(String topic) {
        List<Long> prunable = storage(topic).prunable(config.replication().messageTtl().toMillis());
        if (prunable.isEmpty()) {
            return Mono.empty();
        }
        return controller.prune(topic, prunable)
                .doOnNext(after -> registry.counter(PRUNED, "topic", topic).increment(
                        prunable.stream().filter(id -> after.segment(id).isEmpty()).count()))
                .then()
                .onErrorResume(e -> {
                    LOG.warn("{}: garbage collection of {} failed, trying again next round: {}", name(), topic,
                            e.toString());
                    return Mono.empty();
                });
    }

    // ---- the local policy ---------------------------------------------------------------------

    private Mono<Void> evaluatePolicy(String topic) {
        Layout layout = storage(topic).layout();
        long now = timer.now(TimeUnit.MILLISECONDS);
        Map<Long, AutoScaler.Sample> samples = load.get(topic).sample(
                layout.activeSegments().stream().map(Segment::id).toList(), config.autoScale(), now);
        int consumers = subscriptions.getOrDefault(topic, List.of()).stream().filter(s -> !s.isDisposed())
                .mapToInt(Subscription::consumers).max().orElse(0);
        Caps caps = controller.effectiveCaps(topic);
        AutoScaler.Decision d = AutoScaler.decide(layout, samples, consumers, config.autoScale(), caps, now,
                clocks.get(topic));
        AutoScaler.Clocks c = clocks.get(topic);
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
        Set<Integer> cold = AutoScaler.coldBoundaries(layout, samples, consumers, config.autoScale(), caps, now, c, held);
        boolean newMarks = !held.containsAll(cold);
        Mono<Void> marks = controller.policyColdMarks(topic, cold).then(Mono.fromRunnable(() -> {
            if (newMarks) {
                AutoScaler.Clocks after = clocks.get(topic);
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
            LOG.warn("{}: auto-scale of {} failed: {}", name(), topic, e.toString());
            return Mono.empty();
        });
    }

    private void note(String topic, AutoScaler.Decision d) {
        registry.counter("verbatim.autoscale.decisions", "topic", topic, "kind",
                d.getClass().getSimpleName().toLowerCase(Locale.ROOT)).increment();
        synchronized (decisions) {
            decisions.add(topic + ": " + d);
        }
        LOG.info("{}: auto-scale {}: {}", name(), topic, d);
    }

    /** What the local policy decided so far, oldest first. */
    public List<String> policyDecisions() {
        synchronized (decisions) {
            return List.copyOf(decisions);
        }
    }

    // ---- progress and status ------------------------------------------------------------------

    /** Replication counters toward {@code remote} for {@code topic}, summed over every broker. */
    public ReplicatorMetrics replication(String topic, String remote) {
        return replication.getOrDefault(topic, Map.of()).getOrDefault(remote, new ReplicatorMetrics());
    }

    private Map<String, long[]> replicatedTotals() {
        Map<String, long[]> out = new TreeMap<>();
        replication.forEach((topic, byRemote) -> byRemote.forEach((remote, m) -> {
            long[] totals = out.computeIfAbsent(remote, r -> new long[2]);
            totals[0] += m.verbatimEntries();
            totals[1] += m.rebatchedEntries();
        }));
        return out;
    }

    /** True when every replication cursor of every topic toward every peer has nothing left. */
    public boolean caughtUp() {
        return links.stream().allMatch(ReplicationLink::caughtUp);
    }

    /** Every replicator of every topic toward every peer, as its link supervises it. */
    public List<ReplicatorStatus> replicators() {
        return links.stream().flatMap(l -> l.status().stream()).toList();
    }

    /** Replication backlog per segment of {@code topic} toward {@code remote} (the status of E11). */
    public Map<String, Long> backlog(String topic, String remote) {
        MemoryCluster storage = topics.get(topic);
        Map<String, Long> out = new TreeMap<>();
        if (storage == null) {
            return out;
        }
        for (Segment s : storage.layout().segments().values()) {
            // Not storage.log(id): garbage collection may have deleted a segment of the layout just read.
            out.put(s.descriptor(), storage.backlog(s.id(), ReplicatorConfig.cursorName(remote)));
        }
        return out;
    }

    /**
     * The status of E11 (per topic and remote: converged and diverged ranges, lags, backlog, cap
     * mismatches, cold marks, recent changes; per peer the exchange's verdict) and of the replicators:
     * how many, their restarts, and each one failing now with its last error.
     */
    public Mono<Map<String, Object>> status() {
        return controller.status(this::backlog).map(s -> {
            Map<String, Object> out = new LinkedHashMap<>(s);
            List<ReplicatorStatus> all = replicators();
            Map<String, Object> r = new LinkedHashMap<>();
            r.put("total", all.size());
            r.put("restarts", all.stream().mapToLong(ReplicatorStatus::restarts).sum());
            r.put("failing", all.stream().filter(ReplicatorStatus::failing).map(f -> {
                Map<String, Object> one = new LinkedHashMap<>();
                one.put("id", f.id());
                one.put("state", f.state().name());
                one.put("consecutiveFailures", f.consecutiveFailures());
                one.put("restarts", f.restarts());
                one.put("lastError", f.lastError());
                return one;
            }).toList());
            out.put("replicators", r);
            return out;
        });
    }

    /** Stops every broker's ingest endpoint: connections into this cluster drop, new ones are refused. */
    public synchronized void stopIngest() {
        brokers.forEach(b -> b.ingest().stop());
    }

    /** Restarts the ingest endpoints on their ports. */
    public synchronized void restartIngest() {
        for (Broker b : brokers) {
            if (!b.ingest().isRunning()) {
                b.ingest().start(b.port());
            }
        }
    }

    private void adminRoutes(HttpServerRoutes routes) {
        new AdminApi(this, config.brokerToken()).register(routes);
        routes.get("/metrics", (request, response) -> response
                .header(HttpHeaderNames.CONTENT_TYPE, "text/plain; version=0.0.4; charset=utf-8")
                .sendString(Mono.fromCallable(registry::scrape), StandardCharsets.UTF_8));
        new StatusPage(this, rates, timer).register(routes);
    }

    /**
     * Stops talking to the other clusters (the exchange's pushes, the replication links, the layout
     * streams) while this cluster's endpoints still answer. A runtime of several clusters disconnects
     * them all before it closes any, so no client is left cancelling a connection its server already
     * closed.
     */
    synchronized void disconnect() {
        if (pusher != null) {
            pusher.dispose();
        }
        links.forEach(ReplicationLink::stop);
        remotes.forEach(NetworkRemote::close);
    }

    @Override
    public synchronized void close() {
        disconnect();
        running.dispose();
        rates.dispose();
        brokers.forEach(b -> b.ingest().stop());
        if (admin != null) {
            admin.stop();
        }
        if (processMetrics != null) {
            processMetrics.close();
        }
        registry.close();
    }
}
