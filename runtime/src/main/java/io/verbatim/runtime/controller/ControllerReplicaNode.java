package io.verbatim.runtime.controller;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.verbatim.config.BrokerMember;
import io.verbatim.config.ClusterConfig;
import io.verbatim.config.ClusterUrls;
import io.verbatim.config.ControllerReplica;
import io.verbatim.config.OwnershipConfig;
import io.verbatim.config.StorageConfig;
import io.verbatim.config.TopicConfig;
import io.verbatim.config.VerbatimConfig;
import io.verbatim.exchange.Controller;
import io.verbatim.exchange.ControllerLeader;
import io.verbatim.exchange.ExchangeMetricsBinder;
import io.verbatim.exchange.ExchangeServer;
import io.verbatim.exchange.ExchangeTransport;
import io.verbatim.exchange.HttpTransport;
import io.verbatim.exchange.Pusher;
import io.verbatim.layoutstore.LayoutStore;
import io.verbatim.metadatalog.identity.MemberKeys;
import io.verbatim.metadatalog.identity.SignedCall;
import io.verbatim.metadatalog.server.MemberStatus;
import io.verbatim.metadatalog.server.RaftServer;
import io.verbatim.metadatalog.state.LayoutRegister;
import io.verbatim.metadatalog.state.LeaderLayoutStore;
import io.verbatim.metadatalog.state.OwnershipCommand;
import io.verbatim.metadatalog.state.OwnershipLog;
import io.verbatim.metadatalog.state.OwnershipTable;
import io.verbatim.metadatalog.state.RaftLayoutStore;
import io.verbatim.metadatalog.state.RegisteredMember;
import io.verbatim.metadatalog.state.SegmentKey;
import io.verbatim.model.Layout;
import io.verbatim.net.Bodies;
import io.verbatim.net.NetClient;
import io.verbatim.net.NetMetricsBinder;
import io.verbatim.net.NetServer;
import io.verbatim.net.Role;
import io.verbatim.net.Tls;
import io.verbatim.net.VerifyingKey;
import io.verbatim.runtime.broker.BrokerReport;
import io.verbatim.runtime.broker.LoadTracker;
import io.verbatim.runtime.status.NodeStatus;
import io.verbatim.runtime.status.StatusJson;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.jspecify.annotations.Nullable;
import reactor.core.Disposable;
import reactor.core.Disposables;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import reactor.netty.http.server.HttpServerRequest;
import reactor.netty.http.server.HttpServerResponse;
import reactor.netty.http.server.HttpServerRoutes;
import reactor.util.Logger;
import reactor.util.Loggers;
import reactor.util.retry.Retry;

/**
 * One of a cluster's controller replicas as a process of its own ({@code verbatim node --member c1}): a
 * voter of the cluster's metadata log over TCP, and the cluster's controller while it leads the log. The
 * leader creates the configured topics it does not hold yet, runs the exchange (answers peers, pushes to
 * them, anti-entropy), the admin operations, the local policy and garbage collection — the last two on
 * what the broker processes report ({@link BrokerReport}, each broker member's taken alike); a replica that
 * does not lead redirects the exchange, admin calls and reports to the leader (307), and answers 503 while no
 * leader is known. On taking over, the new leader knows nothing of its peers: it pushes its state to every
 * peer at once and defers its own changes until it holds every peer's state (R-E5).
 */
public final class ControllerReplicaNode implements AutoCloseable {
    private static final Logger LOG = Loggers.getLogger(ControllerReplicaNode.class);
    private static final ObjectMapper JSON = new ObjectMapper();

