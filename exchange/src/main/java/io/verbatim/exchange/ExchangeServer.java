package io.verbatim.exchange;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.google.protobuf.InvalidProtocolBufferException;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.verbatim.exchange.proto.ExchangeRequest;
import io.verbatim.net.Bodies;
import io.verbatim.net.NetServer;
import io.verbatim.net.Principal;
import io.verbatim.net.Role;
import io.verbatim.net.Verdict;
import java.nio.charset.StandardCharsets;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;
import reactor.netty.http.server.HttpServerRequest;
import reactor.netty.http.server.HttpServerResponse;
import reactor.netty.http.server.HttpServerRoutes;

/**
 * The broker-to-broker exchange endpoint (Reactor Netty, Protobuf bodies) and the status endpoint
 * (JSON). A non-leader redirects to the controller leader. The exchange takes a cluster's broker
 * credential only, and a call whose {@code cluster} is not the authenticated caller is refused; status
 * needs no credential unless {@code security.openStatus} is false. A malformed, oversized or
 * inconsistent call gets a 4xx naming the problem and changes nothing; a body is counted as it streams,
 * so one over the limit is answered 413 (and its connection closed) once the limit is passed, never
 * read whole. A call is parsed, folded and answered off the I/O threads ({@link #foldOn}).
 */
public final class ExchangeServer {
    public static final String EXCHANGE_PATH = "/admin/v2/scalable/exchange";
    public static final String STATUS_PATH = "/admin/v2/scalable/status";
    private static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

    private final Controller controller;
    private final ExchangeConfig config;
    private final NetServer net;
    private final Supplier<ControllerLeader> leader;
    private final Controller.BacklogSource backlog;
    private final AtomicLong refusedBodyBytes = new AtomicLong();
    private volatile Scheduler folds = Schedulers.boundedElastic();
    private @Nullable DisposableServer server;

    /**
     * The exchange of a node that is its cluster's controller leader.
     *
     * @param net who may call, the port's limits and TLS
     */
    public ExchangeServer(Controller controller, ExchangeConfig config, NetServer net,
            Controller.BacklogSource backlog) {
        this(controller, config, net, Optional::empty, backlog);
    }

    /**
     * @param net who may call, the port's limits and TLS
     * @param leaderUrl the controller leader's base URL, or empty when this node is the leader
     */
    public ExchangeServer(Controller controller, ExchangeConfig config, NetServer net,
            Supplier<Optional<String>> leaderUrl, Controller.BacklogSource backlog) {
        this(controller, config, backlog, net, () -> leaderUrl.get().map(ControllerLeader::at)
                .orElse(ControllerLeader.HERE));
    }

    /**
     * The exchange of one of a cluster's controller replicas (or of its brokers' process): it answers while
     * {@code leader} says {@link ControllerLeader#HERE}, redirects to the leader's URL with 307 while another
     * replica leads, and answers 503 while no leader is known.
     *
     * @param net who may call, the port's limits and TLS
     */
    public ExchangeServer(Controller controller, ExchangeConfig config, Controller.BacklogSource backlog,
            NetServer net, Supplier<ControllerLeader> leader) {
        this.controller = controller.maxBodyBytes(config.maxBodyBytes());
        this.config = config;
        this.net = net;
        this.leader = leader;
        this.backlog = backlog;
    }

    /**
     * Where an arriving call is parsed, folded and answered (default {@link Schedulers#boundedElastic()}): never
     * the I/O thread that read it, whose other connections would wait the whole fold (a call of 54,615 topics
     * took longer than the request timeout). Before {@link #start}.
     */
    public ExchangeServer foldOn(Scheduler scheduler) {
        folds = scheduler;
        return this;
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
        server = net.apply(HttpServer.create().host(host).port(port), "admin")
                .route(routes -> {
                    more.accept(routes);
                    routes.post(EXCHANGE_PATH, this::exchange)
                            .get(STATUS_PATH, net.guard(Role.STATUS, "the status endpoint", this::status));
                })
                .bindNow();
        return this;
    }

    /** The loopback URL of the bound port (what a test in the same process calls). */
    public String baseUrl() {
        return net.scheme() + "://127.0.0.1:" + bound().port();
    }

    /** The port bound. */
    public int port() {
        return bound().port();
    }

    private DisposableServer bound() {
        return Objects.requireNonNull(server, "not started");
    }

    public void stop() {
        if (server != null) {
            server.disposeNow();
        }
    }

    /** How many bytes of the latest body refused as too large were read before the refusal. */
    long refusedBodyBytes() {
        return refusedBodyBytes.get();
    }

    private Mono<Void> exchange(HttpServerRequest request, HttpServerResponse response) {
        Verdict verdict = net.check(request, Role.BROKER, "the exchange");
        if (verdict instanceof Verdict.Refused r) {
            return text(response, r.status(), r.reason());
        }
        String caller = ((Principal.Cluster) ((Verdict.Allowed) verdict).principal()).name();
        ControllerLeader where = leader.get();
        if (where instanceof ControllerLeader.At at) {
            return response.status(HttpResponseStatus.TEMPORARY_REDIRECT)
                    .header(HttpHeaderNames.LOCATION, at.baseUrl() + EXCHANGE_PATH).send();
        }
        if (where instanceof ControllerLeader.Unknown unknown) {
            return text(response, 503, "no controller leader here now (" + unknown.why() + "); try again");
        }
        return Bodies.read(request, config.maxBodyBytes()).publishOn(folds).flatMap(body -> {
            ExchangeRequest parsed;
            try {
                parsed = ExchangeRequest.parseFrom(body);
            } catch (InvalidProtocolBufferException e) {
                return text(response, 400, "body is not an ExchangeRequest: " + e.getMessage());
            }
            if (!parsed.getCluster().equals(caller)) {
                return text(response, 403, "authenticated as " + caller + ", claims to be '" + parsed.getCluster() + "'");
            }
            return controller.receive(parsed)
                    .flatMap(answer -> response.status(200).header(HttpHeaderNames.CONTENT_TYPE, "application/x-protobuf")
                            .sendByteArray(Mono.just(answer.toByteArray())).then())
                    .onErrorResume(ExchangeException.class,
                            e -> text(response, e.status(), String.valueOf(e.getMessage())));
        }).onErrorResume(Bodies.TooLarge.class, e -> {
            refusedBodyBytes.set(e.read());
            return Bodies.tooLarge(response, String.valueOf(e.getMessage()));
        });
    }

    private Mono<Void> status(HttpServerRequest request, HttpServerResponse response) {
        return controller.status(backlog).flatMap(s -> {
            try {
                return response.status(200).header(HttpHeaderNames.CONTENT_TYPE, "application/json")
                        .sendString(Mono.just(JSON.writeValueAsString(s))).then();
            } catch (Exception e) {
                return text(response, 500, String.valueOf(e.getMessage()));
            }
        });
    }

    private static Mono<Void> text(HttpServerResponse response, int status, String message) {
        return response.status(status).header(HttpHeaderNames.CONTENT_TYPE, "text/plain; charset=utf-8")
                .sendByteArray(Mono.just(message.getBytes(StandardCharsets.UTF_8))).then();
    }
}
