package io.verbatim.runtime;

import io.micrometer.core.instrument.Tags;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.verbatim.config.Addresses;
import io.verbatim.config.BrokerMember;
import io.verbatim.config.ClusterConfig;
import io.verbatim.config.ClusterUrls;
import io.verbatim.config.TopicConfig;
import io.verbatim.config.VerbatimConfig;
import io.verbatim.embedded.ClusterImage;
import io.verbatim.embedded.MemorySegments;
import io.verbatim.exchange.Controller;
import io.verbatim.exchange.ExchangeMetricsBinder;
import io.verbatim.exchange.ExchangeServer;
import io.verbatim.exchange.Rebucket;
import io.verbatim.layoutstore.InMemoryLayoutStore;
import io.verbatim.layoutstore.LayoutStore;
import io.verbatim.metadatalog.server.MemberStatus;
import io.verbatim.metadatalog.state.SegmentKey;
import io.verbatim.model.Compression;
import io.verbatim.model.Layout;
import io.verbatim.model.Outcome;
import io.verbatim.model.ReplicatedMerge;
import io.verbatim.net.NetClient;
import io.verbatim.net.NetMetricsBinder;
import io.verbatim.net.NetServer;
import io.verbatim.net.Tls;
import io.verbatim.pipeline.ReplicatorMetrics;
import io.verbatim.pipeline.ReplicatorStatus;
import io.verbatim.runtime.broker.Brokers;
import io.verbatim.runtime.broker.Ports;
import io.verbatim.runtime.broker.Producer;
import io.verbatim.runtime.broker.SegmentOwnership;
import io.verbatim.runtime.broker.Subscription;
import io.verbatim.runtime.controller.AdminOperations;
import io.verbatim.runtime.controller.ControllerLink;
import io.verbatim.runtime.controller.ControllerOperations;
import io.verbatim.runtime.controller.Delegations;
import io.verbatim.runtime.controller.GarbageCollector;
import io.verbatim.runtime.controller.LeasedOwnership;
import io.verbatim.runtime.controller.LocalMetadataLog;
import io.verbatim.runtime.controller.OwnershipMetrics;
import io.verbatim.runtime.controller.PeerPushes;
import io.verbatim.runtime.controller.PolicyLoop;
import io.verbatim.runtime.status.NodeStatus;
import io.verbatim.runtime.storage.ClusterStorage;
import io.verbatim.runtime.storage.LocalStorage;
import io.verbatim.runtime.storage.TopicStorage;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
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
 * One cluster of the embedded runtime, wiring its rooms: the controller (its layout store, the exchange endpoint and
 * pushes, the admin operations, the policy loop and garbage collection: {@code runtime.controller}), the brokers (each
 * with an ingest endpoint and its own slow-path budget, running the replicators of the segments it owns toward every
 * peer; the producer and the subscriptions: {@link Brokers}), the topics' storage ({@link ClusterStorage}), the status
 * JSON and page and the Prometheus scrape.
 *
 * <p>Layouts flow one way: the controller commits to the layout store (its own changes, and what the
 * exchange folds in), the brokers watch the store and adopt each new layout (new segments and their
 * replication cursors first, then seals, then publication). The watch is the only path that adopts: a commit of
 * the controller's is answered once this node's storage took it from the watch ({@link ClusterStorage#adopted}),
 * so an admin split reads its own write here. The store is the seam the Raft-backed metadata log replaces.
 */
public final class ClusterNode implements AutoCloseable {
    private static final Logger LOG = Loggers.getLogger(ClusterNode.class);
    /** Sealed segments garbage collection deleted, per topic. */
    public static final String PRUNED = GarbageCollector.PRUNED;

    /** How long the brokers' process waits for a topic's first layout from the metadata log. */
    private static final Duration FIRST_LAYOUT_WAIT = Duration.ofSeconds(60);
    /** How often the brokers' process reports to its controller leader at least. */
    private static final Duration REPORT_INTERVAL = Duration.ofSeconds(1);

    private final VerbatimConfig config;
    private final ClusterConfig self;
    /** The broker process this node runs: its ports, its member id. */
    private final BrokerMember process;
    private final Scheduler timer;
    private final Scheduler cpu;
    private final LayoutStore store;
    /** The metadata log the store is on, when this node runs one. */
    private final Optional<LocalMetadataLog> group;
    /** The brokers' side of a metadata log whose controller replicas run as processes of their own. */
    private final Optional<ControllerLink> link;
    private final PeerPushes pushes;
    private final Controller controller;
    private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    private final ClusterStorage storage;
    private final Brokers brokers;
    private final Disposable.Composite running = Disposables.composite();
    /** The loops that change layouts on their own (garbage collection, the local policy): stopped first. */
    private final Disposable.Composite loops = Disposables.composite();
    private volatile boolean stopping;
    private final RateWindow rates;
    private final PolicyLoop policy;
    private final AdminOperations operations;
    /** Who may call this cluster's ports, their limits and TLS. */
    private final NetServer net;
    /** How this cluster calls its peers: signed with its own key, over its TLS. */
    private final NetClient client;
    private @Nullable ExchangeServer admin;
    private @Nullable ProcessMetrics processMetrics;

    /** A cluster whose layouts live in its metadata log, in memory. */
    public ClusterNode(VerbatimConfig config, String name, Scheduler timer, Scheduler cpu) {
        this(config, name, Optional.empty(), timer, cpu);
    }

    /**
     * A cluster whose layouts live in its metadata log: three controller replicas and a listener per
     * broker, in this process (see {@link LocalMetadataLog}).
     *
     * @param dataDir where the metadata log keeps its members' logs and snapshots; empty: in memory
     */
    public ClusterNode(VerbatimConfig config, String name, Optional<Path> dataDir, Scheduler timer, Scheduler cpu) {
        this(config, name, LocalMetadataLog.start(config.cluster(name), config.metadataLog(), dataDir, timer), timer, cpu);
    }

    private ClusterNode(VerbatimConfig config, String name, LocalMetadataLog group, Scheduler timer, Scheduler cpu) {
        this(config, name, group.store(), Optional.of(group), Optional.empty(), timer, cpu);
    }

    private ClusterNode(VerbatimConfig config, String name, ControllerLink link, Scheduler timer, Scheduler cpu) {
        this(config, name, link.store(), Optional.empty(), Optional.of(link), timer, cpu);
    }

    /**
     * Broker member {@code member} of a cluster whose controller replicas run as processes of their own (the
     * configuration names them: {@code clusters[].controllers}): one of its {@code brokerMembers}, or its one
     * brokers process {@value io.verbatim.config.ControllerReplica#BROKERS}. This process is that member's
     * listener of the metadata log (on the member's raft port, proving itself with the member's secret) and
     * watches layouts from its replica; its admin and ingest ports are the member's; it reports to the controller
     * leader as the member. The leader creates the topics, runs the exchange, the admin operations, the policy
     * and garbage collection on what the broker processes report (see {@link ControllerLink}). Exchange and admin
     * calls to this process's admin port are redirected to the leader.
     *
     * @param dataDir where the listener keeps its log and snapshots; empty: in memory
     * @throws IllegalArgumentException when the cluster names no controllers or has no such broker member
     */
    public static ClusterNode brokersOf(VerbatimConfig config, String name, String member, Optional<Path> dataDir,
            Scheduler timer, Scheduler cpu) {
        if (!config.cluster(name).separateControllers()) {
            throw new IllegalArgumentException("cluster " + name + " names no controllers: its controller replicas run "
                    + "in the brokers' process");
        }
        ControllerLink link = new ControllerLink(config, name, member, dataDir);
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

    private ClusterNode(VerbatimConfig config, String name, LayoutStore store, Optional<LocalMetadataLog> group,
            Optional<ControllerLink> link, Scheduler timer, Scheduler cpu) {
        this.store = store;
        this.group = group;
        this.link = link;
        this.config = config;
        this.self = config.cluster(name);
        // the one brokers process, unless this is a broker member's process of its own
        this.process = link.map(l -> self.brokerMember(l.memberId()).orElseThrow())
                .orElseGet(() -> self.brokerMembers().get(0));
        this.timer = timer;
        this.cpu = cpu;
        List<String> peers = peers();
        ClusterStorage topics = new ClusterStorage(config, name, process.id(), peers, timer);
        this.storage = topics;
        // a commit of the controller's is answered once the watch below brought it to this node's storage: waited for
        // half as long as a peer waits for an exchange call, so that a lagging watch makes the answer late, not lost
        Duration patience = config.exchange().requestTimeout().dividedBy(2);
        this.controller = new Controller(name, Set.copyOf(peers), self.caps(), store,
                (topic, epoch) -> topics.adopted(topic, epoch, patience), timer);
        this.rates = new RateWindow(timer);
        Optional<Tls> tls = config.security().tls(name);
        this.net = new NetServer(config.security().authenticator(name), config.network(), tls.map(Tls::serverContext),
                timer);
        this.client = NetClient.of(name, config.security().signingKey(name), config.network(),
                tls.map(Tls::clientContext), timer);
        registry.config().commonTags("cluster", name);
        this.pushes = new PeerPushes(name, controller, config.exchange(), timer, () -> stopping);
        this.brokers = new Brokers(config, name, process, storage, net, client, registry, timer, cpu, () -> stopping,
                link.isPresent());
        this.policy = new PolicyLoop(name, config.autoScale(), controller, this::layout, brokers::loadOrNull,
                brokers::consumers, registry, timer);
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
            Layout start = storage.recoveredLayout(t.name()).orElse(initial);
            Layout held = Objects.requireNonNull(link.isPresent()
                    ? link.get().first(t.name(), FIRST_LAYOUT_WAIT).block()
                    : store.get(t.name()).switchIfEmpty(Mono.defer(() -> store.create(t.name(), start))).block());
            TopicStorage opened = storage.open(t.name(), held, key());
            brokers.track(t.name());
            // each layout handed over as it comes (adopt takes them in this order, and skips one a newer one
            // makes moot); the watch outlives a layout that cannot be taken
            running.add(store.watch(t.name()).flatMap(opened::adopt).subscribe(taken -> { },
                    e -> LOG.error("{}: the layout watch of {} stopped: {}", name(), t.name(), e.toString())));
            registry.gauge("verbatim.topic.active.segments", Tags.of("topic", t.name()), opened,
                    s -> s.layout().activeSegments().size());
            opened.memory().ifPresent(m -> m.pinnedSegmentsMetric(config.replication().messageTtl().toMillis())
                    .bindTo(registry));
        }
        storage.configuredTopicsOpened();
        controller.becomeLeader();
        brokers.start(processKey(), peers());
        Addresses addresses = process.addresses();
        ExchangeServer exchange = link.isPresent()
                ? new ExchangeServer(controller, config.exchange(), this::backlog, net, link.get()::leader)
                : new ExchangeServer(controller, config.exchange(), net, this::backlog);
        admin = Ports.bind(processKey() + ".adminPort", addresses.bindAddress(), addresses.adminPort(),
                () -> exchange.start(addresses.bindAddress(), addresses.adminPort(), this::adminRoutes));
        new ExchangeMetricsBinder(controller).bindTo(registry);
        pushes.bindTo(registry);
        new NetMetricsBinder(net).bindTo(registry);
        storage.bindTo(registry);
        link.ifPresent(l -> l.bindTo(registry));
        group.ifPresent(g -> g.bindTo(registry));
        return this;
    }

    /** This cluster's key in the configuration file, for errors that name it. */
    private String key() {
        return "clusters[" + config.clusters().indexOf(self) + "]";
    }

    /** Where this process's ports are named: its broker member's entry, or the cluster's own keys. */
    private String processKey() {
        return self.namesBrokerMembers() ? key() + ".brokerMembers[" + self.brokerMembers().indexOf(process) + "]"
                : key();
    }

    /** The broker process this node runs: its member id and ports. */
    public BrokerMember process() {
        return process;
    }

    /**
     * The state to start from instead of the configured initial layouts: topic images (by topic), each brought to
     * the metadata log's layout as it starts. Before {@link #start()}.
     */
    public synchronized ClusterNode restore(Map<String, ClusterImage> images) {
        storage.offer(images);
        return this;
    }

    /**
     * Keeps the topics' segments in {@code storage} (a data directory's, with what it recovered), in place of
     * memory only. Before {@link #start()}.
     */
    synchronized ClusterNode storage(LocalStorage kept) {
        storage.keepIn(kept);
        return this;
    }

    /** Connects to the peers: pushes layouts to their controllers and replicates into their brokers. */
    public synchronized ClusterNode connect(Map<String, ClusterUrls> peers) {
        pushes.connect(peers, client, config.rtt(), link.isEmpty());
        // off the metadata log's threads: a failover takes a lock that close() may hold while it waits for those
        // threads to stop (a leader change during a close deadlocked it for the stop's timeout)
        group.ifPresent(g -> running.add(g.leaders().skip(1).publishOn(Schedulers.boundedElastic())
                .subscribe(pushes::failover)));
        link.ifPresent(l -> brokers.ownedBy(l.ownership(timer)));
        if (brokers.ownership() instanceof LeasedOwnership leased) {
            OwnershipMetrics.bindMember(leased, registry);
        }
        brokers.replicateTo(peers, peers(), link.map(ControllerLink::gate).orElseGet(() -> PeerPushes.gate(controller)));
        rates.start(brokers::replicatedTotals);
        if (link.isPresent()) {
            // the controller leader decides on these brokers' reports
            Duration every = config.autoScale().enabled() && config.autoScale().interval().compareTo(REPORT_INTERVAL) < 0
                    ? config.autoScale().interval() : REPORT_INTERVAL;
            if (self.namesBrokerMembers() && config.ownership().interval().compareTo(every) < 0) {
                every = config.ownership().interval(); // each report renews the member's lease
            }
            link.get().start(every, brokers::report, brokers::untaken, timer);
            return this;
        }
        if (config.storage().pruneSealed()) {
            loops.add(new GarbageCollector(name(), controller, storage::prunable, registry)
                    .start(topics(), config.storage().gcInterval(), timer));
        }
        if (config.autoScale().enabled()) {
            loops.add(policy.start(topics()));
        }
        return this;
    }

    public ClusterUrls address() {
        return new ClusterUrls(adminUrl(), brokerUrls());
    }

    /** The controller's admin URL as peers reach it (the advertised address). */
    public String adminUrl() {
        return process.addresses().advertisedUrl(net.scheme(), adminServer().port());
    }

    /** The port the controller's admin endpoint is bound to. */
    public int adminPort() {
        return adminServer().port();
    }

    private ExchangeServer adminServer() {
        return Objects.requireNonNull(admin, "not started");
    }

    /** Every broker's ingest URL as peers reach it (the advertised address), in broker order. */
    public List<String> brokerUrls() {
        return brokers.urls();
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
    public MemorySegments storage(String topic) {
        return storage.memory(topic);
    }

    /** Where this cluster keeps {@code topic}'s segments: in memory or on its Pulsar. */
    public TopicStorage topicStorage(String topic) {
        return storage.of(topic);
    }

    public List<String> topics() {
        return storage.topics();
    }

    public Layout layout(String topic) {
        return topicStorage(topic).layout();
    }

    public Producer producer(String topic, Compression codec) {
        return brokers.producer(topic, codec);
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
        return brokers.subscription(topic, subscription);
    }

    public Mono<Outcome> split(String topic, long segmentId) {
        return operations.split(topic, segmentId);
    }

    /**
     * A rebucket rollover of an active segment to a higher count, the cluster's own change; a lower count is refused
     * ({@code LOWERS_BUCKETS}) with nothing marked: lowering a replicated topic's count is {@link #rebucketOrMarkCold}.
     */
    public Mono<Outcome> rebucket(String topic, long segmentId, int bucketCount) {
        return operations.rollover(topic, segmentId, bucketCount);
    }

    /**
     * A manual rebucket, as the admin endpoint's: a higher count applies now ({@link Rebucket.Now}), a lower count of
     * an active segment is a cold mark on its range, lowered once every cluster issued it ({@link Rebucket.MarkedCold}).
     */
    public Mono<Rebucket> rebucketOrMarkCold(String topic, long segmentId, int bucketCount) {
        return operations.rebucket(topic, segmentId, bucketCount);
    }

    /** A manual merge of a replicated topic is a cold mark: merged once every peer agrees (PIP-495). */
    public Mono<Void> markCold(String topic, int boundary) {
        return operations.markCold(topic, boundary);
    }

    /** A manual merge of two segments, a cold mark on their boundary when they may merge ({@link ReplicatedMerge}). */
    public Mono<ReplicatedMerge> merge(String topic, long first, long second) {
        return operations.merge(topic, first, second);
    }

    /** Withdraws an operator's cold mark on {@code boundary}; true if there was one. */
    public boolean unmarkCold(String topic, int boundary) {
        return operations.unmarkCold(topic, boundary);
    }

    /** What the local policy decided so far, oldest first. */
    public List<String> policyDecisions() {
        return policy.decisions();
    }

    /** Replication counters toward {@code remote} for {@code topic}, summed over every broker. */
    public ReplicatorMetrics replication(String topic, String remote) {
        return brokers.replication(topic, remote);
    }

    /** True when every replication cursor of every topic toward every peer has nothing left. */
    public boolean caughtUp() {
        return brokers.caughtUp();
    }

    /** Every replicator of every topic toward every peer, as its link supervises it. */
    /** What this process acts on of the cluster's segments (every segment unless it is one of many broker members). */
    public SegmentOwnership ownership() {
        return brokers.ownership();
    }

    public List<ReplicatorStatus> replicators() {
        return brokers.replicators();
    }

    /** Replication backlog per segment of {@code topic} toward {@code remote} (the status of E11). */
    public Map<String, Long> backlog(String topic, String remote) {
        return storage.backlog(topic, remote);
    }

    /**
     * The status of E11 (per topic and remote: converged and diverged ranges, lags, backlog, cap
     * mismatches, cold marks, recent changes; per peer the exchange's verdict) and of the replicators:
     * how many, their restarts, each one failing now with its last error, and each one stalled (backlog, and
     * nothing acknowledged for {@code replication.stallAfter}) with for how long.
     */
    public Mono<NodeStatus> status() {
        return controller.status(this::backlog).map(s -> new NodeStatus(s, NodeStatus.Replicators.of(replicators()),
                NodeStatus.MetadataLogMember.members(metadataLog()),
                group.flatMap(LocalMetadataLog::leading).map(Delegations::feeds).orElse(List.of()), storageStatus(),
                ownershipStatus()));
    }

    private NodeStatus.Ownership ownershipStatus() {
        if (!(brokers.ownership() instanceof LeasedOwnership leased)) {
            return NodeStatus.Ownership.NONE;
        }
        return NodeStatus.Ownership.of(leased.member(), leased.leaseRemaining().toMillis(),
                leased.acting().stream().map(SegmentKey::toString).toList(), leased.table(), Optional.empty());
    }

    private NodeStatus.Storage storageStatus() {
        if (storage.pulsar().isPresent()) {
            return new NodeStatus.Storage("pulsar", true, "");
        }
        LocalStorage local = storage.local();
        return new NodeStatus.Storage(local.durable() ? "embedded" : "memory", local.durable(),
                local.failure().orElse(""));
    }

    /**
     * Kills the controller replica that leads the metadata log, as a crash would (what it synced stays on
     * disk); the other two elect a new leader, which takes over as controller (see {@link PeerPushes#failover}).
     *
     * @return the member killed
     * @throws IllegalStateException when this node runs no metadata log or its group has no leader now
     */
    public String killControllerLeader() {
        return AdminEndpoints.killLeader(name(), metadataGroup());
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

    private LocalMetadataLog metadataGroup() {
        return group.orElseThrow(() -> new IllegalStateException(name()
                + " runs on a layout store of its caller's, not on a metadata log"));
    }

    /** How many times another controller replica took over as leader since the start. */
    public long controllerFailovers() {
        return pushes.failovers();
    }

    /** The metadata log's members as this process runs them (empty without a metadata log). */
    public List<MemberStatus> metadataLog() {
        return link.map(l -> List.of(l.member())).orElseGet(() -> group.map(LocalMetadataLog::members).orElse(List.of()));
    }

    /** Stops every broker's ingest endpoint: connections into this cluster drop, new ones are refused. */
    public synchronized void stopIngest() {
        brokers.stopIngest();
    }

    /** Restarts the ingest endpoints on their ports. */
    public synchronized void restartIngest() {
        brokers.restartIngest();
    }

    private void adminRoutes(HttpServerRoutes routes) {
        AdminEndpoints.register(routes, this, operations, net, link, group, storage.pulsar().isPresent(),
                config.exchange().maxBodyBytes(), rates, timer);
    }

    /**
     * Stops talking to the other clusters (the exchange's pushes, the replication links, the layout
     * streams) while this cluster's endpoints still answer. A runtime of several clusters disconnects
     * them all before it closes any, so no client is left cancelling a connection its server already
     * closed.
     */
    synchronized void disconnect() {
        pushes.stop();
        brokers.disconnect();
    }

    /** Where a clean stop writes the topics' state (a data directory's checkpoint), if it keeps them at all. */
    public Optional<Path> stateFile() {
        return storage.stateFile();
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
        // a broker member of many hands its segments over first: their new owners go on from the cursors
        link.ifPresent(l -> l.drain(config.ownership().drainTimeout(), timer).block());
        boolean drained = caughtUp() || Flux.interval(Duration.ofMillis(20), timer).filter(t -> caughtUp()).next()
                .timeout(drainTimeout, timer).map(t -> true).onErrorReturn(false).blockOptional().orElse(false);
        if (!drained) {
            LOG.warn("{}: stopping with replication backlog after {} (peers down or slow): it is sent from the "
                    + "cursors after the restart", name(), drainTimeout);
        }
        synchronized (this) {
            disconnect();
            brokers.stopIngest();
            Map<String, ClusterImage> images = storage.stopCleanly();
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
        brokers.close();
        rates.dispose();
        brokers.stopIngest();
        if (admin != null) {
            admin.stop();
        }
        if (processMetrics != null) {
            processMetrics.close();
        }
        storage.close();
        group.ifPresent(LocalMetadataLog::close);
        link.ifPresent(ControllerLink::close);
        registry.close();
    }
}