    private final VerbatimConfig config;
    private final ClusterConfig self;
    private final ControllerReplica replica;
    private final Scheduler timer;
    private final Scheduler raftThread;
    private final RaftServer server;
    private final NetworkedMember.Started member;
    private final LayoutRegister register = new LayoutRegister();
    /** The layouts through this replica's member of the log: linearizable reads, writes to its log. */
    private final RaftLayoutStore layouts;
    private final Controller controller;
    private final NetServer net;
    private final NetClient client;
    private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    private final Map<String, LoadTracker> load = new ConcurrentHashMap<>();
    private final Map<String, BrokerReport.Topic> reported = new ConcurrentHashMap<>();
    private final Map<String, List<Long>> prunable = new ConcurrentHashMap<>();
    private final AtomicLong takeovers = new AtomicLong();
    /** The brokers' reports remembered against replay within {@link SignedCall#WINDOW}: about one a second. */
    private static final int MAX_REPORTS_REMEMBERED = 10_000;
    /** A report older than this holds the policy back: the brokers report every second at least. */
    static final Duration STALE_REPORTS = Duration.ofSeconds(5);
    private volatile long lastReportMs = -1;
    /** When each broker member last reported, on this replica's clock: with many members, every one must report. */
    private final Map<String, Long> lastReportOf = new ConcurrentHashMap<>();
    /** While this replica leads a cluster of named broker members: the segments' ownership. */
    private volatile @Nullable OwnershipLoop ownership;
    /** Replicated bytes per segment per second, from the members' reports: what ownership balances. */
    private final SegmentRates rates = new SegmentRates();
    private final AtomicLong ownershipMoves = new AtomicLong();
    private final AtomicLong ownershipExpiries = new AtomicLong();
    private final Disposable.Composite running = Disposables.composite();
    private final PolicyLoop policy;
    /** Checks the broker members' signed reports. */
    private final SignedCall.Verifier reports;
    private final RegisteredMembers members;
    private @Nullable ExchangeServer admin;
    /** While this replica leads: the pushes, the policy, garbage collection. */
    private @Nullable Disposable leading;
    private @Nullable ExchangeTransport transport;
    private volatile long leadingTerm = -1;
    private boolean closed;

    private ControllerReplicaNode(VerbatimConfig config, String cluster, ControllerReplica replica, Path dataDir,
            Scheduler timer) {
        this.config = config;
        this.self = config.cluster(cluster);
        this.replica = replica;
        this.timer = timer;
        Optional<Tls> tls = config.security().tls(cluster);
        this.net = new NetServer(config.security().authenticator(cluster), config.network(), tls.map(Tls::serverContext),
                timer);
        this.client = NetClient.of(cluster, config.security().signingKey(cluster), config.network(),
                tls.map(Tls::clientContext), timer);
        registry.config().commonTags("cluster", cluster, "member", replica.id());
        this.raftThread = NetworkedMember.thread(cluster, replica.id());
        NetworkedMember.Started member;
        try {
            member = NetworkedMember.start(config, self, replica.id(), Optional.of(dataDir), register, raftThread);
        } catch (RuntimeException e) {
            raftThread.dispose();
            throw e;
        }
        this.server = member.server();
        this.member = member;
        this.members = new RegisteredMembers(self, net.scheme(), NetworkedMember.keys(config, self, replica.id()),
                member.transport().peers(), reporters(config, self, replica.id()));
        this.reports = new SignedCall.Verifier(cluster, replica.id(), members::reporters, SignedCall.WINDOW,
                MAX_REPORTS_REMEMBERED);
        // the members added at run time, known to the transport and as reporters once their registration is applied
        running.add(register.watchOwnership().subscribe(t -> members.applied(t, member.transport()),
                e -> LOG.error("{}/{}: no longer following the broker members added at run time: {}", cluster,
                        replica.id(), e.toString())));
        running.add(member.bindTo(registry));
        // the metadata log through this replica: linearizable reads while it leads, its own state otherwise
        this.layouts = new RaftLayoutStore(server, register);
        LayoutStore store = LeaderLayoutStore.ofMember(replica.id(), layouts,
                () -> server.memberStatus().leads());
        this.controller = new Controller(cluster, Set.copyOf(peers()), self.caps(), store, timer);
        this.policy = new PolicyLoop(cluster, config.autoScale(), controller, this::layout, this::loadOf,
                topic -> reported.containsKey(topic) ? reported.get(topic).consumers() : 0, registry, timer)
                .holdWhile(this::reportsStale);
    }

    /**
     * Who may report to replica {@code self}: every broker member of {@code cluster}, by its verifying key. Their
     * reports are taken alike (the last one wins), as the one brokers process's were.
     */
    static Map<String, VerifyingKey> reporters(VerbatimConfig config, ClusterConfig cluster, String self) {
        MemberKeys keys = NetworkedMember.keys(config, cluster, self);
        Map<String, VerifyingKey> out = new LinkedHashMap<>();
        for (BrokerMember m : cluster.brokerMembers()) {
            out.put(m.id(), keys.keyOf(m.id()).orElseThrow());
        }
        return out;
    }

