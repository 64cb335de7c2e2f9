package io.verbatim.exchange;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.google.protobuf.InvalidProtocolBufferException;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.verbatim.exchange.proto.ExchangeRequest;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.function.Consumer;
import java.util.function.Supplier;
import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;
import reactor.netty.http.server.HttpServerRequest;
import reactor.netty.http.server.HttpServerResponse;
import reactor.netty.http.server.HttpServerRoutes;

/**
 * The broker-to-broker exchange endpoint (Reactor Netty, Protobuf bodies) and the status endpoint
 * (JSON). A non-leader redirects to the controller leader; a call without the broker role's bearer
 * token is refused; a malformed, oversized or inconsistent call gets a 4xx naming the problem and
 * changes nothing.
 */
public final class ExchangeServer {
    public static final String EXCHANGE_PATH = "/admin/v2/scalable/exchange";
    public static final String STATUS_PATH = "/admin/v2/scalable/status";
    public static final String BROKER_ROLE = "broker";
    private static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

    private final Controller controller;
    private final ExchangeConfig config;
    private final Map<String, String> rolesByToken;
    private final Supplier<String> leaderUrl;
    private final Controller.BacklogSource backlog;
    private DisposableServer server;

    /**
     * @param rolesByToken bearer tokens this endpoint accepts, with the role each grants
     * @param leaderUrl the controller leader's base URL, or {@code null} when this node is the leader
     */
    public ExchangeServer(Controller controller, ExchangeConfig config, Map<String, String> rolesByToken,
            Supplier<String> leaderUrl, Controller.BacklogSource backlog) {
        this.controller = controller.maxBodyBytes(config.maxBodyBytes());
        this.config = config;
        this.rolesByToken = Map.copyOf(rolesByToken);
        this.leaderUrl = leaderUrl;
        this.backlog = backlog;
    }

    /** Binds to {@code 127.0.0.1:port} ({@code 0} picks a free port). */
    public ExchangeServer start(int port) {
        return start(port, routes -> { });
    }

    /**
     * Binds to {@code 127.0.0.1:port} with {@code more} routes beside the exchange and status ones (a
     * runtime adds its metrics and status page to the same admin port). A route of {@code more} comes first:
     * a runtime answers the status path itself with more than the controller knows (its replicators).
     */
    public ExchangeServer start(int port, Consumer<HttpServerRoutes> more) {
        return start("127.0.0.1", port, more);
    }

    /**
     * Binds to {@code host:port} ({@code 0.0.0.0} listens on every interface; port {@code 0} picks a free
     * one) with {@code more} routes beside the exchange and status ones.
     */
    public ExchangeServer start(String host, int port, Consumer<HttpServerRoutes> more) {
        server = HttpServer.create().host(host).port(port)
                .route(routes -> {
                    more.accept(routes);
                    routes.post(EXCHANGE_PATH, this::exchange).get(STATUS_PATH, this::status);
                })
                .bindNow();
        return this;
    }

    /** The loopback URL of the bound port (what a test in the same process calls). */
    public String baseUrl() {
        return "http://127.0.0.1:" + server.port();
    }

    /** The port bound. */
    public int port() {
        return server.port();
    }

    public void stop() {
        if (server != null) {
            server.disposeNow();
        }
    }

    private Mono<Void> exchange(HttpServerRequest request, HttpServerResponse response) {
        String refusal = authorize(request);
        if (refusal != null) {
            int status = request.requestHeaders().contains(HttpHeaderNames.AUTHORIZATION) ? 403 : 401;
            return text(response, status, refusal);
        }
        String leader = leaderUrl.get();
        if (leader != null) {
            return response.status(HttpResponseStatus.TEMPORARY_REDIRECT)
                    .header(HttpHeaderNames.LOCATION, leader + EXCHANGE_PATH).send();
        }
        String length = request.requestHeaders().get(HttpHeaderNames.CONTENT_LENGTH);
        if (length != null && declaredLength(length) > config.maxBodyBytes()) {
            return text(response, 413, "body of " + length + " bytes is above the limit of " + config.maxBodyBytes());
        }
        return request.receive().aggregate().asByteArray().defaultIfEmpty(new byte[0]).flatMap(body -> {
            if (body.length > config.maxBodyBytes()) {
                return text(response, 413, "body of " + body.length + " bytes is above the limit of "
                        + config.maxBodyBytes());
            }
            ExchangeRequest parsed;
            try {
                parsed = ExchangeRequest.parseFrom(body);
            } catch (InvalidProtocolBufferException e) {
                return text(response, 400, "body is not an ExchangeRequest: " + e.getMessage());
            }
            return controller.receive(parsed)
                    .flatMap(answer -> response.status(200).header(HttpHeaderNames.CONTENT_TYPE, "application/x-protobuf")
                            .sendByteArray(Mono.just(answer.toByteArray())).then())
                    .onErrorResume(ExchangeException.class, e -> text(response, e.status(), e.getMessage()));
        });
    }

    /** A Content-Length that is not a number is treated as too large: the body is not read. */
    private static long declaredLength(String header) {
        try {
            return Long.parseLong(header.trim());
        } catch (NumberFormatException e) {
            return Long.MAX_VALUE;
        }
    }

    /** Null when the call carries a bearer token of the broker role; otherwise why not. */
    private String authorize(HttpServerRequest request) {
        String header = request.requestHeaders().get(HttpHeaderNames.AUTHORIZATION);
        if (header == null || !header.startsWith("Bearer ")) {
            return "a bearer token of the '" + BROKER_ROLE + "' role is required";
        }
        String role = rolesByToken.get(header.substring("Bearer ".length()).trim());
        if (role == null) {
            return "the bearer token is not valid here";
        }
        return BROKER_ROLE.equals(role) ? null : "role '" + role + "' may not call the exchange";
    }

    private Mono<Void> status(HttpServerRequest request, HttpServerResponse response) {
        return controller.status(backlog).flatMap(s -> {
            try {
                return response.status(200).header(HttpHeaderNames.CONTENT_TYPE, "application/json")
                        .sendString(Mono.just(JSON.writeValueAsString(s))).then();
            } catch (Exception e) {
                return text(response, 500, e.getMessage());
            }
        });
    }

    private static Mono<Void> text(HttpServerResponse response, int status, String message) {
        return response.status(status).header(HttpHeaderNames.CONTENT_TYPE, "text/plain; charset=utf-8")
                .sendByteArray(Mono.just(message.getBytes(StandardCharsets.UTF_8))).then();
    }
}
