package io.verbatim.exchange;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.verbatim.exchange.proto.ExchangeRequest;
import io.verbatim.model.Join;
import io.verbatim.net.Authenticator;
import io.verbatim.net.NetClient;
import io.verbatim.net.NetServer;
import io.verbatim.net.NetworkLimits;
import io.verbatim.net.Token;
import io.verbatim.model.Layout;
import io.verbatim.model.Mutation;
import io.verbatim.model.Shape;
import io.verbatim.store.InMemoryLayoutStore;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.netty.ByteBufFlux;
import reactor.netty.http.client.HttpClient;

/** Three clusters exchanging over real HTTP on loopback. */
class HttpExchangeTest {
    /** b's token: what b presents, and what the tests call a's endpoint with as b. */
    private static final String TOKEN = "b-secret";
    private static final NetServer NET = new NetServer(new Authenticator(Map.of("a", Token.clear("a-secret"),
            "b", Token.clear("b-secret"), "c", Token.clear("c-secret"), "mallory", Token.clear("mallory-secret")),
            Optional.of(Token.clear("operator-secret")), Map.of(), true), NetworkLimits.defaults());
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
            Set<String> peers = new java.util.HashSet<>(initial.keySet());
            peers.remove(e.getKey());
            Controller c = new Controller(e.getKey(), peers, Caps.PULSAR_DEFAULTS, store, Schedulers.parallel());
            controllers.put(e.getKey(), c);
            servers.put(e.getKey(), new ExchangeServer(c, CONFIG, NET,
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

        assertThat(post(url, null, valid)).startsWith("401:").contains("bearer token");
        assertThat(post(url, "nope", valid)).startsWith("403:").contains("not valid");
        assertThat(post(url, "operator-secret", valid)).startsWith("403:")
                .contains("the admin may not call the exchange");
        assertThat(post(url, "c-secret", valid)).as("c's token, b's state").startsWith("403:")
                .contains("authenticated as c, claims to be 'b'");
        assertThat(post(url, TOKEN, new byte[] {(byte) 0xff, 0x01})).startsWith("400:")
                .contains("not an ExchangeRequest");
        assertThat(post(url, TOKEN, new byte[100_000])).startsWith("413:").contains("above the limit");
        byte[] stranger = ExchangeRequest.newBuilder().setCluster("mallory").build().toByteArray();
        assertThat(post(url, TOKEN, stranger)).startsWith("403:").contains("authenticated as b, claims to be 'mallory'");
        assertThat(post(url, "mallory-secret", stranger)).as("a known cluster outside the replication set")
                .startsWith("403:").contains("not in the replication set");
        assertThat(stores.get("a").get("t").block().epoch()).as("nothing changed").isZero();

        assertThat(post(url, TOKEN, valid)).startsWith("200:");
        assertThat(stores.get("a").get("t").block().activeSegments()).hasSize(2);
    }

    @Test
    void aFollowerRedirectsToTheControllerLeader() {
        start(Map.of("a", Layout.initial(1, 1, 0), "b", Layout.initial(1, 1, 0)));
        pushers.forEach(Pusher::dispose);
        String leader = servers.get("a").baseUrl();
        ExchangeServer follower = new ExchangeServer(controllers.get("a"), CONFIG, NET, () -> Optional.of(leader),
                Controller.BacklogSource.NONE).start(0);
        try {
            String answer = HttpClient.create().headers(h -> h.set(HttpHeaderNames.AUTHORIZATION, "Bearer " + TOKEN))
                    .post().uri(follower.baseUrl() + ExchangeServer.EXCHANGE_PATH)
                    .send(ByteBufFlux.fromInbound(Mono.just(new byte[0])))
                    .response((r, body) -> Mono.just(r.status().code() + " " + r.responseHeaders().get("Location")))
                    .blockLast(Duration.ofSeconds(5));
            assertThat(answer).isEqualTo("307 " + leader + ExchangeServer.EXCHANGE_PATH);
            // A pusher that only knows the follower's address still gets through.
            Layout split = Layout.initial(2, 1, 0);
            stores.get("b").compareAndSet("t", 0, Layout.of(1, split.nextSegmentId(), split.segments().values()))
                    .block();
            Pusher viaFollower = new Pusher(controllers.get("b"), new HttpTransport(Map.of("a", follower.baseUrl()),
                    client("b")), CONFIG, Schedulers.parallel());
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
        java.util.concurrent.atomic.AtomicInteger accepted = new java.util.concurrent.atomic.AtomicInteger();
        try (java.net.ServerSocket closing = new java.net.ServerSocket(0, 50,
                java.net.InetAddress.getLoopbackAddress())) {
            Thread acceptor = new Thread(() -> {
                while (!closing.isClosed()) {
                    try (java.net.Socket socket = closing.accept()) {
                        accepted.incrementAndGet();
                    } catch (java.io.IOException e) {
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
        ExchangeServer electing = new ExchangeServer(controllers.get("a"), CONFIG, Controller.BacklogSource.NONE, NET,
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

    /** A redirect is followed, but this cluster's token goes only to a scheme and host some peer is configured at. */
    @Test
    void aRedirectToAHostNoPeerIsAtCarriesNoToken() {
        start(Map.of("a", Layout.initial(1, 1, 0), "b", Layout.initial(1, 1, 0)));
        pushers.forEach(Pusher::dispose);
        // The same leader, named by a host the pushing cluster was not configured with.
        String elsewhere = servers.get("a").baseUrl().replace("127.0.0.1", "localhost");
        ExchangeServer follower = new ExchangeServer(controllers.get("a"), CONFIG, NET, () -> Optional.of(elsewhere),
                Controller.BacklogSource.NONE).start(0);
        try {
            HttpTransport transport = new HttpTransport(Map.of("a", follower.baseUrl()), client("b"));
            assertThatThrownBy(() -> controllers.get("b").stateFor("a").flatMap(r -> transport.send("a", r))
                    .block(Duration.ofSeconds(10)))
                    .isInstanceOfSatisfying(ExchangeException.class, e -> assertThat(e.status()).isEqualTo(401));
            assertThat(HttpTransport.origin("HTTPS://Example.net:8081/x")).isEqualTo("https://example.net");
        } finally {
            follower.stop();
        }
    }

    private static NetClient client(String cluster) {
        return new NetClient(cluster + "-secret", NetworkLimits.defaults());
    }

    private static String post(String url, String token, byte[] body) {
        return HttpClient.create().headers(h -> {
            if (token != null) {
                h.set(HttpHeaderNames.AUTHORIZATION, "Bearer " + token);
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