    /**
     * Starts controller replica {@code member} of {@code cluster}: its metadata log member, and its admin port.
     *
     * @param dataDir where its metadata log keeps its log, its term and vote, and snapshots: a voter must keep
     *        them across a restart (one that forgot its vote could vote twice in a term, one that forgot
     *        entries it acknowledged could help elect a leader without a committed layout)
     * @throws IllegalArgumentException when the cluster names no such controller replica
     */
    public static ControllerReplicaNode start(VerbatimConfig config, String cluster, String member, Path dataDir,
            Scheduler timer) {
        ClusterConfig self = config.cluster(cluster);
        ControllerReplica replica = self.controller(member).orElseThrow(() -> new IllegalArgumentException("cluster "
                + cluster + " has no controller replica '" + member + "' (it has "
                + self.controllers().stream().map(ControllerReplica::id).toList() + ")"));
        ControllerReplicaNode node = new ControllerReplicaNode(config, cluster, replica, dataDir, timer);
        try {
            return node.listen();
        } catch (RuntimeException e) {
            node.close();
            throw e;
        }
    }

    private ControllerReplicaNode listen() {
        ExchangeServer exchange = new ExchangeServer(controller, config.exchange(), Controller.BacklogSource.NONE, net,
                this::leader);
        String key = "clusters[" + config.clusters().indexOf(self) + "].controllers["
                + self.controllers().indexOf(replica) + "].adminPort";
        try {
            admin = exchange.start(replica.bindAddress(), replica.adminPort(), this::routes);
        } catch (RuntimeException e) {
            Throwable cause = e.getCause() != null ? e.getCause() : e;
            throw new IllegalStateException(key + ": cannot listen on " + replica.bindAddress() + ":" + replica.adminPort()
                    + " (" + cause.getMessage() + "; is the port in use?)", e);
        }
        new ExchangeMetricsBinder(controller).bindTo(registry);
        new NetMetricsBinder(net).bindTo(registry);
        if (self.namesBrokerMembers()) {
            OwnershipMetrics.bindReplica(register::ownership, self.brokerMembers().stream().map(BrokerMember::id).toList(),
                    ownershipMoves, ownershipExpiries, registry);
        }
        FunctionCounter.builder("verbatim.controller.failovers", takeovers, AtomicLong::get)
                .description("times this replica took over as the controller leader").register(registry);
        Gauge.builder("verbatim.controller.leading", this,
                n -> n.leader() instanceof ControllerLeader.Here ? 1 : 0)
                .description("1 while this replica is its cluster's controller leader").register(registry);
        Map<String, List<String>> peerUrls = new LinkedHashMap<>();
        for (String peer : peers()) {
            peerUrls.put(peer, ClusterUrls.of(config, peer).exchangeUrls());
        }
        transport = HttpTransport.toReplicas(peerUrls, client);
        // Leadership as the member reports it, handled off its thread (taking over reads and writes the log).
        running.add(server.memberStatuses().map(s -> s.leads() ? s.term() : -1L).distinctUntilChanged()
                .publishOn(Schedulers.boundedElastic()).subscribe(this::leadership,
                        e -> LOG.error("{}/{}: no longer following the metadata log's leadership: {}", self.name(),
                                replica.id(), e.toString())));
        return this;
    }

    private List<String> peers() {
        return config.clusters().stream().map(ClusterConfig::name).filter(n -> !n.equals(self.name())).toList();
    }

    /** Where the controller leader is, as this replica's member knows it. */
    public ControllerLeader leader() {
        MemberStatus s = server.memberStatus();
        if (s.leads()) {
            return leadingTerm == s.term() ? ControllerLeader.HERE
                    : ControllerLeader.unknown(replica.id() + " is taking over");
        }
        return leaderUrl(config, self, s.leader()).map(ControllerLeader::at)
                .orElseGet(() -> ControllerLeader.unknown("no leader elected in term " + s.term()));
    }

    /** The admin URL of {@code cluster}'s controller replica {@code member}, if it is one. */
    static Optional<String> leaderUrl(VerbatimConfig config, ClusterConfig cluster, String member) {
        String scheme = config.security().tls(cluster.name()).isPresent() ? "https" : "http";
        return cluster.controller(member).map(c -> c.adminUrl(scheme));
    }

