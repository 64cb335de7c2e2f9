package io.verbatim.net;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import org.assertj.core.api.Assertions;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.netty.DisposableServer;
import reactor.netty.http.client.HttpClient;
import reactor.netty.http.server.HttpServer;

/**
 * What a node's client sends its peers, over real sockets: a signature of each request for the peer it
 * calls (an HTTP call, a WebSocket's handshake, a followed redirect each with its own), and nothing at all
 * to an address a redirect names outside the peer's configured ones.
 */
class NetClientTest {
    private static final SigningKey EAST = SigningKey.fromSecret("east-secret");
    private final NetClient client = NetClient.of("us-east", EAST, NetworkLimits.defaults(), Optional.empty(),
            Schedulers.immediate());
    /** Every request a server of the test saw: "server method target authorization". */
    private final List<String> seen = new CopyOnWriteArrayList<>();
    private final DisposableServer follower;
    private final DisposableServer leader;
    private final DisposableServer stranger;

    NetClientTest() {
        leader = westReplica("leader", 0);
        stranger = HttpServer.create().host("127.0.0.1").port(0).handle((req, res) -> {
            seen.add("stranger " + req.method() + " " + req.uri() + " " + req.requestHeaders().get("Authorization"));
            return res.sendString(Mono.just("stolen"));
        }).bindNow();
        follower = westReplica("follower", leader.port());
    }

    /** A replica of eu-west: answers who called; one that does not lead redirects to the leader or elsewhere. */
    private DisposableServer westReplica(String name, int leaderPort) {
        NetServer net = new NetServer(new Authenticator("eu-west", Map.of("us-east", EAST.verifying()), Optional.empty(),
                Map.of(), true), NetworkLimits.defaults());
        return net.apply(HttpServer.create().host("127.0.0.1").port(0), name).route(r -> r
                .post("/call", net.guard(Role.BROKER, "the call", (req, res) -> {
                    seen.add(name + " " + req.method() + " " + req.uri() + " " + req.requestHeaders().get("Authorization"));
                    // past the guard: the signature verified, for this cluster and request, once
                    return res.sendString(Mono.just(name + " took cluster " + SignedCall.parse(
                            req.requestHeaders().get("Authorization")).claims().caller()));
                }))
                .post("/to-leader", (req, res) -> {
                    seen.add(name + " " + req.method() + " " + req.uri() + " " + req.requestHeaders().get("Authorization"));
                    return res.status(307).header("Location", "http://127.0.0.1:" + leaderPort + "/call?from=" + name).send();
                })
                .post("/elsewhere", (req, res) -> res.status(307)
                        .header("Location", "http://127.0.0.1:" + stranger.port() + "/call").send())
                .get("/ws", net.guard(Role.BROKER, "the stream", (req, res) -> {
                    seen.add(name + " " + req.method() + " " + req.uri() + " " + req.requestHeaders().get("Authorization"));
                    return res.sendWebsocket((in, out) -> out.sendString(Mono.just("streamed")).then());
                })))
                .bindNow();
    }

    @AfterEach
    void stop() {
        follower.disposeNow();
        leader.disposeNow();
        stranger.disposeNow();
    }

    private String url(DisposableServer s, String path) {
        return "http://127.0.0.1:" + s.port() + path;
    }

    private HttpClient toWest() {
        return client.signing(HttpClient.create(), "eu-west", List.of(url(follower, ""), url(leader, "")));
    }

    private String post(HttpClient http, String url) {
        return http.post().uri(url).send((req, out) -> out.sendString(Mono.just("body")))
                .responseSingle((res, body) -> body.asString().defaultIfEmpty("").map(b -> res.status().code() + " "
                        + Optional.ofNullable(res.responseHeaders().get("Location")).orElse("") + " " + b))
                .block(Duration.ofSeconds(10));
    }

    @Test
    void eachCallCarriesASignatureForThePeerOfThatVeryRequest() {
        assertThat(post(toWest(), url(leader, "/call?topic=t"))).isEqualTo("200  leader took cluster us-east");
        String header = seen.get(0).substring(seen.get(0).indexOf("Verbatim "));
        CallClaims claims = SignedCall.parse(header).claims();
        assertThat(claims.caller()).isEqualTo("us-east");
        assertThat(claims.callee()).isEqualTo("eu-west");
        assertThat(claims.method()).isEqualTo("POST");
        assertThat(claims.target()).isEqualTo("/call?topic=t");
        assertThat(header).doesNotContain("east-secret");
    }

    @Test
    void aWebSocketHandshakeIsSignedToo() {
        String got = client.signing(HttpClient.create(), "eu-west").websocket().uri(url(leader, "/ws?topic=a%2Fb"))
                .handle((in, out) -> in.receive().asString()).blockFirst(Duration.ofSeconds(10));
        assertThat(got).isEqualTo("streamed");
        assertThat(seen).singleElement().asString().startsWith("leader GET /ws?topic=a%2Fb Verbatim ");
    }

    @Test
    void aRedirectToAConfiguredAddressOfThePeerIsFollowedWithAFreshSignature() {
        assertThat(post(toWest(), url(follower, "/to-leader"))).isEqualTo("200  leader took cluster us-east");
        assertThat(seen).hasSize(2);
        CallClaims first = SignedCall.parse(seen.get(0).substring(seen.get(0).indexOf("Verbatim "))).claims();
        CallClaims second = SignedCall.parse(seen.get(1).substring(seen.get(1).indexOf("Verbatim "))).claims();
        assertThat(first.target()).isEqualTo("/to-leader");
        assertThat(second.target()).isEqualTo("/call?from=follower");
        assertThat(second.nonce()).isNotEqualTo(first.nonce());
    }

    @Test
    void aRedirectElsewhereIsNotFollowedAndNothingReachesWhereItPoints() {
        String answer = post(toWest(), url(follower, "/elsewhere"));
        assertThat(answer).startsWith("307 http://127.0.0.1:" + stranger.port() + "/call");
        assertThat(seen).as("the stranger on the same host, another port, heard nothing").isEmpty();
        // nor does a client that follows no redirect at all
        assertThat(post(client.signing(HttpClient.create(), "eu-west"), url(follower, "/to-leader"))).startsWith("307 ");
        assertThat(seen).singleElement().asString().startsWith("follower POST /to-leader ");
    }

    @Test
    void anUnsignedClientCannotCallAPeer() {
        NetClient unsigned = NetClient.unsigned(NetworkLimits.defaults(), Optional.empty());
        Assertions.assertThatThrownBy(() -> unsigned.signing(HttpClient.create(), "eu-west"))
                .hasMessageContaining("signs nothing");
        assertThat(post(unsigned.apply(HttpClient.create()), url(leader, "/call"))).startsWith("401 ");
    }
}
