package io.verbatim.exchange;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.verbatim.exchange.proto.ExchangeRequest;
import io.verbatim.layoutstore.InMemoryLayoutStore;
import io.verbatim.model.Join;
import io.verbatim.model.Layout;
import io.verbatim.model.Mutation;
import io.verbatim.model.Shape;
import io.verbatim.net.NetClient;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.netty.ByteBufFlux;
import reactor.netty.DisposableServer;
import reactor.netty.http.client.HttpClient;
import reactor.netty.http.server.HttpServer;

/** Three clusters exchanging over real HTTP on loopback. */
class HttpExchangeTest {
    private static final ExchangeConfig CONFIG = ExchangeConfig.defaults().withAntiEntropyInterval(Duration.ofSeconds(1))
            .withRetry(Duration.ofMillis(50), Duration.ofSeconds(1), 0.5).withMaxBodyBytes(64 * 1024);

    private final Map<String, InMemoryLayoutStore> stores = new LinkedHashMap<>();
    private final Map<String, Controller> controllers = new LinkedHashMap<>();
    private final Map<String, ExchangeServer> servers = new LinkedHashMap<>();
    private final List<Pusher> pushers = new ArrayList<>();

    @AfterEach
    void stop() {
        pushers.forEach(Pusher::dispose);
        servers.values().forEach(ExchangeServer::stop);
    }

    private void start(Map<String, Layout> initial) {
        for (var e : initial.entrySet()) {
            InMemoryLayoutStore store = new InMemoryLayoutStore();
            store.create("t", e.getValue()).block();
            stores.put(e.getKey(), store);
            Set<String> peers = new HashSet<>(initial.keySet());
            peers.remove(e.getKey());
            Controller c = new Controller(e.getKey(), peers, Caps.PULSAR_DEFAULTS, store, Schedulers.parallel());
            controllers.put(e.getKey(), c);
            servers.put(e.getKey(), new ExchangeServer(c, CONFIG, TestKeys.net(e.getKey()),
                    (topic, remote) -> Map.of("0000-ffff-0", 0L)).start(0));
        }
        Map<String, String> urls = new HashMap<>();
        servers.forEach((name, server) -> urls.put(name, server.baseUrl()));
        for (Controller c : controllers.values()) {
            pushers.add(new Pusher(c, new HttpTransport(urls, client(c.cluster())), CONFIG, Schedulers.parallel())
                    .start());
        }
    }

    private void awaitShape(String cluster, Shape expected) {
        Layout reached = stores.get(cluster).watch("t").filter(l -> Shape.of(l).equals(expected)).next()
                .block(Duration.ofSeconds(20));
        assertThat(reached).as("%s converged", cluster).isNotNull();
    }

    @Test
    void layoutsThatEvolvedApartConvergeOverHttpInOnePass() throws Exception {
        Layout a = Layout.initial(3, 3, 0);
        Layout b = Layout.initial(4, 8, 0);
        Layout c = Layout.initial(1, 2, 0).apply(Mutation.split(0), 0, 0).layoutOrThrow();
        Shape join = Join.of(Shape.of(a), Shape.of(b), Shape.of(c));
        start(Map.of("a", a, "b", b, "c", c));
        for (String name : stores.keySet()) {
            awaitShape(name, join);
        }
        // One pass: each cluster only ever added boundaries and buckets; nothing was merged and split again.
        for (InMemoryLayoutStore store : stores.values()) {
            assertThat(store.get("t").block().segments().values()).noneMatch(s -> s.parentIds().size() > 1);
        }

        // One more acknowledged push from a to b: a then holds b's converged state, and has a success.
        Map<String, String> urls = new HashMap<>();
        servers.forEach((name, server) -> urls.put(name, server.baseUrl()));
        new Pusher(controllers.get("a"), new HttpTransport(urls, client("a")), CONFIG, Schedulers.parallel())
                .pushUntilAcknowledged("b").block(Duration.ofSeconds(10));
        JsonNode status = new ObjectMapper().readTree(get(servers.get("a").baseUrl() + ExchangeServer.STATUS_PATH));
        JsonNode remote = status.path("topics").path("t").path("remotes").path("b");
        assertThat(remote.path("divergedRanges").isArray()).isTrue();
        assertThat(remote.path("divergedRanges")).isEmpty();
        assertThat(remote.path("convergedRanges").size()).isEqualTo(join.cells().size());
        assertThat(remote.path("peerEpoch").asLong()).isEqualTo(stores.get("b").get("t").block().epoch());
        assertThat(remote.path("lastStateAgeMillis").asLong()).isGreaterThanOrEqualTo(0);
        assertThat(remote.path("replicationBacklog").path("0000-ffff-0").asLong()).isZero();
        assertThat(status.path("topics").path("t").path("capMismatches")).isEmpty();

        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        new ExchangeMetricsBinder(controllers.get("a")).bindTo(registry);
        assertThat(registry.get(ExchangeMetricsBinder.CALLS).tags("peer", "b", "outcome", "success").functionCounter()
                .count()).isPositive();
        assertThat(registry.get(ExchangeMetricsBinder.DIVERGED_RANGES).gauge().value()).isZero();
    }