    /** {@code term} ≥ 0: this replica leads in it; −1: it does not lead. */
    private synchronized void leadership(long term) {
        if (closed) {
            return;
        }
        if (leading != null) {
            leading.dispose();
            leading = null;
            leadingTerm = -1;
            LOG.info("{}/{}: no longer the controller leader", self.name(), replica.id());
        }
        if (term < 0) {
            return;
        }
        LOG.info("{}/{}: leads the metadata log in term {}: taking over as controller (pushing to every peer, own "
                + "changes deferred until every peer's state is held)", self.name(), replica.id(), term);
        Disposable.Composite mine = Disposables.composite();
        leading = mine;
        // Until the topics are there: a read or a commit that times out on a loaded machine is tried again, as long
        // as this replica leads in this term.
        mine.add(createTopics().doOnError(e -> LOG.warn("{}/{}: taking over in term {}: {}; trying again",
                        self.name(), replica.id(), term, e.toString()))
                .retryWhen(Retry.backoff(Long.MAX_VALUE, Duration.ofMillis(100))
                        .maxBackoff(Duration.ofSeconds(2)))
                .then(Mono.fromRunnable(() -> takeOver(term, mine)))
                .subscribe(v -> { }, e -> LOG.warn("{}/{}: taking over in term {} failed: {}", self.name(), replica.id(),
                        term, e.toString())));
    }

    /** The configured topics the log does not hold yet, created with their initial layouts (the same everywhere). */
    private Mono<Void> createTopics() {
        return Flux.fromIterable(config.topics()).concatMap(t -> layouts.get(t.name())
                .switchIfEmpty(Mono.defer(() -> layouts.create(t.name(), initial(t))))).then();
    }

    private static Layout initial(TopicConfig t) {
        return Layout.initial(t.initialSegments(), t.bucketBudget(), 0);
    }

    private synchronized void takeOver(long term, Disposable.Composite mine) {
        if (mine.isDisposed() || closed) {
            return;
        }
        takeovers.incrementAndGet();
        // Nothing of an earlier term of its own: the brokers' reports start again, its own marks are dropped and
        // its marks versions raised above any earlier leader's.
        load.clear();
        reported.clear();
        prunable.clear();
        lastReportMs = -1;
        lastReportOf.clear();
        rates.clear();
        controller.becomeLeaderAfresh();
        if (self.namesBrokerMembers()) {
            OwnershipLoop loop = new OwnershipLoop(self.name(), new OwnershipLog(server, register,
                    Schedulers.boundedElastic()), config.ownership().lease(), planning(config.ownership()),
                    this::appliedLayouts, () -> rates.perSecond(timer.now(TimeUnit.MILLISECONDS)), timer)
                    .counting(ownershipMoves, ownershipExpiries).start(self.brokerMembers().stream().map(BrokerMember::id).toList(), config.ownership().interval());
            ownership = loop;
            mine.add(() -> {
                loop.dispose();
                if (ownership == loop) {
                    ownership = null;
                }
            });
        }
        Pusher pusher = new Pusher(controller, Objects.requireNonNull(transport), config.exchange(), timer).start();
        mine.add(pusher::dispose);
        List<String> topics = config.topics().stream().map(TopicConfig::name).toList();
        if (config.storage().pruneSealed()) {
            mine.add(new GarbageCollector(self.name(), controller, this::prunable, registry)
                    .start(topics, config.storage().gcInterval(), timer));
        }
        if (config.autoScale().enabled()) {
            mine.add(policy.start(topics));
        }
        leadingTerm = term;
        LOG.info("{}/{}: the controller leader in term {}", self.name(), replica.id(), term);
    }

    static OwnershipPlanner.Settings planning(OwnershipConfig c) {
        return new OwnershipPlanner.Settings(c.maxMoves(), c.moveInterval(), c.minTenure(), c.imbalance());
    }

    /** Every configured topic's layout as this replica applied it. */
    private SortedMap<String, Layout> appliedLayouts() {
        SortedMap<String, Layout> out = new TreeMap<>();
        for (TopicConfig t : config.topics()) {
            register.get(t.name()).ifPresent(l -> out.put(t.name(), l));
        }
        return out;
    }

