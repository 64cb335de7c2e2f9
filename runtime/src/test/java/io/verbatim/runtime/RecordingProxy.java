package io.verbatim.runtime;

import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.netty.ByteBufFlux;
import reactor.netty.DisposableServer;
import reactor.netty.http.client.HttpClient;
import reactor.netty.http.client.WebsocketClientSpec;
import reactor.netty.http.server.HttpServer;
import reactor.netty.http.server.WebsocketServerSpec;

/**
 * A peer on the path between two clusters, as a curious one sees the traffic: it forwards every request to
 * {@code upstream} as it came (method, target, credential, body; a WebSocket both ways) and records each
 * request's method, target, Authorization header and body, so that a test can present them again elsewhere.
 */
final class RecordingProxy implements AutoCloseable {
    /** One request as it passed: what a peer could replay. */
    record Seen(String method, String target, String authorization, byte[] body) {
    }

    private static final int FRAMES = 16 << 20;
    private final List<Seen> seen = new CopyOnWriteArrayList<>();
    private final DisposableServer server;

    RecordingProxy(String upstream) {
        HttpClient client = HttpClient.create();
        this.server = HttpServer.create().host("127.0.0.1").port(0).handle((req, res) -> {
            String authorization = String.valueOf(req.requestHeaders().get(HttpHeaderNames.AUTHORIZATION));
            HttpClient forwarding = client.headers(h -> h.set(HttpHeaderNames.AUTHORIZATION, authorization));
            if (req.requestHeaders().containsValue(HttpHeaderNames.UPGRADE, HttpHeaderValues.WEBSOCKET, true)) {
                seen.add(new Seen(req.method().name(), req.uri(), authorization, new byte[0]));
                return res.sendWebsocket((in, out) -> forwarding
                        .websocket(WebsocketClientSpec.builder().maxFramePayloadLength(FRAMES).build())
                        .uri(upstream + req.uri())
                        .handle((upIn, upOut) -> Flux.merge(
                                upOut.send(in.aggregateFrames(FRAMES).receive().retain()).then(),
                                out.send(upIn.aggregateFrames(FRAMES).receive().retain()).then()))
                        .then(), WebsocketServerSpec.builder().maxFramePayloadLength(FRAMES).build());
            }
            return req.receive().aggregate().asByteArray().defaultIfEmpty(new byte[0]).flatMap(body -> {
                seen.add(new Seen(req.method().name(), req.uri(), authorization, body));
                return forwarding.headers(h -> h.set(HttpHeaderNames.CONTENT_TYPE,
                                String.valueOf(req.requestHeaders().get(HttpHeaderNames.CONTENT_TYPE))))
                        .request(req.method()).uri(upstream + req.uri()).send(ByteBufFlux.fromInbound(Mono.just(body)))
                        .responseSingle((r, content) -> content.asByteArray().defaultIfEmpty(new byte[0])
                                .flatMap(bytes -> res.status(r.status()).headers(r.responseHeaders())
                                        .sendByteArray(Mono.just(bytes)).then()));
            });
        }).bindNow();
    }

    String url() {
        return "http://127.0.0.1:" + server.port();
    }

    /** Every request that passed, in order. */
    List<Seen> seen() {
        return List.copyOf(seen);
    }

    @Override
    public void close() {
        server.disposeNow();
    }
}
