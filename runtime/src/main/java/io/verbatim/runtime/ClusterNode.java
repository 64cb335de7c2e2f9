package io.verbatim.runtime;

import io.micrometer.core.instrument.Tags;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.verbatim.budget.BrokerBudget;
import io.verbatim.budget.BudgetMetricsBinder;
import io.verbatim.config.Addresses;
import io.verbatim.config.ClusterConfig;
import io.verbatim.config.ClusterUrls;
import io.verbatim.config.TopicConfig;
import io.verbatim.config.VerbatimConfig;
import io.verbatim.embedded.ClusterImage;
import io.verbatim.embedded.MemoryCluster;
import io.verbatim.exchange.Controller;
import io.verbatim.exchange.ControllerLeader;
import io.verbatim.exchange.ExchangeMetricsBinder;
import io.verbatim.exchange.ExchangeServer;
import io.verbatim.exchange.ExchangeTransport;
import io.verbatim.exchange.HttpTransport;
import io.verbatim.exchange.Pusher;
import io.verbatim.model.Compression;
import io.verbatim.model.Layout;
import io.verbatim.model.Outcome;
import io.verbatim.model.Segment;
import io.verbatim.net.NetClient;
import io.verbatim.net.NetMetricsBinder;
import io.verbatim.net.NetServer;
import io.verbatim.net.Role;
import io.verbatim.net.Tls;
import io.verbatim.pipeline.ExchangeGate;
import io.verbatim.pipeline.InFlightBudget;
import io.verbatim.pipeline.PipelineMetricsBinder;
import io.verbatim.pipeline.ReplicationLink;
import io.verbatim.pipeline.ReplicatorConfig;
import io.verbatim.pipeline.ReplicatorMetrics;
import io.verbatim.pipeline.ReplicatorStatus;
import io.verbatim.runtime.broker.Broker;
import io.verbatim.runtime.broker.BrokerReport;
import io.verbatim.runtime.broker.Heartbeat;
import io.verbatim.runtime.broker.IngestServer;
import io.verbatim.runtime.broker.LoadTracker;
import io.verbatim.runtime.broker.NetworkRemote;
import io.verbatim.runtime.broker.Producer;
import io.verbatim.runtime.broker.Subscription;
import io.verbatim.runtime.broker.SubscriptionMetricsBinder;
import io.verbatim.runtime.controller.AdminApi;
import io.verbatim.runtime.controller.AdminOperations;
import io.verbatim.runtime.controller.AdoptingLayoutStore;
import io.verbatim.runtime.controller.ControllerGroup;
import io.verbatim.runtime.controller.ControllerLink;
import io.verbatim.runtime.controller.ControllerOperations;
import io.verbatim.runtime.controller.DelegationApi;
import io.verbatim.runtime.controller.Delegations;
import io.verbatim.runtime.controller.GarbageCollector;
import io.verbatim.runtime.controller.PolicyLoop;
import io.verbatim.runtime.status.NodeStatus;
import io.verbatim.runtime.storage.LocalStorage;
import io.verbatim.runtime.storage.MemoryTopicStorage;
import io.verbatim.runtime.storage.PulsarConnections;
import io.verbatim.runtime.storage.PulsarTopicStorage;
import io.verbatim.runtime.storage.TopicStorage;
import io.verbatim.store.InMemoryLayoutStore;
import io.verbatim.store.LayoutStore;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import reactor.core.Disposable;
import reactor.core.Disposables;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
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
    /** Bytes in flight on one broker's replicators (its {@link InFlightBudget}). */
    static final String IN_FLIGHT_BYTES = "verbatim.replication.inflight.bytes";
    /** Broker URLs a peer's layouts named that are not configured for it (ignored), per peer and topic. */
    public static final String IGNORED_BROKER_URLS = "verbatim.replication.brokers.ignored";
    /** Sealed segments garbage collection deleted, per topic. */
    public static final String PRUNED = GarbageCollector.PRUNED;

    /** How long the brokers' process waits for a topic's first layout from the metadata log. */
    private static final Duration FIRST_LAYOUT_WAIT = Duration.ofSeconds(60);
    /** How long a start waits for the cluster's Pulsar ({@code storage.type: pulsar}) before it fails. */
    private static final Duration PULSAR_START_WAIT = Duration.ofMinutes(2);
    /** How often the brokers' process reports to its controller leader at least. */
    private static final Duration REPORT_INTERVAL = Duration.ofSeconds(1);

    private final VerbatimConfig config;
    private final ClusterConfig self;
    private final Scheduler timer;
    private final Scheduler cpu;
    private final LayoutStore store;
    /** What the brokers last reported per topic, load aside (a topic where nothing changed is left out). */
    private final Map<String, BrokerReport.Topic> reportedLast = new ConcurrentHashMap<>();
    /** The metadata log the store is on, when this node runs one. */
    private final Optional<ControllerGroup> group;
    /** The brokers' side of a metadata log whose controller replicas run as processes of their own. */
    private final Optional<ControllerLink> link;
    private @Nullable ExchangeTransport exchangeTransport;
    private final java.util.concurrent.atomic.AtomicLong failovers = new java.util.concurrent.atomic.AtomicLong();
    private final Controller controller;
    private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    private final Map<String, TopicStorage> topics = new LinkedHashMap<>();
    /** The clients of this cluster's Pulsar and its peers' ({@code storage.type: pulsar}); empty in memory. */
    private final Optional<PulsarConnections> pulsar;
    private final List<reactor.core.Disposable> pulsarRemotes = new ArrayList<>();
    private final Map<String, LoadTracker> load = new ConcurrentHashMap<>();
    private final Map<String, List<Subscription>> subscriptions = new ConcurrentHashMap<>();
    private final List<Broker> brokers = new ArrayList<>();
    /** topic → remote → counters summed over every broker's link. */
    private final Map<String, Map<String, ReplicatorMetrics>> replication = new ConcurrentHashMap<>();
    private final List<NetworkRemote> remotes = new ArrayList<>();
    private final Disposable.Composite running = Disposables.composite();
    /** The loops that change layouts on their own (garbage collection, the local policy): stopped first. */
    private final Disposable.Composite loops = Disposables.composite();
    private volatile boolean stopping;
    private final RateWindow rates;
    /** Where the topics' segments live when they are in memory: kept in a data directory, or memory only. */
    private volatile LocalStorage local;
    private final PolicyLoop policy;
    private final AdminOperations operations;
    /** Who may call this cluster's ports, their limits and TLS. */
    private final NetServer net;
    /** How this cluster calls its peers: signed with its own key, over its TLS. */
    private final NetClient client;
    private @Nullable ExchangeServer admin;
    private @Nullable Pusher pusher;
    private @Nullable ProcessMetrics processMetrics;

    /** A cluster whose layouts live in its metadata log, in memory. */
    public ClusterNode(VerbatimConfig config, String name, Scheduler timer, Scheduler cpu) {
        this(config, name, Optional.empty(), timer, cpu);
    }

    /**
     * A cluster whose layouts live in its metadata log: three controller replicas and a listener per
     * broker, in this process (see {@link ControllerGroup}).
     *
     * @param dataDir where the metadata log keeps its members' logs and snapshots; empty: in memory
     */
    public ClusterNode(VerbatimConfig config, String name, Optional<Path> dataDir, Scheduler timer, Scheduler cpu) {
        this(config, name, ControllerGroup.start(config.cluster(name), config.metadataLog(), dataDir, timer), timer, cpu);
    }

    private ClusterNode(VerbatimConfig config, String name, ControllerGroup group, Scheduler timer, Scheduler cpu) {
        this(config, name, group.store(), Optional.of(group), Optional.empty(), timer, cpu);
    }

    private ClusterNode(VerbatimConfig config, String name, ControllerLink link, Scheduler timer, Scheduler cpu) {
        this(config, name, link.store(), Optional.empty(), Optional.of(link), timer, cpu);
    }

    /**
     * The brokers of a cluster whose controller replicas run as processes of their own (the configuration
     * names them: {@code clusters[].controllers}): this process is the metadata log's listener
     * {@value io.verbatim.config.ControllerReplica#BROKERS} and watches layouts from its replica; the
     * controller leader creates the topics, runs the exchange, the admin operations, the policy and garbage
     * collection on what these brokers report (see {@link ControllerLink}). Exchange and admin calls to this
     * process's admin port are redirected to the leader.
     *
     * @param dataDir where the listener keeps its log and snapshots; empty: in memory
     */
    public static ClusterNode brokersOf(VerbatimConfig config, String name, Optional<Path> dataDir, Scheduler timer,
            Scheduler cpu) {
        if (!config.cluster(name).separateControllers()) {
            throw new IllegalArgumentException("cluster " + name + " names no controllers: its controller replicas run "
                    + "in the brokers' process");
        }
        ControllerLink link = new ControllerLink(config, name, dataDir);
        try {
            return new ClusterNode(config, name, link, timer, cpu);
        } catch (RuntimeException e) {
            link.close();
            throw e;
        }
    }

    /**
     * A cluster on a layout store of the caller's (an {@link InMemoryLayoutStore}, say): no metadata log,
     * so no controller failover.
     *
     * @param store where the controller commits the cluster's layouts and the brokers watch them
     */
    public ClusterNode(VerbatimConfig config, String name, LayoutStore store, Scheduler timer, Scheduler cpu) {
        this(config, name, store, Optional.empty(), Optional.empty(), timer, cpu);
    }

    private ClusterNode(VerbatimConfig config, String name, LayoutStore store, Optional<ControllerGroup> group,
            Optional<ControllerLink> link, Scheduler timer, Scheduler cpu) {
        this.store = store;
        this.group = group;
        this.link = link;
        this.config = config;
        this.self = config.cluster(name);
        this.timer = timer;
        this.cpu = cpu;
        List<String> peers = peers();
        this.controller = new Controller(name, Set.copyOf(peers), self.caps(), new AdoptingLayoutStore(store,
                (topic, layout) -> {
                    TopicStorage storage = topics.get(topic);
                    return storage == null ? Mono.empty() : storage.adopt(layout).then();
                }), timer);
        this.pulsar = config.storage().onPulsar() ? Optional.of(new PulsarConnections(config, name)) : Optional.empty();
        this.rates = new RateWindow(timer);
        this.local = LocalStorage.memoryOnly(name, timer);
        Optional<Tls> tls = config.security().tls(name);
        this.net = new NetServer(config.security().authenticator(name), config.network(), tls.map(Tls::serverContext),
                timer);
        this.client = NetClient.of(name, config.security().signingKey(name), config.network(),
                tls.map(Tls::clientContext), timer);
        registry.config().commonTags("cluster", name);
        this.policy = new PolicyLoop(name, config.autoScale(), controller, this::layout, load::get, this::consumers,
                registry, timer);
        this.operations = new ControllerOperations(name, this::topics, this::layout, controller, policy);
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
        try {
            return startNow();
        } catch (RuntimeException e) {
            close(); // what did start (a broker's port) is released
            throw e;
        }
    }

    private ClusterNode startNow() {
        processMetrics = ProcessMetrics.bindTo(registry);
        for (TopicConfig t : config.topics()) {
            // The same initial layout on every cluster (PIP-495: a replicated namespace's topic starts alike);
            // a store that already holds the topic (a restart) keeps what it holds.
            Layout initial = Layout.initial(t.initialSegments(), t.bucketBudget(), 0);
            Layout start = local.recoveredLayout(t.name()).orElse(initial);
            Layout held = Objects.requireNonNull(link.isPresent()
                    ? link.get().first(t.name(), FIRST_LAYOUT_WAIT).block()
                    : store.get(t.name()).switchIfEmpty(Mono.defer(() -> store.create(t.name(), start))).block());
            TopicStorage storage = pulsar.isPresent() ? onPulsar(pulsar.get(), t.name(), held)
                    : inMemory(t.name(), held);
            topics.put(t.name(), storage);
            load.put(t.name(), new LoadTracker());
            // each layout handed over as it comes (adopt takes them in this order, and skips one a newer one
            // makes moot); the watch outlives a layout that cannot be taken
            running.add(store.watch(t.name()).flatMap(storage::adopt).subscribe(taken -> { },
                    e -> LOG.error("{}: the layout watch of {} stopped: {}", name(), t.name(), e.toString())));
            registry.gauge("verbatim.topic.active.segments", Tags.of("topic", t.name()), storage,
                    s -> s.layout().activeSegments().size());
            storage.memory().ifPresent(m -> m.pinnedSegmentsMetric(config.replication().messageTtl().toMillis())
                    .bindTo(registry));
        }
        local.configuredTopicsOpened();
        local.unopened().forEach(t -> LOG.warn("{}: topic {} was kept in the data directory but is not configured: "
                + "it is dropped at the next checkpoint", name(), t));
        controller.becomeLeader();
        Addresses addresses = self.addresses();
        for (int i = 0; i < self.brokers(); i++) {
            BrokerBudget budget = new BrokerBudget(config.slowPath(), timer);
            new BudgetMetricsBinder(budget, Tags.of("broker", Integer.toString(i))).bindTo(registry);
            IngestServer ingest = new IngestServer(name(), i, t -> Optional.ofNullable(topics.get(t)), this::brokerUrls,
                    net, Set.copyOf(peers()),
                    registry, (topic, segment, messages, bytes) -> load(topic).produced(segment, messages, bytes));
            // one in-flight budget per broker: the replicators of all its topics and remotes share it
            InFlightBudget inFlight = InFlightBudget.of(config.replication().brokerInFlightBytes());
            io.micrometer.core.instrument.Gauge.builder(IN_FLIGHT_BYTES, inFlight, InFlightBudget::used)
                    .tags(Tags.of("broker", Integer.toString(i))).baseUnit("bytes")
                    .description("bytes of entries the broker's replicators read and the remotes have not acknowledged"
                            + " (each entry with 1 KiB of bookkeeping), out of replication.brokerInFlightBytes")
                    .strongReference(true).register(registry);
            Broker broker = new Broker(i, self.brokers(), budget, inFlight, ingest);
            brokers.add(broker); // before it binds: a failed start stops what did start
            int port = addresses.brokerPorts().get(i);
            bind(key() + ".brokerPorts[" + i + "]", addresses.bindAddress(), port, () -> {
                broker.listen(addresses.bindAddress(), port);
                return broker;
            });
        }
        ExchangeServer exchange = link.isPresent()
                ? new ExchangeServer(controller, config.exchange(), this::backlog, net, link.get()::leader)
                : new ExchangeServer(controller, config.exchange(), net, this::backlog);
        admin = bind(key() + ".adminPort", addresses.bindAddress(), addresses.adminPort(),
                () -> exchange.start(addresses.bindAddress(), addresses.adminPort(), this::adminRoutes));
        new ExchangeMetricsBinder(controller).bindTo(registry);
        io.micrometer.core.instrument.FunctionCounter.builder("verbatim.controller.failovers", failovers,
                java.util.concurrent.atomic.AtomicLong::get)
                .description("times another controller replica took over as the metadata log's leader")
                .register(registry);
        new NetMetricsBinder(net).bindTo(registry);
        local.bindTo(registry);
        link.ifPresent(l -> l.bindTo(registry));
        group.ifPresent(g -> g.bindTo(registry));
        return this;
    }

    private TopicStorage inMemory(String topic, Layout held) {
        MemoryCluster storage = local.openTopic(topic, held).deleteConsumed(config.storage().deleteConsumed());
        for (String peer : peers()) {
            storage.replicateTo(peer, config.replication().startAt());
        }
        return new MemoryTopicStorage(storage);
    }

    /**
     * The topic on this cluster's Pulsar: its namespace prepared (deduplication on), its segment topics and each
     * peer's replication subscription made, retried with backoff (each failure logged) for at most
     * {@link #PULSAR_START_WAIT}.
     */
    private TopicStorage onPulsar(PulsarConnections connections, String topic, Layout held) {
        String url = connections.own().settings().adminUrl();
        Mono<TopicStorage> open = connections.prepared(config.replication().retry(), timer)
                .then(PulsarTopicStorage.open(name(), connections.own(), topic, peers(), held,
                        config.replication().retry(), timer, config.storage().pruneSealed())
                        .map(TopicStorage.class::cast));
        return open.timeout(PULSAR_START_WAIT, timer).onErrorMap(java.util.concurrent.TimeoutException.class,
                e -> new IllegalStateException(key() + ".pulsar: cannot reach Pulsar at " + url + " within "
                        + PULSAR_START_WAIT.toSeconds() + " s (see the warnings above for each attempt's cause)", e))
                .blockOptional().orElseThrow();
    }

    /** This cluster's key in the configuration file, for errors that name it. */
    private String key() {
        return "clusters[" + config.clusters().indexOf(self) + "]";
    }

    /** Binds a listener; a port in use (or a host that cannot be bound) is an error naming the key. */
    private static <T> T bind(String key, String host, int port, java.util.function.Supplier<T> binding) {
        try {
            return binding.get();
        } catch (RuntimeException e) {
            Throwable cause = e instanceof reactor.netty.ChannelBindException && e.getCause() != null ? e.getCause() : e;
            throw new IllegalStateException(key + ": cannot listen on " + host + ":" + port + " ("
                    + (cause.getMessage() == null ? cause.getClass().getSimpleName() : cause.getMessage())
                    + (port == 0 ? ")" : "; is the port in use?)"), e);
        }
    }

    /**
     * The state to start from instead of the configured initial layouts: topic images (by topic), each brought to
     * the metadata log's layout as it starts. Before {@link #start()}.
     */
    public synchronized ClusterNode restore(Map<String, ClusterImage> images) {
        images.forEach(local::offer);
        return this;
    }

    /**
     * Keeps the topics' segments in {@code storage} (a data directory's, with what it recovered), in place of
     * memory only. Before {@link #start()}.
     */
    synchronized ClusterNode storage(LocalStorage storage) {
        local.close();
        local = storage;
        return this;
    }

    /** Connects to the peers: pushes layouts to their controllers and replicates into their brokers. */
    public synchronized ClusterNode connect(Map<String, ClusterUrls> peers) {
        Map<String, List<String>> exchangeUrls = new TreeMap<>();
        peers.forEach((peer, address) -> exchangeUrls.put(peer, address.exchangeUrls()));
        ExchangeTransport http = HttpTransport.toReplicas(exchangeUrls, client);
        Duration half = config.rtt().dividedBy(2);
        // The simulated WAN delays the exchange as it delays replication: half the round trip each way.
        ExchangeTransport transport = half.isZero() ? http : (peer, request) -> Mono.delay(half, timer)
                .then(http.send(peer, request)).delayElement(half, timer);
        exchangeTransport = transport;
        if (link.isEmpty()) {
            pusher = new Pusher(controller, transport, config.exchange(), timer).start();
        }
        // off the metadata log's threads: failover takes this node's lock, which close() holds while it waits
        // for those threads to stop (a leader change during a close deadlocked it for the stop's timeout)
        group.ifPresent(g -> running.add(g.leaders().skip(1).publishOn(Schedulers.boundedElastic())
                .subscribe(this::failover)));
        ReplicatorConfig replicator = config.replication().forCluster(name());
        Heartbeat heartbeat = new Heartbeat(config.replication().pingInterval(), config.replication().pingTimeout());
        ExchangeGate gate = link.map(ControllerLink::gate).orElseGet(() -> exchangeGate(controller));
        for (var topic : topics.entrySet()) {
            for (String peer : peers()) {
                ClusterUrls address = peers.get(peer);
                if (address == null) {
                    throw new IllegalArgumentException("no address for peer " + peer + " of " + name());
                }
                ReplicatorMetrics counters = new ReplicatorMetrics();
                replication.computeIfAbsent(topic.getKey(), t -> new ConcurrentHashMap<>()).put(peer, counters);
                NetworkRemote network = new NetworkRemote(peer, topic.getKey(), address.brokerUrls(), client,
                        config.rtt(), heartbeat, timer);
                remotes.add(network);
                io.micrometer.core.instrument.FunctionCounter.builder(IGNORED_BROKER_URLS, network,
                                NetworkRemote::ignoredBrokerUrls)
                        .tags(Tags.of("remote_cluster", peer, "topic", topic.getKey()))
                        .description("broker URLs the remote's layouts named that are not configured for it: never called")
                        .register(registry);
                io.verbatim.pipeline.RemoteCluster remote = network;
                if (pulsar.isPresent()) {
                    // entries go into the peer's Pulsar; its layouts still come from its brokers' layout stream
                    io.verbatim.pulsar.PulsarRemote onPulsar = new io.verbatim.pulsar.PulsarRemote(peer,
                            pulsar.get().of(peer), topic.getKey(), network.layouts());
                    pulsarRemotes.add(onPulsar);
                    remote = onPulsar;
                }
                io.verbatim.pipeline.RemoteCluster into = remote;
                List<ReplicationLink> links = new ArrayList<>();
                for (Broker broker : brokers) {
                    links.add(broker.replicate(() -> ReplicationLink.builder().local(topic.getValue()).remote(into)
                            .config(replicator).exchangeGate(gate).timer(timer).cpu(cpu).metrics(counters)
                            .stallAfter(config.replication().stallAfter())));
                }
                new PipelineMetricsBinder(counters, Tags.of("remote_cluster", peer, "topic", topic.getKey()),
                        () -> backlog(topic.getKey(), peer).values().stream().mapToLong(Long::longValue).sum(),
                        () -> links.stream().flatMap(l -> l.status().stream()).toList())
                        .bindTo(registry);
            }
        }
        rates.start(this::replicatedTotals);
        if (link.isPresent()) {
            // the controller leader decides on these brokers' reports
            Duration every = config.autoScale().enabled() && config.autoScale().interval().compareTo(REPORT_INTERVAL) < 0
                    ? config.autoScale().interval() : REPORT_INTERVAL;
            link.get().start(every, this::report, this::untaken, timer);
            return this;
        }
        if (config.storage().pruneSealed()) {
            loops.add(new GarbageCollector(name(), controller, this::prunable, registry)
                    .start(topics(), config.storage().gcInterval(), timer));
        }
        if (config.autoScale().enabled()) {
            loops.add(policy.start(topics()));
        }
        return this;
    }

    /**
     * A new controller replica leads the metadata log (the old leader crashed or was cut off): as a new
     * controller leader it knows nothing of its peers, defers its own layout changes until it holds every
     * peer's state, and pushes its state to every peer at once (R-E5).
     */
    private synchronized void failover(String leader) {
        ExchangeTransport transport = exchangeTransport;
        if (stopping || pusher == null || transport == null) {
            return;
        }
        LOG.info("{}: controller replica {} leads the metadata log now; pushing to every peer, own changes "
                + "deferred until every peer's state is held", name(), leader);
        failovers.incrementAndGet();
        pusher.dispose();
        controller.becomeLeader();
        pusher = new Pusher(controller, transport, config.exchange(), timer).start();
    }

    /**
     * R-C11: a replicator writes to a remote only while the remote takes part in the exchange: the
     * controller's verdict on it, re-evaluated on every call (a remote that answers after a 404 is ready).
     */
    private static ExchangeGate exchangeGate(Controller controller) {
        return remote -> controller.verdicts(remote)
                .map(ok -> ok ? ExchangeGate.Readiness.READY : ExchangeGate.Readiness.UNSUPPORTED);
    }

    public ClusterUrls address() {
        return new ClusterUrls(adminUrl(), brokerUrls());
    }

    /** The controller's admin URL as peers reach it (the advertised address). */
    public String adminUrl() {
        return self.addresses().advertisedUrl(net.scheme(), adminServer().port());
    }

    /** The port the controller's admin endpoint is bound to. */
    public int adminPort() {
        return adminServer().port();
    }

    private ExchangeServer adminServer() {
        return Objects.requireNonNull(admin, "not started");
    }

    /** The load of {@code topic}, a configured topic (started). */
    private LoadTracker load(String topic) {
        return Objects.requireNonNull(load.get(topic), topic);
    }

    /** Every broker's ingest URL as peers reach it (the advertised address), in broker order. */
    public List<String> brokerUrls() {
        return brokers.stream().map(b -> self.addresses().advertisedUrl(net.scheme(), b.port())).toList();
    }

    /** The node's clock, in milliseconds. */
    public long nowMs() {
        return timer.now(TimeUnit.MILLISECONDS);
    }

    public Controller controller() {
        return controller;
    }

    public PrometheusMeterRegistry registry() {
        return registry;
    }

    /**
     * The in-memory segment logs of {@code topic} on this cluster (what its brokers store), for checks and
     * images.
     *
     * @throws IllegalStateException when the cluster keeps its segments on Pulsar ({@link #topicStorage})
     */
    public MemoryCluster storage(String topic) {
        return topicStorage(topic).memory().orElseThrow(() -> new IllegalStateException("cluster " + name()
                + " keeps topic '" + topic + "' on Pulsar (storage.type pulsar), not in memory: read it through a "
                + "subscription"));
    }

    /** Where this cluster keeps {@code topic}'s segments: in memory or on its Pulsar. */
    public TopicStorage topicStorage(String topic) {
        TopicStorage storage = topics.get(topic);
        if (storage == null) {
            throw new IllegalArgumentException("cluster " + name() + " has no topic '" + topic + "'");
        }
        return storage;
    }

    public List<String> topics() {
        return List.copyOf(topics.keySet());
    }

    public Layout layout(String topic) {
        return topicStorage(topic).layout();
    }

    public Producer producer(String topic, Compression codec) {
        return new Producer(topicStorage(topic), load(topic), codec);
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
        topicStorage(topic); // an unknown topic is refused here
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
            s = new Subscription(topicStorage(topic), load(topic), cpu, options);
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
        return operations.split(topic, segmentId);
    }

    public Mono<Outcome> rebucket(String topic, long segmentId, int bucketCount) {
        return operations.rebucket(topic, segmentId, bucketCount);
    }

    /** A manual merge of a replicated topic is a cold mark: merged once every peer agrees (PIP-495). */
    public Mono<Void> markCold(String topic, int boundary) {
        return operations.markCold(topic, boundary);
    }

    /**
     * A manual rebucket-down of a replicated topic is a cold mark too: the segment's range goes down to
     * {@code bucketCount} once every cluster issued it (or holds no more there).
     */
    public Mono<Void> lowerBuckets(String topic, long segmentId, int bucketCount) {
        return operations.lowerBuckets(topic, segmentId, bucketCount);
    }

    /** Withdraws an operator's cold mark on {@code boundary}; true if there was one. */
    public boolean unmarkCold(String topic, int boundary) {
        return operations.unmarkCold(topic, boundary);
    }

    /** Withdraws an operator's lowering of {@code range}; true if there was one. */
    public boolean unmarkBuckets(String topic, io.verbatim.model.HashRange range) {
        return operations.unmarkBuckets(topic, range);
    }

    /** The sealed segments of {@code topic} nothing needs any more (backlog older than the message TTL does not pin). */
    List<Long> prunable(String topic) {
        return topicStorage(topic).prunable(config.replication().messageTtl().toMillis());
    }

    /** What the brokers tell the controller leader (a cluster with controller replicas of their own). */
    private BrokerReport report(boolean whole) {
        Map<String, BrokerReport.Topic> out = new LinkedHashMap<>();
        for (String topic : topics.keySet()) {
            BrokerReport.Topic now = new BrokerReport.Topic(load(topic).drain(), consumers(topic),
                    config.storage().pruneSealed() && !stopping ? prunable(topic) : List.of());
            BrokerReport.Topic before = reportedLast.put(topic, new BrokerReport.Topic(Map.of(), now.consumers(),
                    now.prunable()));
            if (whole || !now.load().isEmpty() || before == null || before.consumers() != now.consumers()
                    || !before.prunable().equals(now.prunable())) {
                out.put(topic, now);
            }
        }
        return new BrokerReport(out);
    }

    /** A report the controller leader did not take: its load counts again in the next one. */
    private void untaken(BrokerReport report) {
        report.topics().forEach((topic, t) -> {
            LoadTracker tracker = load.get(topic);
            if (tracker != null) {
                tracker.add(t.load());
            }
        });
    }

    /** How many consumers the topic's largest open subscription has (what the policy splits for). */
    private int consumers(String topic) {
        return subscriptions.getOrDefault(topic, List.of()).stream().filter(s -> !s.isDisposed())
                .mapToInt(Subscription::consumers).max().orElse(0);
    }

    /** What the local policy decided so far, oldest first. */
    public List<String> policyDecisions() {
        return policy.decisions();
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
        return brokers.stream().allMatch(Broker::caughtUp);
    }

    /** Every replicator of every topic toward every peer, as its link supervises it. */
    public List<ReplicatorStatus> replicators() {
        return brokers.stream().flatMap(b -> b.replicators().stream()).toList();
    }

    /** Replication backlog per segment of {@code topic} toward {@code remote} (the status of E11). */
    public Map<String, Long> backlog(String topic, String remote) {
        TopicStorage storage = topics.get(topic);
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
     * how many, their restarts, each one failing now with its last error, and each one stalled (backlog, and
     * nothing acknowledged for {@code replication.stallAfter}) with for how long.
     */
    public Mono<NodeStatus> status() {
        return controller.status(this::backlog).map(s -> new NodeStatus(s, NodeStatus.Replicators.of(replicators()),
                NodeStatus.MetadataLogMember.of(metadataLog()),
                group.flatMap(ControllerGroup::leading).map(Delegations::feeds).orElse(List.of()), storageStatus()));
    }

    private NodeStatus.Storage storageStatus() {
        if (pulsar.isPresent()) {
            return new NodeStatus.Storage("pulsar", true, "");
        }
        LocalStorage storage = local;
        return new NodeStatus.Storage(storage.durable() ? "embedded" : "memory", storage.durable(),
                storage.failure().orElse(""));
    }

    /**
     * Kills the controller replica that leads the metadata log, as a crash would (what it synced stays on
     * disk); the other two elect a new leader, which takes over as controller (see {@link #failover}).
     *
     * @return the member killed
     * @throws IllegalStateException when this node runs no metadata log or its group has no leader now
     */
    public String killControllerLeader() {
        String leader = metadataGroup().leader().orElseThrow(() -> new IllegalStateException(name()
                + "'s metadata log has no leader now"));
        LOG.info("{}: killing controller replica {}, the metadata log's leader", name(), leader);
        metadataGroup().kill(leader);
        return leader;
    }

    /**
     * Kills member {@code member} of the metadata log (a controller replica {@code c1..c3}, or a broker's
     * listener {@code b0..}), as a crash would: a delegate follower that dies has its listeners revoked and
     * fed by the leader.
     *
     * @throws IllegalArgumentException when no such member runs
     * @throws IllegalStateException when this node runs no metadata log
     */
    public void killMetadataMember(String member) {
        LOG.info("{}: killing metadata log member {}", name(), member);
        metadataGroup().kill(member);
    }

    private ControllerGroup metadataGroup() {
        return group.orElseThrow(() -> new IllegalStateException(name()
                + " runs on a layout store of its caller's, not on a metadata log"));
    }

    /** How many times another controller replica took over as leader since the start. */
    public long controllerFailovers() {
        return failovers.get();
    }

    /** The metadata log's members as this process runs them (empty without a metadata log). */
    public List<io.verbatim.metastore.raft.RaftStatus> metadataLog() {
        return link.map(l -> List.of(l.status())).orElseGet(() -> group.map(ControllerGroup::statuses).orElse(List.of()));
    }

    /** Stops every broker's ingest endpoint: connections into this cluster drop, new ones are refused. */
    public synchronized void stopIngest() {
        brokers.forEach(Broker::stopIngest);
    }

    /** Restarts the ingest endpoints on their ports. */
    public synchronized void restartIngest() {
        brokers.forEach(Broker::restartIngest);
    }

    private void adminRoutes(HttpServerRoutes routes) {
        (link.isPresent() ? new AdminApi(operations, net, link.get()::leader) : new AdminApi(operations, net))
                .register(routes);
        // the brokers' process redirects to the controller leader; an in-process group changes on its leader
        if (link.isPresent()) {
            new DelegationApi(DelegationApi.Log.NONE, net, link.get()::leader).register(routes);
        } else {
            group.ifPresent(g -> new DelegationApi(g, net, () -> ControllerLeader.HERE).register(routes));
        }
        new TopicsApi(this, net, config.exchange().maxBodyBytes()).register(routes);
        routes.get("/metrics", net.guard(Role.STATUS, "the metrics", (request, response) -> response
                .header(HttpHeaderNames.CONTENT_TYPE, "text/plain; version=0.0.4; charset=utf-8")
                .sendString(Mono.fromCallable(registry::scrape), StandardCharsets.UTF_8)));
        new StatusPage(this, rates, timer, net).register(routes);
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
        brokers.forEach(Broker::stopReplicating);
        pulsarRemotes.forEach(reactor.core.Disposable::dispose);
        remotes.forEach(NetworkRemote::close);
    }

    /** Where a clean stop writes the topics' state (a data directory's checkpoint), if it keeps them at all. */
    public Optional<Path> stateFile() {
        return local.durable() ? local.stateFile() : Optional.empty();
    }

    /** True once {@link #stop} began: the node takes no new messages from applications. */
    public boolean stopping() {
        return stopping;
    }

    /**
     * Stops as a node stops on SIGTERM, losing nothing: no more messages from applications, no more own
     * layout changes or garbage collection; then it waits (at most {@code drainTimeout}) until its
     * replicators have sent every entry and had it acknowledged by the peers that are up, stops talking
     * to its peers, closes the sessions peers hold into its brokers (they resume from their cursors once
     * it is back) and takes the image of every topic, with nothing arriving any more.
     *
     * @return every topic's image, what a node writes to its data directory
     */
    public Map<String, ClusterImage> stop(Duration drainTimeout) {
        synchronized (this) {
            stopping = true;
            loops.dispose();
        }
        boolean drained = caughtUp() || Flux.interval(Duration.ofMillis(20), timer).filter(t -> caughtUp()).next()
                .timeout(drainTimeout, timer).map(t -> true).onErrorReturn(false).blockOptional().orElse(false);
        if (!drained) {
            LOG.warn("{}: stopping with replication backlog after {} (peers down or slow): it is sent from the "
                    + "cursors after the restart", name(), drainTimeout);
        }
        synchronized (this) {
            disconnect();
            brokers.forEach(Broker::stopIngest);
            Map<String, ClusterImage> images = new LinkedHashMap<>();
            // Stopped under each topic's lock: an entry a peer's session still delivers is refused, not stored
            // after the image (and acknowledged, and lost at the restart).
            // On Pulsar, the broker keeps the segments: there is no image to take.
            topics.forEach((topic, storage) -> storage.memory().ifPresent(m -> images.put(topic, m.stop())));
            local.stopCleanly(images);
            close();
            return images;
        }
    }

    @Override
    public synchronized void close() {
        stopping = true;
        loops.dispose();
        disconnect();
        running.dispose();
        rates.dispose();
        brokers.forEach(Broker::stopIngest);
        if (admin != null) {
            admin.stop();
        }
        if (processMetrics != null) {
            processMetrics.close();
        }
        topics.values().forEach(TopicStorage::close);
        local.close();
        pulsar.ifPresent(PulsarConnections::close);
        group.ifPresent(ControllerGroup::close);
        link.ifPresent(ControllerLink::close);
        registry.close();
    }
}
