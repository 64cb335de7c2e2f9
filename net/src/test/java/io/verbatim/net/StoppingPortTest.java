package io.verbatim.net;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.net.SocketException;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;

/**
 * A port whose server was disposed while a client's keep-alive connection stays open: Reactor Netty closes
 * only the listening socket, so the connection still reaches the handlers of a node tearing down. What it
 * asks then is a 503, and so is a call failing while the port stops; a failure on a running port is still
 * Reactor Netty's 500 (and its ERROR line).
 */
class StoppingPortTest {
    private final NetServer net = new NetServer(new Authenticator("a", Map.of("a", SigningKey.fromSecret("a").verifying()), Optional.empty(),
            Map.of(), true), NetworkLimits.defaults());
    private final Sinks.One<Void> slow = Sinks.one();
    private final CountDownLatch slowStarted = new CountDownLatch(1);
    private final DisposableServer server = net.apply(HttpServer.create().host("127.0.0.1").port(0), "test")
            .route(r -> r.get("/ok", (req, res) -> res.sendString(Mono.just("ok")))
                    .get("/fail", (req, res) -> Mono.error(new IllegalStateException("a bug")))
                    .get("/slow", (req, res) -> slow.asMono().doOnSubscribe(s -> slowStarted.countDown())))
            .bindNow();

    @AfterEach
    void stop() {
        server.disposeNow();
    }

    private Socket open() throws IOException {
        Socket s = new Socket("127.0.0.1", server.port());
        s.setSoTimeout(5000);
        return s;
    }

    private static void send(Socket s, String path) throws IOException {
        s.getOutputStream().write(("GET " + path + " HTTP/1.1\r\nHost: x\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
        s.getOutputStream().flush();
    }

    /** One answer on {@code s}: its status line, headers and body (by its Content-Length). */
    private static String answer(Socket s) throws IOException {
        InputStream in = s.getInputStream();
        ByteArrayOutputStream head = new ByteArrayOutputStream();
        while (!head.toString(StandardCharsets.US_ASCII).endsWith("\r\n\r\n")) {
            int b = in.read();
            if (b < 0) {
                return head.toString(StandardCharsets.US_ASCII);
            }
            head.write(b);
        }
        String h = head.toString(StandardCharsets.US_ASCII);
        int length = 0;
        for (String line : h.split("\r\n")) {
            if (line.toLowerCase(Locale.ROOT).startsWith("content-length:")) {
                length = Integer.parseInt(line.substring(15).trim());
            }
        }
        byte[] body = in.readNBytes(length);
        return h + new String(body, StandardCharsets.UTF_8);
    }

    private static boolean closedByServer(Socket s) throws IOException {
        try {
            return s.getInputStream().read() < 0;
        } catch (SocketException reset) {
            return true;
        }
    }

    @Test
    void aHandlerFailingOnARunningPortIsStillA500() throws Exception {
        try (Socket s = open()) {
            send(s, "/fail");
            assertThat(answer(s)).startsWith("HTTP/1.1 500 ");
        }
        assertThat(net.ports().get(0).stopped()).isFalse();
    }

    @Test
    void aCallOnAKeepAliveConnectionAfterThePortStoppedIsA503AndTheConnectionCloses() throws Exception {
        try (Socket s = open()) {
            send(s, "/ok");
            assertThat(answer(s)).startsWith("HTTP/1.1 200 ").endsWith("ok");
            server.disposeNow();
            assertThat(net.ports().get(0).stopped()).isTrue();

            send(s, "/fail"); // the handler would fail: the node behind it is gone
            String answer = answer(s);
            assertThat(answer).startsWith("HTTP/1.1 503 ").contains("the test port is stopping")
                    .containsIgnoringCase("connection: close");
            assertThat(closedByServer(s)).isTrue();
        }
    }

    @Test
    void aCallFailingWhileItsPortStopsIsA503() throws Exception {
        try (Socket s = open()) {
            send(s, "/slow");
            assertThat(slowStarted.await(5, TimeUnit.SECONDS)).isTrue();
            server.disposeNow();
            slow.tryEmitError(new RejectedExecutionException("Scheduler unavailable"));
            assertThat(answer(s)).startsWith("HTTP/1.1 503 ").contains("the test port is stopping");
        }
    }

    @Test
    void aPortBoundAgainAnswersAgain() throws Exception {
        server.disposeNow();
        DisposableServer again = net.apply(HttpServer.create().host("127.0.0.1").port(0), "test")
                .route(r -> r.get("/ok", (req, res) -> res.sendString(Mono.just("ok")))).bindNow();
        try (Socket s = new Socket("127.0.0.1", again.port())) {
            s.setSoTimeout(5000);
            send(s, "/ok");
            assertThat(answer(s)).startsWith("HTTP/1.1 200 ").endsWith("ok");
        } finally {
            again.disposeNow();
        }
    }
}