    private Layout layout(String topic) {
        return register.get(topic).orElseThrow(() -> new IllegalArgumentException("cluster " + self.name()
                + " has no topic '" + topic + "'"));
    }

    /**
     * Why the brokers' load is not current, if it is not: no report since this replica took over, or none for
     * {@link #STALE_REPORTS} (the brokers' process down or cut off, which is not a cold cluster).
     */
    private Optional<String> reportsStale() {
        OwnershipLoop loop = ownership;
        if (loop != null) {
            long now = timer.now(TimeUnit.MILLISECONDS);
            for (String m : register.ownership().activeMembers()) {
                if (!loop.live(m)) {
                    continue; // a member gone for a lease: its segments are someone else's, and so is their load
                }
                Long at = lastReportOf.get(m);
                if (at == null || now - at > STALE_REPORTS.toMillis()) {
                    return Optional.of("no report from broker member " + m + " of " + self.name()
                            + (at == null ? " since this replica took over" : " for " + (now - at) + " ms")
                            + " (its load is missing)");
                }
            }
        }
        long last = lastReportMs;
        long now = timer.now(TimeUnit.MILLISECONDS);
        if (last < 0) {
            return Optional.of("no report from " + self.name() + "'s brokers since this replica took over");
        }
        long ageMs = now - last;
        return ageMs > STALE_REPORTS.toMillis() ? Optional.of("the last report from " + self.name() + "'s brokers is "
                + ageMs + " ms old (they report every second)") : Optional.empty();
    }

    private LoadTracker loadOf(String topic) {
        return load.computeIfAbsent(topic, t -> new LoadTracker());
    }

    /** What the brokers last reported prunable, taken once: a later report says it again if it still is. */
    private List<Long> prunable(String topic) {
        List<Long> ids = prunable.remove(topic);
        return ids == null ? List.of() : ids;
    }

    // ---- endpoints ------------------------------------------------------------------------------------

    private void routes(HttpServerRoutes routes) {
        // carried out here while this replica leads (AdminApi redirects otherwise)
        new AdminApi(new ControllerOperations(self.name(), () -> config.topics().stream().map(TopicConfig::name).toList(),
                this::layout, controller, policy), net, this::leader).register(routes);
        new DelegationApi(delegation(), net, this::leader).register(routes);
        new MembersApi(brokerMembers(), net, this::leader).register(routes);
        routes.post(BrokerReport.PATH, this::report)
                .get(ExchangeServer.STATUS_PATH, net.guard(Role.STATUS, "the status endpoint",
                        (request, response) -> StatusJson.send(response, status())))
                .get("/metrics", net.guard(Role.STATUS, "the metrics", (request, response) -> response
                        .header(HttpHeaderNames.CONTENT_TYPE, "text/plain; version=0.0.4; charset=utf-8")
                        .sendString(Mono.fromCallable(registry::scrape), StandardCharsets.UTF_8)));
    }

