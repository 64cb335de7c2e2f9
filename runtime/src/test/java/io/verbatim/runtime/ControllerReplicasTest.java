package io.verbatim.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.verbatim.config.ClusterUrls;
import io.verbatim.config.VerbatimConfig;
import io.verbatim.exchange.ControllerLeader;
import io.verbatim.exchange.ExchangeServer;
import io.verbatim.metadatalog.identity.MemberKeys;
import io.verbatim.metadatalog.identity.SignedCall;
import io.verbatim.metadatalog.server.MemberRole;
import io.verbatim.model.Compression;
import io.verbatim.model.entry.Message;
import io.verbatim.net.SigningKey;
import io.verbatim.runtime.broker.BrokerReport;
import io.verbatim.runtime.controller.ControllerReplicaNode;
import io.verbatim.runtime.controller.DelegationApi;
import io.verbatim.testkit.Traffic;
import java.net.ServerSocket;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import reactor.core.publisher.Flux;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * A cluster's three controller replicas and its brokers, each as {@code verbatim node --member} would run
 * it, here in one JVM on loopback over TCP, beside a peer cluster: who answers what, who redirects where,
 * who is refused, and a failover of the leader.
 */
class ControllerReplicasTest {
    private static final String T = "persistent://public/default/t";
    private static final String ADMIN = "replicas-admin";

    private final Scheduler timer = Schedulers.newParallel("test-timer", 2, true);
    private final Scheduler cpu = Schedulers.newBoundedElastic(2, 1000, "test-cpu");
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private final Map<String, ControllerReplicaNode> replicas = new LinkedHashMap<>();
    private final List<AutoCloseable> open = new ArrayList<>();
    private VerbatimConfig config;
    @TempDir
    Path dir;

    @AfterEach
    void stop() throws Exception {
        for (int i = open.size() - 1; i >= 0; i--) {
            open.get(i).close();
        }
        replicas.values().forEach(ControllerReplicaNode::close);
        timer.dispose();
        cpu.dispose();
    }

    /** Every port handed out in this JVM: a port freed again may be handed out twice by the system. */
    private static final Set<Integer> TAKEN = ConcurrentHashMap.newKeySet();

    private static int port() throws Exception {
        while (true) {
            try (ServerSocket s = new ServerSocket(0)) {
                if (TAKEN.add(s.getLocalPort())) {
                    return s.getLocalPort();
                }
            }
        }
    }

    private ClusterNode startAll() throws Exception {
        return startAll("");
    }

    private ClusterNode startAll(String more) throws Exception {
        return startAll(more, "");
    }

    private ClusterNode startAll(String more, String moreTopics) throws Exception {
        config = VerbatimConfig.parse("""
                clusters:
                  - name: a
                    token: a-token
                    brokersSecret: a-brokers-secret
                    adminPort: %d
                    brokerPorts: [%d]
                    raftPort: %d
                    controllers:
                      - {id: c1, adminPort: %d, raftPort: %d, secret: a-c1-secret}
                      - {id: c2, adminPort: %d, raftPort: %d, secret: a-c2-secret}
                      - {id: c3, adminPort: %d, raftPort: %d, secret: a-c3-secret}
                  - {name: b, token: b-token, adminPort: %d, brokerPorts: [%d]}
                topics:
                  - {name: %s, initialSegments: 2}
                %s
                exchange: {antiEntropyInterval: 300ms, retry: {initial: 20ms, max: 300ms}}
                replication: {startAt: earliest, retry: {initial: 20ms, max: 300ms}}
                security: {adminToken: %s}
                """.formatted(port(), port(), port(), port(), port(), port(), port(), port(), port(), port(), port(), T,
                moreTopics, ADMIN) + more);
        for (String id : List.of("c1", "c2", "c3")) {
            replicas.put(id, ControllerReplicaNode.start(config, "a", id, dir.resolve(id), timer));
        }
        ClusterNode brokers = ClusterNode.brokersOf(config, "a", "brokers", Optional.empty(), timer, cpu).start();
        open.add(brokers);
        ClusterNode b = new ClusterNode(config, "b", timer, cpu).start();
        open.add(b);
        brokers.connect(Map.of("b", ClusterUrls.of(config, "b")));
        b.connect(Map.of("a", ClusterUrls.of(config, "a")));
        return brokers;
    }

