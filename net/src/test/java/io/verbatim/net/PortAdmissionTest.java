package io.verbatim.net;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.Socket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.event.Level;
import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;
import reactor.test.scheduler.VirtualTimeScheduler;

/**
 * A port's connections over real sockets, its deadlines in virtual time: connections that never authenticate
 * hold a port's room for a short while and only until someone needs it; an authenticated peer is never
 * starved; every refusal is counted and logged at most once a minute per kind.
 */
class PortAdmissionTest {
    /** 4 connections per port, 2 not yet authenticated per address, 5 s to authenticate; the idle timeout out of the way. */
    private static final NetworkLimits LIMITS = NetworkLimits.defaults().withIdleTimeout(Duration.ofHours(1))
            .withFirstRequestTimeout(Duration.ofSeconds(5)).withMaxConnectionsPerPort(4).withMaxConnectionsPerAddress(2);
    private static final String TOKEN = "a-secret";
    private static final Duration SHORT = Duration.ofMillis(200);

    private final VirtualTimeScheduler time = VirtualTimeScheduler.create();
    private final NetServer net = new NetServer(new Authenticator("b", Map.of(), Optional.of(Token.clear(TOKEN)),
            Map.of(), true), LIMITS, Optional.empty(), time);
    private final DisposableServer server = net.apply(HttpServer.create().host("127.0.0.1").port(0), "test")
            .route(r -> r.get("/", net.guard(Role.ADMIN, "the test endpoint", (req, res) -> res.sendString(Mono.just("ok"))))
                    .get("/status", net.guard(Role.STATUS, "the status", (req, res) -> res.sendString(Mono.just("up")))))
            .bindNow();
    private final Peers peers = new Peers(server.port());
    private final NetServer.Port port = net.ports().get(0);

    @BeforeEach
    void clearLogs() {
        CapturedLogs.clear();
    }

    @AfterEach
    void stop() throws Exception {
        peers.close();
        server.disposeNow();
        time.dispose();
    }

    private Socket openAndAwait(int host) throws Exception {
        int before = port.open() + (int) port.refused(Refusal.EVICTED);
        Socket s = peers.open(host);
        assertThat(Peers.await(() -> port.open() + port.refused(Refusal.EVICTED) > before)).isTrue();
        return s;
    }

    private static List<CapturedLogs.Line> warnings(Refusal reason) {
        return CapturedLogs.lines(l -> l.level() == Level.WARN && l.message().contains("reason=" + reason.tag() + "}"));
    }

    @Test
    void aConnectionThatNeverSendsARequestIsClosedAtTheFirstRequestTimeout() throws Exception {
        Socket idle = openAndAwait(2);
        time.advanceTimeBy(Duration.ofMillis(4999));
        assertThat(Peers.closed(idle, SHORT)).isFalse();
        time.advanceTimeBy(Duration.ofMillis(1));
        assertThat(Peers.closed(idle, Duration.ofSeconds(5))).isTrue();
        assertThat(port.refused(Refusal.FIRST_REQUEST_TIMEOUT)).isEqualTo(1);
        assertThat(Peers.await(() -> port.open() == 0)).isTrue();
    }

    @Test
    void headersTrickledByteByByteAreCutAtTheFirstRequestDeadlineWithA408() throws Exception {
        Socket s = openAndAwait(2);
        Peers.send(s, "GET / HTTP/1.1\r\nHost: x\r\nX-Slow: ");
        for (int i = 0; i < 9; i++) {
            Peers.send(s, "a");
            time.advanceTimeBy(Duration.ofMillis(500));
        }
        assertThat(Peers.closed(s, SHORT)).as("4.5 s of a trickle").isFalse();
        time.advanceTimeBy(Duration.ofMillis(500));
        assertThat(Peers.answer(s)).startsWith("HTTP/1.1 408 ").containsIgnoringCase("connection: close");
        assertThat(Peers.closed(s, Duration.ofSeconds(5))).isTrue();
        assertThat(port.refused(Refusal.FIRST_REQUEST_TIMEOUT)).isEqualTo(1);
    }

    @Test
    void anAuthenticatedConnectionOutlivesTheFirstRequestTimeout() throws Exception {
        Socket peer = openAndAwait(1);
        Peers.get(peer, "/", TOKEN);
        assertThat(Peers.answer(peer)).startsWith("HTTP/1.1 200 ").endsWith("ok");
        assertThat(Peers.await(() -> port.unauthenticated() == 0)).isTrue();
        time.advanceTimeBy(Duration.ofMinutes(10));
        assertThat(Peers.closed(peer, SHORT)).isFalse();
        Peers.get(peer, "/", TOKEN);
        assertThat(Peers.answer(peer)).startsWith("HTTP/1.1 200 ");
    }