    @Test
    void theEndpointRefusesBadCallsWithTheProblemNamedAndChangesNothing() {
        start(Map.of("a", Layout.initial(1, 1, 0), "b", Layout.initial(1, 1, 0)));
        pushers.forEach(Pusher::dispose);
        String url = servers.get("a").baseUrl() + ExchangeServer.EXCHANGE_PATH;
        Layout two = Layout.initial(2, 1, 0);
        Layout split = Layout.of(1, two.nextSegmentId(), two.segments().values()); // newer than what b pushed
        byte[] valid = ExchangeRequest.newBuilder().setCluster("b").addTopics(States.toProto(PeerState.of("b", "t",
                split, Set.of(), Caps.PULSAR_DEFAULTS))).build().toByteArray();

        String path = ExchangeServer.EXCHANGE_PATH;
        assertThat(post(url, null, valid)).startsWith("401:").contains("a cluster's signature");
        assertThat(post(url, "Bearer nope", valid)).startsWith("403:").contains("clusters sign their calls");
        assertThat(post(url, "Bearer b-secret", valid)).as("b's secret as a bearer token").startsWith("403:")
                .contains("clusters sign their calls");
        assertThat(post(url, "Bearer " + TestKeys.ADMIN, valid)).startsWith("403:")
                .contains("the admin may not call the exchange");
        assertThat(post(url, TestKeys.signed("b", "c", path), valid)).as("b's call to c, replayed at a")
                .startsWith("403:").contains("signed for cluster c, not for a");
        assertThat(post(url, TestKeys.signed("c", "a", path), valid)).as("c's signature, b's state").startsWith("403:")
                .contains("authenticated as c, claims to be 'b'");
        assertThat(post(url, TestKeys.signed("b", "a", path), new byte[] {(byte) 0xff, 0x01})).startsWith("400:")
                .contains("not an ExchangeRequest");
        assertThat(post(url, TestKeys.signed("b", "a", path), new byte[100_000])).startsWith("413:").contains("above the limit");
        byte[] stranger = ExchangeRequest.newBuilder().setCluster("mallory").build().toByteArray();
        assertThat(post(url, TestKeys.signed("b", "a", path), stranger)).startsWith("403:")
                .contains("authenticated as b, claims to be 'mallory'");
        assertThat(post(url, TestKeys.signed("mallory", "a", path), stranger)).as("a known cluster outside the replication set")
                .startsWith("403:").contains("not in the replication set");
        assertThat(stores.get("a").get("t").block().epoch()).as("nothing changed").isZero();

        String once = TestKeys.signed("b", "a", path);
        assertThat(post(url, once, valid)).startsWith("200:");
        assertThat(stores.get("a").get("t").block().activeSegments()).hasSize(2);
        assertThat(post(url, once, valid)).as("the same call again").startsWith("403:")
                .contains("replays a signature of cluster b");
    }

