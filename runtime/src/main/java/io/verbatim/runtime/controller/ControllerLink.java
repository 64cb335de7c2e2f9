package io.verbatim.runtime.controller;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.micrometer.core.instrument.MeterRegistry;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.verbatim.config.BrokerMember;
import io.verbatim.config.ClusterConfig;
import io.verbatim.config.ControllerReplica;
import io.verbatim.config.VerbatimConfig;
import io.verbatim.exchange.ControllerLeader;
import io.verbatim.layoutstore.LayoutStore;
import io.verbatim.metadatalog.identity.MemberKeys;
import io.verbatim.metadatalog.identity.SignedCall;
import io.verbatim.metadatalog.server.MemberRole;
import io.verbatim.metadatalog.server.MemberStatus;
import io.verbatim.metadatalog.server.RaftServer;
import io.verbatim.metadatalog.state.LayoutRegister;
import io.verbatim.metadatalog.state.RaftLayoutStore;
import io.verbatim.model.Layout;
import io.verbatim.net.LogText;
import io.verbatim.net.NetClient;
import io.verbatim.net.Tls;
import io.verbatim.pipeline.ExchangeGate;
import io.verbatim.runtime.broker.BrokerReport;
import io.verbatim.runtime.broker.Lease;
import io.verbatim.runtime.broker.SegmentOwnership;
import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;
import reactor.core.Disposable;
import reactor.core.Disposables;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import reactor.netty.ByteBufFlux;
import reactor.netty.http.client.HttpClient;
import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * A broker process's side of a cluster whose controller replicas run as processes of their own: its broker
 * member's listener of the metadata log (a member of {@code clusters[].brokerMembers}, or the one brokers process
 * {@value ControllerReplica#BROKERS}), from whose replica the brokers watch layouts, and the report loop to the
 * controller leader — every interval it sends the process's load, its subscriptions' consumers and its prunable
 * segments ({@link BrokerReport}), signed with the member's own key for the replica it goes to
 * ({@link SignedCall}), and takes back the exchange's verdict on each peer, which gates the replicators (R-C11).
 */
public final class ControllerLink implements AutoCloseable {
    private static final Logger LOG = Loggers.getLogger(ControllerLink.class);
    private static final ObjectMapper JSON = new ObjectMapper();
    /** A follower redirects to the leader; a leader deposed meanwhile may redirect once more. */
    private static final int MAX_REDIRECTS = 2;

    private final VerbatimConfig config;
    private final ClusterConfig self;
    private final Scheduler thread;
    private final RaftServer server;
    private final NetworkedMember.Started member;
    private final LayoutRegister register = new LayoutRegister();
    private final RaftLayoutStore store;
    private final List<String> urls;
    private final HttpClient http;
    /** The broker member this process runs. */
    private final String memberId;
    /** The broker member's keys: it signs its reports with its own. */
    private final MemberKeys keys;
    /** The controller replicas' member ids, in the order of {@link #urls}. */
    private final List<String> replicas;
    private final Map<String, Sinks.Many<Boolean>> verdicts = new ConcurrentHashMap<>();
    private final Disposable.Composite meters = Disposables.composite();
    private volatile int preferred;
    private volatile boolean failing;
    /** Whether the next report carries every topic (at the start, after a failure, after a change of leader). */
    private volatile boolean nextWhole = true;
    private volatile String reportedTo = "";
    private volatile long reportedTerm = -1;
    private Disposable reporting = Disposables.disposed();
    /** What this member acts on, when the cluster names its broker members (else every segment). */
    private @Nullable LeasedOwnership leased;
    private final Scheduler ownershipThread;
    private final Sinks.Many<Long> nudges = Sinks.many().multicast().directBestEffort();
    private volatile boolean leaving;

    /**
     * Starts broker member {@code member} of {@code cluster}'s metadata log (its listener on the member's own raft
     * port, proving itself with the member's own secret).
     *
     * @param dataDir where the listener keeps its log and snapshots; empty: in memory
     * @throws IllegalArgumentException when {@code member} is not one of the cluster's broker members
     */
    public ControllerLink(VerbatimConfig config, String cluster, String member, Optional<Path> dataDir) {
        this(config, cluster, member, dataDir, NetClient.unsigned(config.network(),
                config.security().tls(cluster).map(Tls::clientContext)));
    }

    private ControllerLink(VerbatimConfig config, String cluster, String memberId, Optional<Path> dataDir,
            NetClient client) {
        this.config = config;
        this.self = config.cluster(cluster);
        if (self.brokerMember(memberId).isEmpty()) {
            throw new IllegalArgumentException("cluster " + cluster + " has no broker member '" + memberId + "' (it has "
                    + self.brokerMembers().stream().map(BrokerMember::id).toList() + ")");
        }
        this.memberId = memberId;
        String scheme = config.security().tls(cluster).isPresent() ? "https" : "http";
        this.urls = self.controllers().stream().map(c -> c.adminUrl(scheme)).toList();
        this.thread = NetworkedMember.thread(cluster, memberId);
        this.ownershipThread = Schedulers.newSingle("verbatim-ownership-" + memberId, true);
        try {
            this.member = NetworkedMember.start(config, self, memberId, dataDir, register, thread);
            this.server = member.server();
        } catch (RuntimeException e) {
            thread.dispose();
            ownershipThread.dispose();
            throw e;
        }
        this.store = new RaftLayoutStore(server, register);
        this.keys = NetworkedMember.keys(config, self, memberId);
        this.replicas = self.controllers().stream().map(ControllerReplica::id).toList();
        // Redirects are followed by send() itself: each call is signed anew for the replica it goes to, and only
        // to one of this cluster's own replicas.
        this.http = client.apply(HttpClient.create()).followRedirect(false)
                .headers(h -> h.set(HttpHeaderNames.CONTENT_TYPE, "application/json"));
        for (ClusterConfig c : config.clusters()) {
            if (!c.name().equals(cluster)) {
                verdicts.put(c.name(), Sinks.many().replay().latest());
            }
        }
    }

    /** The listener's meters (its state, transport and storage). */
    public void bindTo(MeterRegistry registry) {
        meters.add(member.bindTo(registry));
    }

    /** {@code scheme://host:port} of a URL, the default port made explicit. */
    static String origin(@Nullable String url) {
        URI u = URI.create(String.valueOf(url));
        int port = u.getPort() != -1 ? u.getPort() : "https".equalsIgnoreCase(u.getScheme()) ? 443 : 80;
        return (u.getScheme() + "://" + u.getHost() + ":" + port).toLowerCase(Locale.ROOT);
    }

    /** This process's view of the cluster's layouts: its listener's replica (writes belong to the leader). */
    public LayoutStore store() {
        return store;
    }

    /** The first layout of {@code topic}: the controller leader creates it, this waits until it arrives. */
    public Mono<Layout> first(String topic, Duration within) {
        return store.watch(topic).next().timeout(within).onErrorMap(TimeoutException.class,
                e -> new IllegalStateException(self.name() + ": no layout of " + topic + " from the metadata log within "
                        + within + " (is a majority of the controller replicas " + urls + " up?)", e));
    }

    /** Where the controller leader is, as the listener knows it: where exchange and admin calls are redirected. */
    public ControllerLeader leader() {
        MemberStatus s = server.memberStatus();
        return ControllerReplicaNode.leaderUrl(config, self, s.leader()).map(ControllerLeader::at)
                .orElseGet(() -> ControllerLeader.unknown("broker member " + memberId + " knows no controller leader in "
                        + "term " + s.term()));
    }

    /**
     * What this process acts on: when the cluster names its broker members, the segments the metadata log says
     * this member owns while its lease holds (renewed by the answers to its reports), followed off the log's thread
     * on one of its own; else every segment.
     *
     * @param timer where the lease's lapse is scheduled
     */
    public synchronized SegmentOwnership ownership(Scheduler timer) {
        if (!self.namesBrokerMembers()) {
            return SegmentOwnership.ALL;
        }
        if (leased == null) {
            LeasedOwnership made = new LeasedOwnership(memberId, new Lease(config.ownership().lease()), timer)
                    .follow(register.watchOwnership().publishOn(ownershipThread));
            made.offers().subscribe(v -> nudges.tryEmitNext(v)); // a release goes out at once, not at the next tick
            leased = made;
        }
        return leased;
    }

    /**
     * Stops this member (SIGTERM): its reports say it is leaving, the leader moves its segments away and this
     * member releases each; completes once its replica shows it holding nothing, or after {@code timeout}.
     */
    public Mono<Void> drain(Duration timeout, Scheduler timer) {
        LeasedOwnership mine;
        synchronized (this) {
            mine = leased;
        }
        if (mine == null) {
            return Mono.empty();
        }
        leaving = true;
        nudges.tryEmitNext(-1L);
        LOG.info("{}/{}: draining: asking the controller leader to move its {} segment(s) away", self.name(), memberId,
                mine.acting().size());
        return Flux.interval(Duration.ZERO, Duration.ofMillis(100), timer).filter(t -> !mine.holdsAny()).next().then()
                .timeout(timeout, Mono.<Void>fromRunnable(() -> LOG.warn("{}/{}: still held segments after {}; "
                        + "stopping anyway (the others take them after the lease)", self.name(), memberId, timeout)),
                        timer);
    }

    /** The replicators' gate: the controller leader's verdict on each peer, as its latest report answer said. */
    public ExchangeGate gate() {
        return remote -> {
            Sinks.Many<Boolean> v = verdicts.get(remote);
            return v == null ? Flux.just(ExchangeGate.Readiness.UNSUPPORTED)
                    : v.asFlux().distinctUntilChanged()
                            .map(ok -> ok ? ExchangeGate.Readiness.READY : ExchangeGate.Readiness.UNSUPPORTED);
        };
    }

    /** Reports every {@code interval} what {@code report} builds; a report not taken is put back by {@code untaken}. */
    public synchronized void start(Duration interval, Function<Boolean, BrokerReport> report,
            Consumer<BrokerReport> untaken, Scheduler timer) {
        reporting = Flux.merge(Flux.interval(Duration.ZERO, interval, timer), nudges.asFlux()).onBackpressureDrop()
                .concatMap(tick -> {
                    LeasedOwnership mine = leased;
                    long sent = mine == null ? 0 : mine.nowMs();
                    BrokerReport whole = report.apply(nextWhole);
                    if (mine != null) {
                        whole = whole.withMember(mine.releasable().stream().map(r -> new BrokerReport.Released(
                                r.segment().topic(), r.segment().segment(), r.epoch())).toList(), leaving);
                    }
                    List<BrokerReport> chunks = whole.chunks();
                    Set<BrokerReport> taken = Collections.newSetFromMap(new IdentityHashMap<>());
                    return Flux.fromIterable(chunks)
                            .concatMap(chunk -> send(chunk, 0, timer).timeout(config.exchange().requestTimeout(), timer)
                                    .doOnNext(a -> taken.add(chunk)))
                            .last()
                            .doOnNext(a -> {
                                // a leader of another term than the last may lack what earlier reports left out
                                nextWhole = !a.leader().equals(reportedTo) || a.term() != reportedTerm;
                                reportedTo = a.leader();
                                reportedTerm = a.term();
                                if (mine != null && a.lease()) {
                                    mine.granted(sent, a.epoch());
                                }
                            })
                            .onErrorResume(e -> {
                                nextWhole = true;
                                chunks.stream().filter(c -> !taken.contains(c)).forEach(untaken); // counted next time
                                if (!failing) {
                                    failing = true;
                                    LOG.warn("{}/{}: the report to the controller leader failed ({}); trying every {}",
                                            self.name(), memberId, e.toString(), interval);
                                }
                                return Mono.empty();
                            });
                })
                .subscribe(this::answered, e -> LOG.error("{}/{}: the reports stopped: {}", self.name(), memberId,
                        e.toString()));
    }

    private void answered(BrokerReport.Answer answer) {
        if (failing) {
            failing = false;
            LOG.info("{}/{}: reports to the controller leader again", self.name(), memberId);
        }
        answer.verdicts().forEach((peer, ok) -> {
            Sinks.Many<Boolean> v = verdicts.get(peer);
            if (v != null) {
                v.tryEmitNext(ok);
            }
        });
    }

    /** To the replica that answered last; an unreachable one is passed over for the next, in turn. */
    private Mono<BrokerReport.Answer> send(BrokerReport report, int tried, Scheduler clock) {
        int index = (preferred + tried) % urls.size();
        byte[] body;
        try {
            body = JSON.writeValueAsBytes(report);
        } catch (IOException e) {
            return Mono.error(e);
        }
        return post(index, body, MAX_REDIRECTS, clock)
                .onErrorResume(e -> tried + 1 < urls.size(), e -> send(report, tried + 1, clock));
    }

    /**
     * {@code body} to replica {@code index}, signed for it by this broker member ({@link SignedCall}: it proves
     * who sends without a secret on the wire, good at that replica, now, once); a redirect is followed to a
     * replica of this cluster only, signed anew for it.
     */
    private Mono<BrokerReport.Answer> post(int index, byte[] body, int redirects, Scheduler clock) {
        String url = urls.get(index);
        String authorization = SignedCall.authorization(self.name(), keys, replicas.get(index), "POST",
                BrokerReport.PATH, body, clock.now(TimeUnit.MILLISECONDS));
        return http.headers(h -> h.set(HttpHeaderNames.AUTHORIZATION, authorization)).post()
                .uri(url + BrokerReport.PATH).send(ByteBufFlux.fromInbound(Mono.just(body)))
                .responseSingle((response, content) -> content.asByteArray().defaultIfEmpty(new byte[0]).flatMap(bytes -> {
                    int status = response.status().code();
                    if ((status == 307 || status == 308) && redirects > 0) {
                        return redirected(url, response.responseHeaders().get(HttpHeaderNames.LOCATION))
                                .map(next -> post(next, body, redirects - 1, clock)).orElseGet(() -> Mono.error(
                                        new IllegalStateException(url + " redirected the report to "
                                                + LogText.escape(response.responseHeaders().get(HttpHeaderNames.LOCATION))
                                                + ", not to " + BrokerReport.PATH + " of one of " + urls)));
                    }
                    if (status != 200) {
                        return Mono.error(new IllegalStateException(url + " answered " + status + ": "
                                + LogText.escape(new String(bytes, StandardCharsets.UTF_8))));
                    }
                    try {
                        BrokerReport.Answer answer = JSON.readValue(bytes, BrokerReport.Answer.class);
                        preferred = index;
                        return Mono.just(answer);
                    } catch (IOException e) {
                        return Mono.error(e);
                    }
                }));
    }

    /** The replica a redirect from {@code from} to {@code location} names: one of {@link #urls}, at the report's path. */
    private Optional<Integer> redirected(String from, @Nullable String location) {
        if (location == null) {
            return Optional.empty();
        }
        URI target;
        try {
            target = URI.create(from).resolve(location);
        } catch (IllegalArgumentException e) {
            return Optional.empty();
        }
        if (!BrokerReport.PATH.equals(target.getPath()) || target.getRawQuery() != null) {
            return Optional.empty();
        }
        String origin = origin(target.toString());
        for (int i = 0; i < urls.size(); i++) {
            if (origin(urls.get(i)).equals(origin)) {
                return Optional.of(i);
            }
        }
        return Optional.empty();
    }

    /** The listener as it reports itself. */
    public MemberStatus member() {
        return server.memberStatus();
    }

    /** The broker member this process runs: its listener's id, what its reports are signed as. */
    public String memberId() {
        return memberId;
    }

    /** The controller replica that took the last report, empty before any: where the reports go now. */
    public String reportedTo() {
        return reportedTo;
    }

    /** Whether the listener knows a leader now. */
    boolean knowsLeader() {
        MemberStatus s = server.memberStatus();
        return s.role() == MemberRole.LISTENER && !s.leader().isEmpty();
    }

    @Override
    public synchronized void close() {
        reporting.dispose();
        if (leased != null) {
            leased.close();
        }
        ownershipThread.dispose();
        meters.dispose();
        server.close();
        thread.dispose();
    }
}