    @Test
    void anAddressHoldsAtMostItsShareOfUnauthenticatedConnectionsAndOneMoreIsRefusedAtOnce() throws Exception {
        openAndAwait(2);
        openAndAwait(2);
        List<Socket> refused = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            refused.add(peers.open(2));
        }
        for (Socket s : refused) {
            assertThat(Peers.closed(s, Duration.ofSeconds(5))).isTrue();
        }
        assertThat(port.refused(Refusal.ADDRESS_FULL)).isEqualTo(5);
        assertThat(port.open()).isEqualTo(2);
        Socket other = openAndAwait(3);
        assertThat(Peers.closed(other, SHORT)).as("another address has its own share").isFalse();
    }

    @Test
    void aPeerIsServedOnAPortFullOfConnectionsThatNeverAuthenticateAndTheOldestMakesRoom() throws Exception {
        Socket oldest = openAndAwait(2);
        openAndAwait(2);
        openAndAwait(3);
        openAndAwait(3);
        assertThat(port.open()).isEqualTo(4);
        Socket peer = peers.open(1);
        Peers.get(peer, "/", TOKEN);
        assertThat(Peers.answer(peer)).startsWith("HTTP/1.1 200 ").endsWith("ok");
        assertThat(Peers.closed(oldest, Duration.ofSeconds(5))).isTrue();
        assertThat(port.refused(Refusal.EVICTED)).isEqualTo(1);
        assertThat(port.refused(Refusal.PORT_FULL)).isZero();
    }

    @Test
    void aNewConnectionIsRefusedForRoomOnlyWhenEveryConnectionAuthenticated() throws Exception {
        List<Socket> authenticated = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            Socket s = peers.open(1);
            Peers.get(s, "/", TOKEN);
            assertThat(Peers.answer(s)).startsWith("HTTP/1.1 200 ");
            authenticated.add(s);
        }
        assertThat(Peers.await(() -> port.unauthenticated() == 0)).isTrue();
        Socket late = peers.open(4);
        assertThat(Peers.closed(late, Duration.ofSeconds(5))).isTrue();
        assertThat(port.refused(Refusal.PORT_FULL)).isEqualTo(1);
        for (Socket s : authenticated) {
            assertThat(Peers.closed(s, Duration.ofMillis(50))).as("never closed for room").isFalse();
        }
    }

    @Test
    void anAnonymousStatusCallDoesNotAuthenticateItsConnection() throws Exception {
        Socket status = openAndAwait(2);
        Peers.get(status, "/status", null);
        assertThat(Peers.answer(status)).startsWith("HTTP/1.1 200 ").endsWith("up");
        assertThat(port.unauthenticated()).isEqualTo(1);
        // the answer's end passes the guard on the event loop, maybe after its bytes reached us
        assertThat(Peers.await(() -> port.unauthenticatedConnections().get(0).waiting())).isTrue();
        time.advanceTimeBy(Duration.ofSeconds(5));
        assertThat(Peers.closed(status, Duration.ofSeconds(5))).as("its next call within the first-request timeout")
                .isTrue();
        assertThat(port.refused(Refusal.FIRST_REQUEST_TIMEOUT)).isEqualTo(1);
    }

    @Test
    void eachRefusalKindLogsAtMostOneLineAMinuteThenOneWithTheCount() throws Exception {
        openAndAwait(2);
        openAndAwait(2);
        for (int i = 0; i < 20; i++) {
            assertThat(Peers.closed(peers.open(2), Duration.ofSeconds(5))).isTrue();
        }
        assertThat(Peers.await(() -> port.refused(Refusal.ADDRESS_FULL) == 20)).isTrue();
        assertThat(warnings(Refusal.ADDRESS_FULL)).singleElement().satisfies(l -> assertThat(l.message())
                .startsWith("test: a connection from 127.0.0.2 refused: the address holds network.maxConnectionsPerAddress (2)"));
        time.advanceTimeBy(Duration.ofSeconds(1)); // the two held ones are closed at their deadline: another kind
        time.advanceTimeBy(Duration.ofSeconds(4));
        assertThat(Peers.await(() -> port.refused(Refusal.FIRST_REQUEST_TIMEOUT) == 2)).isTrue();
        assertThat(warnings(Refusal.FIRST_REQUEST_TIMEOUT)).hasSize(1);
        // counted as refused when the deadline closes them, counted out of the port once their channels closed: a
        // new connection counted before they are gone would leave the port's count where it was
        assertThat(Peers.await(() -> port.open() == 0)).isTrue();
        time.advanceTimeBy(Duration.ofSeconds(55));
        openAndAwait(2);
        openAndAwait(2);
        assertThat(Peers.closed(peers.open(2), Duration.ofSeconds(5))).isTrue();
        assertThat(Peers.await(() -> warnings(Refusal.ADDRESS_FULL).size() == 2)).isTrue();
        assertThat(warnings(Refusal.ADDRESS_FULL).get(1).message())
                .startsWith("test: 20 connections since the last such line (the last from 127.0.0.2) refused");
        assertThat(CapturedLogs.lines(l -> l.trace() != null || l.level() == Level.ERROR)).isEmpty();
    }
}