    /**
     * A broker process's report: from this cluster's own broker members only, by the member's signature made for
     * this replica ({@link SignedCall}: no secret on the wire, good here, now, once); taken by the leader only, a
     * follower redirects it (the member signs it anew for the leader).
     */
    private Mono<Void> report(HttpServerRequest request, HttpServerResponse response) {
        String authorization = request.requestHeaders().get(HttpHeaderNames.AUTHORIZATION);
        SignedCall.Result.Refused early = reports.precheck(authorization, timer.now(TimeUnit.MILLISECONDS));
        if (early != null) {
            return text(response, early.status(), "the brokers' report of " + self.name() + ": " + early.why());
        }
        return Bodies.read(request, config.exchange().maxBodyBytes()).flatMap(body -> {
            SignedCall.Result checked = reports.check(authorization, "POST", BrokerReport.PATH, body,
                    timer.now(TimeUnit.MILLISECONDS));
            if (checked instanceof SignedCall.Result.Refused refused) {
                return text(response, refused.status(), "the brokers' report of " + self.name() + ": " + refused.why());
            }
            NetServer.authenticated(request); // its connection is one of the cluster's own: never evicted for room
            ControllerLeader where = leader();
            if (where instanceof ControllerLeader.At at) {
                return response.status(307).header(HttpHeaderNames.LOCATION, at.baseUrl() + BrokerReport.PATH).send();
            }
            if (where instanceof ControllerLeader.Unknown unknown) {
                return text(response, 503, "no controller leader now (" + unknown.why() + "); try again");
            }
            BrokerReport parsed;
            try {
                parsed = JSON.readValue(body, BrokerReport.class);
            } catch (IOException | RuntimeException e) {
                return text(response, 400, "body is not a brokers' report: " + e.getMessage());
            }
            String from = ((SignedCall.Result.Accepted) checked).member();
            OwnershipLoop loop = ownership;
            if (loop == null) {
                take(from, parsed);
                return answer(response, new BrokerReport.Answer(verdicts(), replica.id(), leadingTerm));
            }
            // A lease is granted only once a quorum confirmed this replica still leads, counted from when the report
            // was received: no later leader can have taken over before then (it expires nobody for a lease after).
            long received = loop.nowMs();
            return server.readBarrier().then(Mono.defer(() -> {
                take(from, parsed);
                boolean lease = loop.reported(from, received, releases(from, parsed), parsed.leaving());
                return answer(response, new BrokerReport.Answer(verdicts(), replica.id(), leadingTerm, lease,
                        loop.epoch()));
            })).onErrorResume(e -> !(e instanceof Bodies.TooLarge), e -> text(response, 503,
                    "cannot confirm the leadership to renew " + from + "'s lease (" + e.getMessage() + "); try again"));
        }).onErrorResume(Bodies.TooLarge.class, e -> Bodies.tooLarge(response, String.valueOf(e.getMessage())));
    }

    private static List<OwnershipCommand.Release> releases(String member, BrokerReport report) {
        return report.released().stream().map(r -> new OwnershipCommand.Release(new SegmentKey(r.topic(), r.segment()),
                r.epoch(), member)).toList();
    }

    private Map<String, Boolean> verdicts() {
        Map<String, Boolean> verdicts = new LinkedHashMap<>();
        for (String peer : peers()) {
            if (controller.isUnsupported(peer)) {
                verdicts.put(peer, false);
            } else if (controller.hasAnswered(peer)) {
                verdicts.put(peer, true);
            }
        }
        return verdicts;
    }

    private static Mono<Void> answer(HttpServerResponse response, BrokerReport.Answer answer) {
        try {
            return response.status(200).header(HttpHeaderNames.CONTENT_TYPE, "application/json")
                    .sendByteArray(Mono.just(JSON.writeValueAsBytes(answer))).then();
        } catch (IOException e) {
            return text(response, 500, e.toString());
        }
    }

    /**
     * Takes member {@code from}'s report: its load adds to the others' (each member counts what it produced); with
     * segments owned by members, only a segment's owner says whether it is prunable.
     */
    private void take(String from, BrokerReport report) {
        long now = timer.now(TimeUnit.MILLISECONDS);
        lastReportMs = now;
        lastReportOf.put(from, now);
        Set<String> known = Set.copyOf(config.topics().stream().map(TopicConfig::name).toList());
        boolean owned = ownership != null;
        OwnershipTable table = register.ownership();
        report.topics().forEach((topic, t) -> {
            if (known.contains(topic)) {
                loadOf(topic).add(t.load());
                t.load().forEach((segment, v) -> rates.add(new SegmentKey(topic, segment), v[1], now));
                reported.put(topic, t);
                List<Long> ids = owned ? t.prunable().stream().filter(id -> table.of(new SegmentKey(topic, id))
                        .map(o -> o.ownedBy(from)).orElse(false)).toList() : t.prunable();
                // the latest report says what is prunable now, nothing else: an empty list clears an earlier one
                if (ids.isEmpty()) {
                    if (!owned) {
                        prunable.remove(topic);
                    }
                } else {
                    prunable.put(topic, ids);
                }
            }
        });
    }

    private static Mono<Void> text(HttpServerResponse response, int status, String message) {
        return response.status(status).header(HttpHeaderNames.CONTENT_TYPE, "text/plain; charset=utf-8")
                .sendString(Mono.just(message + "\n"), StandardCharsets.UTF_8).then();
    }