    @Test
    void aFollowerRedirectsToTheControllerLeaderWhichTheCallerFollowsWhenItIsConfiguredThere() {
        start(Map.of("a", Layout.initial(1, 1, 0), "b", Layout.initial(1, 1, 0)));
        pushers.forEach(Pusher::dispose);
        String leader = servers.get("a").baseUrl();
        ExchangeServer follower = new ExchangeServer(controllers.get("a"), CONFIG, TestKeys.net("a"),
                () -> Optional.of(leader), Controller.BacklogSource.NONE).start(0);
        try {
            String target = follower.baseUrl() + ExchangeServer.EXCHANGE_PATH;
            String answer = HttpClient.create().headers(h -> h.set(HttpHeaderNames.AUTHORIZATION,
                            TestKeys.signed("b", "a", ExchangeServer.EXCHANGE_PATH)))
                    .post().uri(target).send(ByteBufFlux.fromInbound(Mono.just(new byte[0])))
                    .response((r, body) -> Mono.just(r.status().code() + " " + r.responseHeaders().get("Location")))
                    .blockLast(Duration.ofSeconds(5));
            assertThat(answer).isEqualTo("307 " + leader + ExchangeServer.EXCHANGE_PATH);
            // A pusher configured with both replicas, the follower first, gets through.
            Layout split = Layout.initial(2, 1, 0);
            stores.get("b").compareAndSet("t", 0, Layout.of(1, split.nextSegmentId(), split.segments().values()))
                    .block();
            Pusher viaFollower = new Pusher(controllers.get("b"), HttpTransport.toReplicas(Map.of("a",
                    List.of(follower.baseUrl(), leader)), TestKeys.client("b")), CONFIG, Schedulers.parallel());
            viaFollower.pushUntilAcknowledged("a").block(Duration.ofSeconds(10));
            assertThat(stores.get("a").get("t").block().activeSegments()).hasSize(2);
        } finally {
            follower.stop();
        }
    }

    /**
     * To a peer whose controller replicas run as processes of their own: a replica that cannot be reached is
     * passed over within the call, and the one that answered is tried first next time.
     */
    @Test
    void anUnreachableReplicaIsPassedOverAndTheOneThatAnsweredIsTriedFirst() throws Exception {
        start(Map.of("a", Layout.initial(1, 1, 0), "b", Layout.initial(1, 1, 0)));
        pushers.forEach(Pusher::dispose);
        // A replica whose process is going down: it takes the connection and closes it at once.
        AtomicInteger accepted = new AtomicInteger();
        try (ServerSocket closing = new ServerSocket(0, 50,
                InetAddress.getLoopbackAddress())) {
            Thread acceptor = new Thread(() -> {
                while (!closing.isClosed()) {
                    try (Socket socket = closing.accept()) {
                        accepted.incrementAndGet();
                    } catch (IOException e) {
                        return;
                    }
                }
            });
            acceptor.setDaemon(true);
            acceptor.start();
            String down = "http://127.0.0.1:" + closing.getLocalPort();
            HttpTransport transport = HttpTransport.toReplicas(Map.of("a", List.of(down, servers.get("a").baseUrl())),
                    client("b"));
            ExchangeRequest request = controllers.get("b").stateFor("a").block(Duration.ofSeconds(5));
            assertThat(transport.send("a", request).block(Duration.ofSeconds(10)).getCluster()).isEqualTo("a");
            assertThat(accepted).hasValue(1);
            assertThat(transport.send("a", request).block(Duration.ofSeconds(10)).getCluster()).isEqualTo("a");
            assertThat(accepted).as("the replica that answered is tried first").hasValue(1);

            // Every replica unreachable: the call fails (the pusher retries), with no status of an answer.
            HttpTransport nowhere = HttpTransport.toReplicas(Map.of("a", List.of(down, down)), client("b"));
            assertThatThrownBy(() -> nowhere.send("a", request).block(Duration.ofSeconds(10)))
                    .isNotInstanceOf(ExchangeException.class);
            assertThat(accepted).hasValue(3);
        }
        assertThatThrownBy(() -> HttpTransport.toReplicas(Map.of("a", List.of()), client("b")))
                .hasMessageContaining("no URL for peer 'a'");
    }