    /** As {@link #startAll()}, a's broker process named as broker member {@code broker-2} of its own ports. */
    private ClusterNode startMember(int admin, int ingest, int raft) throws Exception {
        config = VerbatimConfig.parse("""
                clusters:
                  - name: a
                    token: a-token
                    controllers:
                      - {id: c1, adminPort: %d, raftPort: %d, secret: a-c1-secret}
                      - {id: c2, adminPort: %d, raftPort: %d, secret: a-c2-secret}
                      - {id: c3, adminPort: %d, raftPort: %d, secret: a-c3-secret}
                    brokerMembers:
                      - {id: broker-2, adminPort: %d, brokerPorts: [%d], raftPort: %d, secret: a-broker-2-secret}
                  - {name: b, token: b-token, adminPort: %d, brokerPorts: [%d]}
                topics:
                  - {name: %s, initialSegments: 2}
                exchange: {antiEntropyInterval: 300ms, retry: {initial: 20ms, max: 300ms}}
                replication: {startAt: earliest, retry: {initial: 20ms, max: 300ms}}
                security: {adminToken: %s}
                """.formatted(port(), port(), port(), port(), port(), port(), admin, ingest, raft, port(), port(), T,
                ADMIN));
        for (String id : List.of("c1", "c2", "c3")) {
            replicas.put(id, ControllerReplicaNode.start(config, "a", id, dir.resolve(id), timer));
        }
        ClusterNode member = ClusterNode.brokersOf(config, "a", "broker-2", Optional.empty(), timer, cpu).start();
        open.add(member);
        ClusterNode b = new ClusterNode(config, "b", timer, cpu).start();
        open.add(b);
        member.connect(Map.of("b", ClusterUrls.of(config, "b")));
        b.connect(Map.of("a", ClusterUrls.of(config, "a")));
        return member;
    }

    /**
     * A process started as {@code --member broker-2} (one broker member: the embedded storage runs one) binds
     * broker-2's ports, is broker-2 on the metadata log, and reports as broker-2: the leader takes its reports, so
     * its replicators open and a's message reaches b.
     */
    @Test
    void aBrokerMembersProcessRunsOnItsOwnPortsAsItselfOnTheLog() throws Exception {
        int admin = port();
        int ingest = port();
        int raft = port();
        ClusterNode member = startMember(admin, ingest, raft);
        assertThat(member.process().id()).isEqualTo("broker-2");
        assertThat(member.adminPort()).isEqualTo(admin);
        assertThat(member.adminUrl()).isEqualTo("http://127.0.0.1:" + admin);
        assertThat(member.brokerUrls()).containsExactly("http://127.0.0.1:" + ingest);
        assertThat(member.metadataLog()).singleElement().satisfies(s -> {
            assertThat(s.memberId()).isEqualTo("broker-2");
            assertThat(s.role()).isEqualTo(MemberRole.LISTENER);
        });
        ControllerReplicaNode leader = awaitLeader();
        Flux.interval(Duration.ofMillis(20)).filter(t -> leader.metadataLog().peers().stream()
                .anyMatch(p -> p.id().equals("broker-2") && p.matchIndex() > 0)).blockFirst(Duration.ofSeconds(10));
        // its reports, signed with broker-2's secret, are what open its replicators toward b
        member.producer(T, Compression.NONE).sendNow(List.of(Message.of("k", "one".getBytes(StandardCharsets.UTF_8))));
        ClusterNode b = (ClusterNode) open.get(1);
        Flux.interval(Duration.ofMillis(50)).filter(t -> b.storage(T).contents().values().stream()
                .mapToLong(List::size).sum() > 0).blockFirst(Duration.ofSeconds(30));
        String report = "{\"topics\":{}}";
        HttpResponse<String> asMember = authorized("POST", leader.adminUrl() + BrokerReport.PATH,
                signed("a-broker-2-secret", "broker-2", leader.member(), report), report);
        assertThat(asMember.statusCode()).as(asMember.body()).isEqualTo(200);
        // b's peers reach a's layout stream at broker-2's ingest port: the one configured
        assertThat(ClusterUrls.of(config, "a").brokerUrls()).containsExactly("http://127.0.0.1:" + ingest);
    }

    private ControllerReplicaNode awaitLeader() {
        return Flux.interval(Duration.ofMillis(20)).map(t -> replicas.values().stream()
                .filter(r -> r.leader() instanceof ControllerLeader.Here).findFirst())
                .filter(Optional::isPresent).map(Optional::get).blockFirst(Duration.ofSeconds(30));
    }

    /** @param token a bearer token, or a whole Authorization header of another scheme (a cluster's signature) */
    private HttpResponse<String> call(String method, String url, String token, String body) throws Exception {
        return authorized(method, url, token == null ? null : token.startsWith("Verbatim ") ? token : "Bearer " + token, body);
    }