    /** The cluster's broker members, added to here while this replica leads. */
    private MembersApi.Members brokerMembers() {
        return new MembersApi.Members() {
            @Override
            public List<MembersApi.Member> list() {
                return members.list(register.ownership(), server.memberStatus().group());
            }

            @Override
            public Mono<MembersApi.Member> add(RegisteredMember added) {
                return members.add(added, server, new OwnershipLog(server, register, Schedulers.boundedElastic()),
                        config.metadataLog(), config.storage().type() == StorageConfig.Type.PULSAR);
            }
        };
    }

    /** The listener delegation of the log, changed here while this replica leads. */
    private DelegationApi.Log delegation() {
        return new DelegationApi.Log() {
            @Override
            public Optional<MemberStatus> leading() {
                return member.leading();
            }

            @Override
            public Mono<Void> assign(Map<String, String> assignment) {
                return Delegations.propose(server, assignment, config.metadataLog());
            }
        };
    }

    /**
     * The controller's side of the exchange and this replica's view of the metadata log (with every
     * listener's feed while it leads).
     */
    public Mono<NodeStatus> status() {
        return controller.status(Controller.BacklogSource.NONE).map(s -> {
            MemberStatus member = server.memberStatus(); // one state for both views
            NodeStatus status = new NodeStatus(s, NodeStatus.Replicators.of(List.of()),
                    NodeStatus.MetadataLogMember.members(List.of(member)), Delegations.feeds(member));
            return self.namesBrokerMembers() ? status.withOwnership(NodeStatus.Ownership.of("", -1, List.of(),
                    register.ownership(), ownership == null ? Optional.empty()
                            : Optional.of(rates.perSecond(timer.now(TimeUnit.MILLISECONDS))))) : status;
        });
    }

    // ---- identity and lifecycle -----------------------------------------------------------------------

    public String cluster() {
        return self.name();
    }

    public String member() {
        return replica.id();
    }

    /** Its admin URL as peers reach it. */
    public String adminUrl() {
        return replica.adminUrl(net.scheme());
    }

    public Controller controller() {
        return controller;
    }

    /** Its meters: the controller's, its metadata log member's, its ports'. */
    public PrometheusMeterRegistry registry() {
        return registry;
    }

    /** Its member of the metadata log, as it reports itself. */
    public MemberStatus metadataLog() {
        return server.memberStatus();
    }

    /** What it runs and where, in a few lines (what the node logs). */
    public String describe() {
        List<String> lines = new ArrayList<>();
        lines.add(self.name() + ": controller replica " + replica.id() + " started");
        lines.add("  controller (exchange, admin, status, metrics) " + adminUrl() + " bound to " + replica.bindAddress()
                + ":" + replica.adminPort());
        lines.add("  metadata log " + replica.raftAddress() + ", voters "
                + self.controllers().stream().map(ControllerReplica::id).toList() + ", listeners "
                + self.brokerMembers().stream().map(m -> m.id() + " " + m.raftAddress()).toList());
        return String.join(System.lineSeparator(), lines);
    }

    /**
     * Stops: a leading replica first hands its leadership to the most caught-up other voter (at most two
     * seconds), so a planned restart costs no election timeout; then everything closes.
     */
    @Override
    public void close() {
        MemberStatus s = server.memberStatus();
        if (s.leads()) {
            s.peers().stream().filter(MemberStatus.Peer::voter).filter(p -> !p.id().equals(replica.id()))
                    .max(Comparator.comparingLong(MemberStatus.Peer::matchIndex)).ifPresent(p -> {
                        try {
                            server.transferLeadership(p.id()).then(server.memberStatuses()
                                    .filter(now -> !now.leads() && now.leader().equals(p.id()))
                                    .next())
                                    .block(Duration.ofSeconds(2));
                            LOG.info("{}/{}: handed the leadership to {} before stopping", self.name(), replica.id(),
                                    p.id());
                        } catch (RuntimeException e) {
                            LOG.info("{}/{}: stopping as leader ({} did not take over: {})", self.name(), replica.id(),
                                    p.id(), e.toString());
                        }
                    });
        }
        closeNow();
    }

    /** Stops at once, as a crash would (what the log synced stays on disk). */
    public synchronized void closeNow() {
        if (closed) {
            return;
        }
        closed = true;
        if (leading != null) {
            leading.dispose();
        }
        running.dispose();
        if (admin != null) {
            admin.stop();
        }
        server.close();
        raftThread.dispose();
        registry.close();
    }
}