    /** While no replica leads (an election), a replica answers 503, and the caller's call fails to be retried. */
    @Test
    void aReplicaThatKnowsNoLeaderAnswers503() {
        start(Map.of("a", Layout.initial(1, 1, 0), "b", Layout.initial(1, 1, 0)));
        pushers.forEach(Pusher::dispose);
        ExchangeServer electing = new ExchangeServer(controllers.get("a"), CONFIG, Controller.BacklogSource.NONE, TestKeys.net("a"),
                () -> ControllerLeader.unknown("no leader elected in term 3")).start(0);
        try {
            HttpTransport transport = new HttpTransport(Map.of("a", electing.baseUrl()), client("b"));
            assertThatThrownBy(() -> controllers.get("b").stateFor("a").flatMap(r -> transport.send("a", r))
                    .block(Duration.ofSeconds(10)))
                    .isInstanceOfSatisfying(ExchangeException.class, e -> {
                        assertThat(e.status()).isEqualTo(503);
                        assertThat(e.getMessage()).contains("no leader elected in term 3");
                    });
        } finally {
            electing.stop();
        }
    }

    /**
     * A redirect is followed only to one of the peer's configured addresses: one to the same host on another
     * port, or to another name of the same host, fails naming where it pointed, and nothing is sent there.
     */
    @Test
    void aRedirectToAnAddressThePeerIsNotConfiguredAtIsNotFollowed() {
        start(Map.of("a", Layout.initial(1, 1, 0), "b", Layout.initial(1, 1, 0)));
        pushers.forEach(Pusher::dispose);
        List<String> heard = new CopyOnWriteArrayList<>();
        DisposableServer stranger = HttpServer.create().host("127.0.0.1")
                .port(0).handle((req, res) -> {
                    heard.add(req.method() + " " + req.uri() + " " + req.requestHeaders().get("Authorization"));
                    return res.status(200).send();
                }).bindNow();
        String sameHostOtherPort = "http://127.0.0.1:" + stranger.port();
        String otherName = servers.get("a").baseUrl().replace("127.0.0.1", "localhost");
        for (String elsewhere : List.of(sameHostOtherPort, otherName)) {
            ExchangeServer follower = new ExchangeServer(controllers.get("a"), CONFIG, TestKeys.net("a"),
                    () -> Optional.of(elsewhere), Controller.BacklogSource.NONE).start(0);
            try {
                HttpTransport transport = new HttpTransport(Map.of("a", follower.baseUrl()), TestKeys.client("b"));
                assertThatThrownBy(() -> controllers.get("b").stateFor("a").flatMap(r -> transport.send("a", r))
                        .block(Duration.ofSeconds(10)))
                        .isInstanceOfSatisfying(ExchangeException.class, e -> assertThat(e.getMessage())
                                .contains("redirected the call to '" + elsewhere + ExchangeServer.EXCHANGE_PATH + "'")
                                .contains("not one of its configured addresses"));
            } finally {
                follower.stop();
            }
        }
        stranger.disposeNow();
        assertThat(heard).as("nothing reached the address the redirect named").isEmpty();
    }

    private static NetClient client(String cluster) {
        return TestKeys.client(cluster);
    }

    /** @param authorization the whole Authorization header, or null */
    private static String post(String url, String authorization, byte[] body) {
        return HttpClient.create().headers(h -> {
            if (authorization != null) {
                h.set(HttpHeaderNames.AUTHORIZATION, authorization);
            }
        }).post().uri(url).send(ByteBufFlux.fromInbound(Mono.just(body)))
                .responseSingle((r, content) -> content.asString(StandardCharsets.UTF_8).defaultIfEmpty("")
                        .map(text -> r.status().code() + ": " + text))
                .block(Duration.ofSeconds(5));
    }

    private static String get(String url) {
        return HttpClient.create().get().uri(url).responseContent().aggregate().asString().block(Duration.ofSeconds(5));
    }
}