    private HttpResponse<String> authorized(String method, String url, String authorization, String body)
            throws Exception {
        HttpRequest.Builder r = HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(10))
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
        if (authorization != null) {
            r.header("Authorization", authorization);
        }
        return http.send(r.build(), HttpResponse.BodyHandlers.ofString());
    }

    /** A report to {@code at}, signed with the key {@code secret} gives, as member {@code as}, for member {@code to}. */
    private static String signed(String secret, String as, String to, String body) {
        return SignedCall.authorization("a", MemberKeys.of(as, SigningKey.fromSecret(secret)), to, "POST",
                BrokerReport.PATH, body.getBytes(StandardCharsets.UTF_8), System.currentTimeMillis());
    }

    @Test
    void followersAndTheBrokersRedirectToTheLeaderWhichAloneAnswers() throws Exception {
        ClusterNode brokers = startAll();
        ControllerReplicaNode leader = awaitLeader();
        ControllerReplicaNode follower = replicas.values().stream().filter(r -> r != leader).findFirst().orElseThrow();
        // the follower learns the leader from its first heartbeat
        Flux.interval(Duration.ofMillis(20)).filter(t -> follower.leader() instanceof ControllerLeader.At).blockFirst(
                Duration.ofSeconds(10));

        HttpResponse<String> exchange = call("POST", follower.adminUrl() + ExchangeServer.EXCHANGE_PATH,
                TestNet.signed("b", "a", "POST", follower.adminUrl() + ExchangeServer.EXCHANGE_PATH), "");
        assertThat(exchange.statusCode()).isEqualTo(307);
        assertThat(exchange.headers().firstValue("location")).hasValue(leader.adminUrl() + ExchangeServer.EXCHANGE_PATH);
        String split = "/admin/v2/scalable/split?topic=" + URLEncoder.encode(T, StandardCharsets.UTF_8) + "&segment=0";
        HttpResponse<String> viaBrokers = call("POST", brokers.adminUrl() + split, ADMIN, null);
        assertThat(viaBrokers.statusCode()).isEqualTo(307);
        assertThat(viaBrokers.headers().firstValue("location")).hasValue(leader.adminUrl() + split);
        assertThat(call("POST", follower.adminUrl() + split, null, null).statusCode()).isEqualTo(401);
        // A target that is not a path would make a Location built by appending it point elsewhere (issue 23 item 6).
        String at = RawHttp.send(follower.adminUrl(), "POST @other-host" + split + " HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                + "Authorization: Bearer " + ADMIN + "\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
        assertThat(RawHttp.status(at)).as(at).isEqualTo(400);
        assertThat(at.toLowerCase(Locale.ROOT)).doesNotContain("location:");
        // A follower's status answers from its own replica: its role, and the layouts it holds.
        HttpResponse<String> status = call("GET", follower.adminUrl() + ExchangeServer.STATUS_PATH, null, null);
        assertThat(status.statusCode()).as(status.body()).isEqualTo(200);
        assertThat(status.body()).contains("FOLLOWER").contains(T);

        // The split, at the leader: committed, adopted by the brokers from their listener, carried to b.
        HttpResponse<String> applied = untilNotDeferred(leader.adminUrl() + split);
        assertThat(applied.statusCode()).as(applied.body()).isEqualTo(200);
        Flux.interval(Duration.ofMillis(20)).filter(t -> brokers.layout(T).activeSegments().size() == 3
                && open.get(1) instanceof ClusterNode b && b.layout(T).activeSegments().size() == 3)
                .blockFirst(Duration.ofSeconds(30));

        // The brokers' report (issue 23, item 7: it carried the group's secret in clear): the brokers' member's
        // signature, made for the replica it goes to, once; taken at the leader only; a bad body changes nothing.
        String report = "{\"topics\":{\"" + T + "\":{\"load\":{\"2\":[5,500,0,0]},\"consumers\":1,\"prunable\":[]}}}";
        String reportUrl = leader.adminUrl() + BrokerReport.PATH;
        assertThat(call("POST", reportUrl, "a-token", report).statusCode()).isEqualTo(401);
        assertThat(call("POST", reportUrl, null, report).statusCode()).isEqualTo(401);
        HttpResponse<String> replicaAsBrokers = authorized("POST", reportUrl,
                signed("a-c1-secret", "brokers", leader.member(), report), report);
        assertThat(replicaAsBrokers.statusCode()).isEqualTo(403);
        assertThat(replicaAsBrokers.body()).contains("the signature is not member brokers's over this request");
        HttpResponse<String> replicaAsItself = authorized("POST", reportUrl,
                signed("a-c1-secret", "c1", leader.member(), report), report);
        assertThat(replicaAsItself.statusCode()).isEqualTo(403);
        assertThat(replicaAsItself.body()).contains("member 'c1' may not make this call here");
        HttpResponse<String> forAnother = authorized("POST", reportUrl,
                signed("a-brokers-secret", "brokers", follower.member(), report), report);
        assertThat(forAnother.statusCode()).isEqualTo(403);
        assertThat(forAnother.body()).contains("signed for member '" + follower.member() + "'");
        assertThat(authorized("POST", follower.adminUrl() + BrokerReport.PATH,
                signed("a-brokers-secret", "brokers", follower.member(), report), report).statusCode()).isEqualTo(307);
        String negative = "{\"topics\":{\"" + T + "\":{\"load\":{\"2\":[-1,0,0,0]},\"consumers\":1,\"prunable\":[]}}}";
        HttpResponse<String> bad = authorized("POST", reportUrl, signed("a-brokers-secret", "brokers",
                leader.member(), negative), negative);
        assertThat(bad.statusCode()).isEqualTo(400);
        assertThat(bad.body()).contains("negative");
        String once = signed("a-brokers-secret", "brokers", leader.member(), report);
        HttpResponse<String> taken = authorized("POST", reportUrl, once, report);
        assertThat(taken.statusCode()).as(taken.body()).isEqualTo(200);
        assertThat(taken.body()).contains("\"b\":true"); // b took part in the exchange: a's replicators may write
        HttpResponse<String> replayed = authorized("POST", reportUrl, once, report);
        assertThat(replayed.statusCode()).isEqualTo(403);
        assertThat(replayed.body()).contains("a replay");

        // Every member's meters are scraped: its state, its transport, its storage on disk.
        String scrape = leader.registry().scrape();
        assertThat(scrape).contains("verbatim_raft_term{").contains("verbatim_raft_leader{")
                .contains("verbatim_raft_transport_messages_sent_total{").contains("verbatim_raft_storage_segment_files{")
                .contains("verbatim_controller_leading{");
        // The status of each: the leader's member says LEADER, the brokers' LISTENER.
        assertThat(leader.metadataLog().role()).isEqualTo(MemberRole.LEADER);
        assertThat(brokers.metadataLog()).singleElement().satisfies(s -> assertThat(s.role())
                .isEqualTo(MemberRole.LISTENER));
    }

    @Test
    void whenTheLeaderDiesAnotherTakesOverWithEveryCommittedLayout() throws Exception {
        ClusterNode brokers = startAll();
        ControllerReplicaNode first = awaitLeader();
        String split = "/admin/v2/scalable/split?topic=" + URLEncoder.encode(T, StandardCharsets.UTF_8) + "&segment=0";
        assertThat(untilNotDeferred(first.adminUrl() + split).statusCode()).isEqualTo(200);
        replicas.remove(first.member()).closeNow(); // its process gone, as a crash: no hand-over
        ControllerReplicaNode next = awaitLeader();
        assertThat(next.member()).isNotEqualTo(first.member());
        // The new leader holds the split (segment 0 is sealed: splitting it again is refused) and builds on it.
        HttpResponse<String> again = call("POST", next.adminUrl() + split, ADMIN, null);
        assertThat(again.body()).doesNotContain("\"outcome\":\"applied\"");
        // Its own changes wait until it holds every peer's state (R-E5): 409 DEFERRED until b's state came.
        String childSplit = next.adminUrl() + split.replace("segment=0", "segment=2");
        HttpResponse<String> child = Flux.interval(Duration.ofMillis(50), Schedulers.boundedElastic()).map(t -> post(childSplit))
                .filter(r -> r.statusCode() != 409 || !r.body().contains("DEFERRED")).blockFirst(Duration.ofSeconds(30));
        assertThat(child.statusCode()).as(child.body() + " " + replicas.values().stream()
                .map(ControllerReplicaNode::metadataLog).toList()).isEqualTo(200);
        assertThat(child.body()).contains("\"epoch\":2");
        Flux.interval(Duration.ofMillis(20)).filter(t -> brokers.layout(T).activeSegments().size() == 4)
                .blockFirst(Duration.ofSeconds(30));
        // The brokers redirect to the new leader now.
        Flux.interval(Duration.ofMillis(20), Schedulers.boundedElastic()).filter(t -> call0(brokers.adminUrl() + split).contains(next.adminUrl()))
                .blockFirst(Duration.ofSeconds(10));
    }

    /** The policy runs on the leader, on the load the brokers' process reports: a hot segment is split. */
    @Test
    void theLeaderSplitsOnTheLoadTheBrokersReport() throws Exception {
        ClusterNode brokers = startAll("autoScale: {enabled: true, interval: 200ms, splitCooldown: 1h, "
                + "split: {msgRateIn: 200}, merge: {msgRateIn: 0}}\ncaps: {maxSegments: 3}\n");
        awaitLeader();
        Traffic traffic = new Traffic(Map.of("a", brokers.producer(T, Compression.LZ4)::sendNow), 50, 0, 3);
        Flux.interval(Duration.ofMillis(20)).doOnNext(t -> traffic.send("a", 20))
                .takeUntil(t -> brokers.layout(T).activeSegments().size() == 3).blockLast(Duration.ofSeconds(30));
        assertThat(brokers.layout(T).activeSegments()).hasSize(3);
        ControllerReplicaNode leader = awaitLeader();
        assertThat(leader.controller().recentChanges(T)).anyMatch(c -> c.what().startsWith("split"));
    }

    /** A leader stopped cleanly hands its leadership over first: no election timeout for a planned restart. */
    @Test
    void aLeaderStoppedCleanlyHandsItsLeadershipOver() throws Exception {
        startAll();
        ControllerReplicaNode first = awaitLeader();
        long term = first.metadataLog().term();
        replicas.remove(first.member()).close();
        // Already led by another the moment the stop returns: a crash would leave none for an election timeout.
        assertThat(replicas.values()).anySatisfy(r -> assertThat(r.metadataLog().role()).isEqualTo(MemberRole.LEADER));
        ControllerReplicaNode next = awaitLeader();
        assertThat(next.metadataLog().term()).isEqualTo(term + 1);
    }

    /**
     * Many topics: the leader creates every one, the brokers adopt them, and their reports (in several bodies,
     * each under the body limit) reach the leader, whose verdicts open the replicators: a message produced
     * to the last topic arrives on b.
     */
    @Test
    void aFleetOfTopicsStartsReportsInBodiesAndReplicates() throws Exception {
        StringBuilder more = new StringBuilder();
        for (int i = 0; i < 450; i++) {
            more.append("  - {name: persistent://public/default/many-").append(i).append("}\n");
        }
        ClusterNode brokers = startAll("", more.toString());
        String last = "persistent://public/default/many-449";
        assertThat(brokers.topics()).hasSize(451);
        brokers.producer(last, Compression.NONE).sendNow(List.of(Message.of("k",
                "one".getBytes(StandardCharsets.UTF_8))));
        ClusterNode b = (ClusterNode) open.get(1);
        Flux.interval(Duration.ofMillis(50)).filter(t -> b.storage(last).contents().values().stream()
                .mapToLong(List::size).sum() > 0).blockFirst(Duration.ofSeconds(60));
    }

    /** Garbage collection runs on the leader, on what the brokers' process reports drained. */
    @Test
    void theLeaderPrunesTheSealedSegmentsTheBrokersReportDrained() throws Exception {
        ClusterNode brokers = startAll("storage: {pruneSealed: true, gcInterval: 200ms}\n");
        ControllerReplicaNode leader = awaitLeader();
        String split = "/admin/v2/scalable/split?topic=" + URLEncoder.encode(T, StandardCharsets.UTF_8) + "&segment=0";
        HttpResponse<String> r = untilNotDeferred(leader.adminUrl() + split);
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        // Segment 0 was empty: sealed, drained everywhere, reported prunable, deleted by the leader's GC.
        Flux.interval(Duration.ofMillis(20)).filter(t -> brokers.layout(T).segment(0).isEmpty())
                .blockFirst(Duration.ofSeconds(30));
        assertThat(brokers.layout(T).activeSegments()).hasSize(3);
        assertThat(leader.registry().scrape()).contains("verbatim_gc_pruned_segments_total{");
    }

    /** POSTs {@code url} until the leader stops deferring its own changes (R-E5: until it holds b's state). */
    @Test
    void theBrokersListenerIsFedByTheFollowerTheAdminAssignsUntilThatFollowerDies() throws Exception {
        ClusterNode brokers = startAll("metadataLog: {enabled: true, reassignmentInterval: 1s}\n");
        ControllerReplicaNode leader = awaitLeader();
        ControllerReplicaNode delegate = replicas.values().stream().filter(r -> r != leader).findFirst().orElseThrow();
        Flux.interval(Duration.ofMillis(20)).filter(t -> delegate.leader() instanceof ControllerLeader.At).blockFirst(
                Duration.ofSeconds(10));
        String assignment = "{\"brokers\": \"" + delegate.member() + "\"}";
        // Assigned at the leader only: a follower and the brokers redirect there.
        HttpResponse<String> redirected = call("PUT", delegate.adminUrl() + DelegationApi.PATH, ADMIN, assignment);
        assertThat(redirected.statusCode()).isEqualTo(307);
        assertThat(redirected.headers().firstValue("location")).hasValue(leader.adminUrl() + DelegationApi.PATH);
        assertThat(call("GET", brokers.adminUrl() + DelegationApi.PATH, null, null).statusCode()).isEqualTo(307);
        HttpResponse<String> put = Flux.interval(Duration.ofMillis(50), Schedulers.boundedElastic())
                .map(t -> call0("PUT", leader.adminUrl() + DelegationApi.PATH, assignment))
                .filter(r -> r.statusCode() != 503).blockFirst(Duration.ofSeconds(20));
        assertThat(put.statusCode()).as(put.body()).isEqualTo(200);

        // The follower feeds the brokers' process over TCP; the leader's status and meters say so.
        Flux.interval(Duration.ofMillis(20)).filter(t -> delegate.metadataLog().feeding().contains("brokers"))
                .blockFirst(Duration.ofSeconds(10));
        HttpResponse<String> status = call("GET", leader.adminUrl() + ExchangeServer.STATUS_PATH, null, null);
        JsonNode feed = new ObjectMapper()
                .readTree(status.body()).get("listenerFeeds").get(0);
        assertThat(feed.get("listener").asText()).isEqualTo("brokers");
        assertThat(feed.get("assignedTo").asText()).isEqualTo(delegate.member());
        assertThat(feed.get("source").asText()).isEqualTo(delegate.member());
        assertThat(feed.get("delegated").asBoolean()).isTrue();
        assertThat(leader.registry().scrape()).contains("verbatim_raft_listener_source{cluster=\"a\",listener=\"brokers\","
                + "member=\"" + leader.member() + "\",source=\"" + delegate.member() + "\"} 1.0");
        String split = "/admin/v2/scalable/split?topic=" + URLEncoder.encode(T, StandardCharsets.UTF_8) + "&segment=0";
        assertThat(untilNotDeferred(leader.adminUrl() + split).statusCode()).isEqualTo(200);
        Flux.interval(Duration.ofMillis(20)).filter(t -> brokers.layout(T).activeSegments().size() == 3)
                .blockFirst(Duration.ofSeconds(15));

        // The delegate's process dies: the leader revokes and feeds the brokers itself; they miss no change.
        replicas.remove(delegate.member()).closeNow();
        Flux.interval(Duration.ofMillis(20)).filter(t -> leader.metadataLog().listenerSources().stream()
                .anyMatch(s -> s.listener().equals("brokers") && s.revoked() && s.source().equals(leader.member())))
                .blockFirst(Duration.ofSeconds(15));
        assertThat(untilNotDeferred(leader.adminUrl() + split.replace("segment=0", "segment=2")).statusCode())
                .isEqualTo(200);
        Flux.interval(Duration.ofMillis(20)).filter(t -> brokers.layout(T).activeSegments().size() == 4)
                .blockFirst(Duration.ofSeconds(15));
        assertThat(leader.registry().scrape()).containsPattern(
                "verbatim_raft_listener_revocations_total\\{cluster=\"a\",listener=\"brokers\",member=\"c\\d\"} [1-9]");
    }

    private HttpResponse<String> call0(String method, String url, String body) {
        try {
            return call(method, url, ADMIN, body);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    private HttpResponse<String> untilNotDeferred(String url) {
        return Flux.interval(Duration.ZERO, Duration.ofMillis(50), Schedulers.boundedElastic()).map(t -> post(url))
                .filter(r -> r.statusCode() != 409 || !r.body().contains("DEFERRED")).blockFirst(Duration.ofSeconds(30));
    }

    private HttpResponse<String> post(String url) {
        try {
            return call("POST", url, ADMIN, null);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    private String call0(String url) {
        try {
            return call("POST", url, ADMIN, null).headers().firstValue("location").orElse("");
        } catch (Exception e) {
            return "";
        }
    }
}
