package io.verbatim.net;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;

/** A port set up by {@link NetServer#apply}: idle and slow connections go, and so do those over the limit. */
class NetServerTest {
    private static final NetworkLimits LIMITS = NetworkLimits.defaults().withIdleTimeout(Duration.ofMillis(300))
            .withRequestTimeout(Duration.ofMillis(300)).withMaxConnectionsPerPort(3);
    private final NetServer net = new NetServer(new Authenticator("a", Map.of("a", SigningKey.fromSecret("a").verifying()), Optional.empty(), Map.of(), true),
            LIMITS);
    private final DisposableServer server = net.apply(HttpServer.create().host("127.0.0.1").port(0), "test")
            .route(r -> r.get("/", (req, res) -> res.sendString(Mono.just("ok")))).bindNow();
    private final List<Socket> sockets = new ArrayList<>();

    @AfterEach
    void stop() throws IOException {
        for (Socket s : sockets) {
            s.close();
        }
        server.disposeNow();
    }

    private Socket open() throws IOException {
        Socket s = new Socket("127.0.0.1", server.port());
        s.setSoTimeout(3000);
        sockets.add(s);
        return s;
    }

    /** How long until the server closes {@code s} (what it answered is skipped), in ms; -1 if not within 3 s. */
    private static long closedAfter(Socket s) throws IOException {
        long t0 = System.nanoTime();
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

    private static String get(Socket s) throws IOException {
        s.getOutputStream().write("GET / HTTP/1.1\r\nHost: x\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
        byte[] buf = new byte[1024];
        int n = s.getInputStream().read(buf);
        return new String(buf, 0, Math.max(n, 0), StandardCharsets.US_ASCII);
    }

    @Test
    void aConnectionThatSendsNothingIsClosedAfterTheIdleTimeout() throws Exception {
        long ms = closedAfter(open());
        assertThat(ms).isBetween(200L, 2000L);
    }

    @Test
    void aRequestThatNeverArrivesWholeIsAnsweredOrClosedAfterTheRequestTimeout() throws Exception {
        Socket s = open();
        s.getOutputStream().write("GET / HTTP/1.1\r\nHost: x\r\n".getBytes(StandardCharsets.US_ASCII)); // no end
        assertThat(closedAfter(s)).isBetween(0L, 2000L);
    }

    @Test
    void connectionsAboveThePortsLimitAreClosedAtOnceAndCounted() throws Exception {
        List<Socket> held = List.of(open(), open(), open());
        for (Socket s : held) {
            assertThat(get(s)).startsWith("HTTP/1.1 200");
        }
        Socket over = open();
        assertThat(closedAfter(over)).isBetween(0L, 200L);
        assertThat(net.ports().get(0).refused()).isEqualTo(1);
        held.get(0).close();
        Thread.sleep(100);
        assertThat(get(open())).as("room again once one went").startsWith("HTTP/1.1 200");
    }

    @Test
    void headersOverTheLimitOrMalformedGetA4xxWithoutAStackTrace() throws Exception {
        StringBuilder bomb = new StringBuilder("GET / HTTP/1.1\r\nHost: x\r\n");
        for (int i = 0; i < 1000; i++) {
            bomb.append("Bad Header ").append(i).append(": x\r\n");
        }
        bomb.append("\r\n");
        Socket s = open();
        s.getOutputStream().write(bomb.toString().getBytes(StandardCharsets.US_ASCII));
        byte[] buf = new byte[4096];
        int n = s.getInputStream().read(buf);
        String answer = new String(buf, 0, Math.max(n, 0), StandardCharsets.US_ASCII);
        assertThat(answer).matches("(?s)HTTP/1.1 4(31|00) .*").doesNotContain("Exception");
    }
}
