package io.verbatim.net;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.event.Level;
import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;

/**
 * A port set up by {@link NetServer#apply}, in real time (short limits): a request must arrive whole within the
 * request timeout of its first byte, on an authenticated keep-alive connection too, and a stalled one is
 * answered 408 with one line at WARN, never an ERROR.
 */
class NetServerTest {
    private static final NetworkLimits LIMITS = NetworkLimits.defaults().withIdleTimeout(Duration.ofSeconds(30))
            .withRequestTimeout(Duration.ofMillis(500)).withFirstRequestTimeout(Duration.ofMillis(300));
    private static final String TOKEN = "a-secret";
    private final NetServer net = new NetServer(new Authenticator(Map.of("a", Token.clear(TOKEN)), Optional.empty(),
            Map.of(), true), LIMITS);
    private final DisposableServer server = net.apply(HttpServer.create().host("127.0.0.1").port(0), "test")
            .route(r -> r.get("/", net.guard(Role.BROKER, "the test endpoint", (req, res) -> res.sendString(Mono.just("ok"))))
                    .post("/body", net.guard(Role.BROKER, "the test endpoint", (req, res) -> Bodies.read(req, 1000)
                            .flatMap(body -> res.sendString(Mono.just(body.length + " bytes")).then()))))
            .bindNow();
    private final Peers peers = new Peers(server.port());

    @BeforeEach
    void clearLogs() {
        CapturedLogs.clear();
    }

    @AfterEach
    void stop() throws IOException {
        peers.close();
        server.disposeNow();
    }

    /** How long until the server closes {@code s} (what it answered is skipped), in ms; -1 if not within 5 s. */
    private static long closedAfter(Socket s, long t0) throws IOException {
        InputStream in = s.getInputStream();
        try {
            while (in.read() >= 0) {
                // skip what the server answers
            }
        } catch (SocketTimeoutException e) {
            return -1;
        } catch (IOException reset) {
            // closed
        }
        return (System.nanoTime() - t0) / 1_000_000;
    }

    /** An authenticated keep-alive connection, one call made. */
    private Socket authenticated() throws IOException {
        Socket s = peers.open(1);
        Peers.get(s, "/", TOKEN);
        assertThat(Peers.answer(s)).startsWith("HTTP/1.1 200 ").endsWith("ok");
        return s;
    }

    @Test
    void aConnectionThatSendsNothingIsClosedAfterTheFirstRequestTimeout() throws Exception {
        long t0 = System.nanoTime();
        Socket s = peers.open(1);
        assertThat(closedAfter(s, t0)).isBetween(250L, 3000L);
    }

    @Test
    void aTrickledRequestOnAnAuthenticatedConnectionIsCutAtTheRequestTimeoutOfItsFirstByte() throws Exception {
        Socket s = authenticated();
        Thread.sleep(600); // longer than both timeouts: an authenticated connection waits for its idle timeout
        long t0 = System.nanoTime();
        Peers.send(s, "GET / HTTP/1.1\r\n");
        Thread trickle = new Thread(() -> {
            try {
                for (int i = 0; i < 50; i++) {
                    Thread.sleep(50);
                    Peers.send(s, "X-" + i + ": a\r\n");
                }
            } catch (IOException | InterruptedException closed) {
                // cut, as it should be
            }
        });
        trickle.start();
        String answer = Peers.answer(s);
        long ms = (System.nanoTime() - t0) / 1_000_000;
        trickle.interrupt();
        assertThat(answer).startsWith("HTTP/1.1 408 ");
        assertThat(ms).as("cut at 500 ms, not at the idle timeout (30 s)").isBetween(450L, 3000L);
        assertThat(net.ports().get(0).refused(Refusal.REQUEST_TIMEOUT)).isEqualTo(1);
    }

    @Test
    void aStalledBodyIsAnswered408WithOneWarningAndNoErrorOrTrace() throws Exception {
        Socket s = authenticated();
        long t0 = System.nanoTime();
        Peers.send(s, "POST /body HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + TOKEN
                + "\r\nContent-Length: 100\r\n\r\n0123456789");
        String answer = Peers.answer(s);
        assertThat(answer).startsWith("HTTP/1.1 408 ").containsIgnoringCase("connection: close");
        assertThat(closedAfter(s, t0)).isBetween(450L, 3000L);
        Thread.sleep(100); // what the handler does once its connection closed
        assertThat(CapturedLogs.lines(l -> l.level() == Level.ERROR || l.trace() != null)).isEmpty();
        assertThat(CapturedLogs.lines(l -> l.level() == Level.WARN)).singleElement()
                .satisfies(l -> assertThat(l.message()).contains("network.requestTimeout (500ms)"));
    }

    @Test
    void aWholeBodyIsRead() throws Exception {
        Socket s = authenticated();
        Peers.send(s, "POST /body HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + TOKEN
                + "\r\nContent-Length: 10\r\n\r\n0123456789");
        assertThat(Peers.answer(s)).startsWith("HTTP/1.1 200 ").endsWith("10 bytes");
    }

    @Test
    void headersOverTheLimitOrMalformedGetA4xxWithoutAStackTrace() throws Exception {
        StringBuilder bomb = new StringBuilder("GET / HTTP/1.1\r\nHost: x\r\n");
        for (int i = 0; i < 1000; i++) {
            bomb.append("Bad Header ").append(i).append(": x\r\n");
        }
        bomb.append("\r\n");
        Socket s = peers.open(1);
        s.getOutputStream().write(bomb.toString().getBytes(StandardCharsets.US_ASCII));
        byte[] buf = new byte[4096];
        int n = s.getInputStream().read(buf);
        String answer = new String(buf, 0, Math.max(n, 0), StandardCharsets.US_ASCII);
        assertThat(answer).matches("(?s)HTTP/1.1 4(31|00) .*").doesNotContain("Exception");
        assertThat(CapturedLogs.lines(l -> l.trace() != null)).isEmpty();
    }
}
