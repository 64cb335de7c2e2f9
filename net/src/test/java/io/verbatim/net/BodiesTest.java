package io.verbatim.net;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.netty.ByteBufFlux;
import reactor.netty.DisposableServer;
import reactor.netty.http.client.HttpClient;
import reactor.netty.http.server.HttpServer;

/** {@link Bodies#read}: a body within the limit arrives whole; one over it gets a 413 the client can read. */
class BodiesTest {
    private static final int LIMIT = 64 * 1024;
    private final DisposableServer server = HttpServer.create().host("127.0.0.1").port(0)
            .route(r -> r.post("/", (req, res) -> Bodies.read(req, LIMIT)
                    .flatMap(body -> NetServer.text(res, 200, "read " + body.length))
                    .onErrorResume(Bodies.TooLarge.class, e -> Bodies.tooLarge(res, e.getMessage()))))
            .bindNow();

    @AfterEach
    void stop() {
        server.disposeNow();
    }

    private String post(Flux<byte[]> chunks) {
        return HttpClient.create().post().uri("http://127.0.0.1:" + server.port() + "/")
                .send(ByteBufFlux.fromInbound(chunks))
                .responseSingle((r, content) -> content.asString(StandardCharsets.UTF_8).defaultIfEmpty("")
                        .map(text -> r.status().code() + ": " + text.trim()))
                .block(Duration.ofSeconds(10));
    }

    @Test
    void aChunkedBodyWithinTheLimitArrivesWhole() {
        assertThat(post(Flux.range(0, 16).map(i -> new byte[4096]))).isEqualTo("200: read " + LIMIT);
    }

    /** Chunked, so nothing is declared: the server finds out while reading, and still answers rather than resets. */
    @Test
    void aChunkedBodyALittleOverTheLimitIsAnswered413EveryTime() {
        for (int i = 0; i < 40; i++) {
            assertThat(post(Flux.range(0, 25).map(n -> new byte[4096]))).as("attempt %d", i).startsWith("413: ")
                    .contains("above the limit of " + LIMIT + " bytes (refused after ");
        }
    }

    @Test
    void aDeclaredBodyOverTheLimitIsAnswered413() {
        String answer = HttpClient.create().headers(h -> h.set("Content-Length", LIMIT + 1)).post()
                .uri("http://127.0.0.1:" + server.port() + "/").send(ByteBufFlux.fromInbound(Mono.just(new byte[LIMIT + 1])))
                .responseSingle((r, content) -> content.asString(StandardCharsets.UTF_8)
                        .map(text -> r.status().code() + ": " + text.trim()))
                .block(Duration.ofSeconds(10));
        assertThat(answer).isEqualTo("413: the body of " + (LIMIT + 1) + " bytes is above the limit of " + LIMIT);
    }
}
