package io.verbatim.runtime.status;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import io.netty.handler.codec.http.HttpHeaderNames;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import reactor.core.publisher.Mono;
import reactor.netty.http.server.HttpServerResponse;

/** How a process answers its status documents: indented JSON, never cached. */
public final class StatusJson {
    private static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

    private StatusJson() {
    }

    /** Answers {@code body} as JSON on {@code response}. */
    public static Mono<Void> send(HttpServerResponse response, Mono<?> body) {
        return body.map(b -> {
            try {
                return JSON.writeValueAsString(b) + "\n";
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }).flatMap(text -> response.header(HttpHeaderNames.CONTENT_TYPE, "application/json")
                .header(HttpHeaderNames.CACHE_CONTROL, "no-store")
                .sendString(Mono.just(text), StandardCharsets.UTF_8).then());
    }
}
