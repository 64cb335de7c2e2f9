package io.verbatim.exchange;

import static org.assertj.core.api.Assertions.assertThat;

import io.verbatim.layoutstore.InMemoryLayoutStore;
import io.verbatim.model.Layout;
import io.verbatim.net.Authenticator;
import io.verbatim.net.CapturedLogs;
import io.verbatim.net.NetServer;
import io.verbatim.net.NetworkLimits;
import io.verbatim.net.Token;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.slf4j.event.Level;
import reactor.core.scheduler.Schedulers;

/** The exchange endpoint's body limit holds while the body streams: an oversized body is never read whole. */
class ExchangeLimitsTest {
    private static final int LIMIT = 64 * 1024;
    private final InMemoryLayoutStore store = new InMemoryLayoutStore();
    private final ExchangeServer server;

    ExchangeLimitsTest() {
        store.create("t", Layout.initial(1, 1, 0)).block();
        Controller c = new Controller("a", Set.of("b"), Caps.PULSAR_DEFAULTS, store, Schedulers.parallel());
        server = new ExchangeServer(c, ExchangeConfig.defaults().withMaxBodyBytes(LIMIT), TestKeys.net("a"),
                Controller.BacklogSource.NONE).start(0);
    }

    @AfterEach
    void stop() {
        server.stop();
    }

    @Test
    void aGibibyteChunkedBodyIsAnswered413OnceTheLimitIsPassedAndTheConnectionClosed() throws Exception {
        URI base = URI.create(server.baseUrl());
        long offered = 1L << 30;
        long written = 0;
        try (Socket socket = new Socket(base.getHost(), base.getPort())) {
            socket.setSoTimeout(10_000);
            InputStream in = socket.getInputStream();
            CompletableFuture<String> answer = CompletableFuture.supplyAsync(() -> readAll(in));
            OutputStream out = socket.getOutputStream();
            out.write(("POST " + ExchangeServer.EXCHANGE_PATH + " HTTP/1.1\r\nHost: x\r\nAuthorization: "
                    + TestKeys.signed("b", "a", ExchangeServer.EXCHANGE_PATH) + "\r\n"
                    + "Content-Type: application/x-protobuf\r\nTransfer-Encoding: chunked\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            byte[] chunk = new byte[64 * 1024];
            byte[] header = (Integer.toHexString(chunk.length) + "\r\n").getBytes(StandardCharsets.US_ASCII);
            try {
                while (written < offered && !answer.isDone()) {
                    out.write(header);
                    out.write(chunk);
                    out.write('\r');
                    out.write('\n');
                    written += chunk.length;
                }
            } catch (IOException closed) {
                // the server closed the connection after its answer: what we expect
            }
            assertThat(answer.get(10, TimeUnit.SECONDS)).startsWith("HTTP/1.1 413").contains("above the limit of " + LIMIT);
        }
        assertThat(written).as("the client could not send the gibibyte").isLessThan(offered / 4);
        assertThat(server.refusedBodyBytes()).as("read before the 413").isBetween((long) LIMIT + 1, 2L * LIMIT + 65536);
        assertThat(store.get("t").block().epoch()).isZero();
    }

    /** A stalled body logged two ERRORs with their traces (Reactor Netty's 500 and a dropped error). */
    @Test
    void aStalledBodyIsAnswered408WithAtMostOneWarningAndNoError() throws Exception {
        NetServer quick = TestKeys.net("a", NetworkLimits.defaults().withRequestTimeout(Duration.ofMillis(500)));
        Controller c = new Controller("a", Set.of("b"), Caps.PULSAR_DEFAULTS, store, Schedulers.parallel());
        ExchangeServer stalling = new ExchangeServer(c, ExchangeConfig.defaults(), quick, Controller.BacklogSource.NONE)
                .start(0);
        CapturedLogs.clear();
        try (Socket socket = new Socket("127.0.0.1", stalling.port())) {
            socket.setSoTimeout(10_000);
            socket.getOutputStream().write(("POST " + ExchangeServer.EXCHANGE_PATH + " HTTP/1.1\r\nHost: x\r\n"
                    + "Authorization: " + TestKeys.signed("b", "a", ExchangeServer.EXCHANGE_PATH) + "\r\nContent-Type: application/x-protobuf\r\nContent-Length: 1000"
                    + "\r\n\r\n0123456789").getBytes(StandardCharsets.US_ASCII));
            assertThat(readAll(socket.getInputStream())).startsWith("HTTP/1.1 408 ");
        } finally {
            stalling.stop();
        }
        Thread.sleep(200); // what the handler does once its connection closed
        assertThat(CapturedLogs.lines(l -> l.level() == Level.ERROR || l.trace() != null)).isEmpty();
        assertThat(CapturedLogs.lines(l -> l.level() == Level.WARN)).hasSizeLessThanOrEqualTo(1);
        assertThat(store.get("t").block().epoch()).isZero();
    }

    private static String readAll(InputStream in) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        byte[] buf = new byte[4096];
        try {
            for (int n; (n = in.read(buf)) > 0; ) {
                out.write(buf, 0, n);
            }
        } catch (IOException e) {
            // reset after the answer
        }
        return out.toString(StandardCharsets.US_ASCII);
    }
}
