package io.verbatim.net;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.ssl.SslContext;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Optional;
import java.util.function.BiFunction;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import reactor.netty.Connection;
import reactor.netty.http.server.HttpServer;
import reactor.netty.http.server.HttpServerRequest;
import reactor.netty.http.server.HttpServerResponse;
import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * What every listening port of a node shares: who may call it ({@link Authenticator}), the limits that
 * keep it standing ({@link NetworkLimits}) and its TLS. {@link #apply} sets a Reactor Netty server up
 * with them: an idle timeout, a request timeout, a header size limit, a connection limit (connections
 * above it closed at once and counted) and, when configured, TLS.
 *
 * <p>A port that stopped (its server disposed) is answered for: Reactor Netty closes only the listening
 * socket, so a client's keep-alive connection opened before still reaches the handlers, while the node
 * behind them tears down (its metadata log closed, its schedulers disposed). Every call such a connection
 * still makes is answered {@code 503} at once, and a handler that fails while its port stops is answered
 * {@code 503} too, never Reactor Netty's {@code 500} with an {@code ERROR} line; the connection is closed
 * after the answer. A handler failing on a running port is still a {@code 500}, logged.
 */
public final class NetServer {
    private static final Logger LOG = Loggers.getLogger(NetServer.class);
    private final Authenticator authenticator;
    private final NetworkLimits limits;
    private final @Nullable SslContext tls;
    private final Scheduler clock;
    private final List<Port> ports = new CopyOnWriteArrayList<>();

    /** A server of plain HTTP, checking signatures' times against the system clock. */
    public NetServer(Authenticator authenticator, NetworkLimits limits) {
        this(authenticator, limits, Optional.empty());
    }

    /** @param tls what the ports serve ({@link Tls#serverContext()}): HTTPS */
    public NetServer(Authenticator authenticator, NetworkLimits limits, SslContext tls) {
        this(authenticator, limits, Optional.of(tls));
    }

    /** @param tls what the ports serve, or empty for plain HTTP */
    public NetServer(Authenticator authenticator, NetworkLimits limits, Optional<SslContext> tls) {
        this(authenticator, limits, tls, Schedulers.immediate());
    }

    /**
     * @param tls what the ports serve, or empty for plain HTTP
     * @param clock what a cluster's signature's time of issue is checked against (the node's one clock)
     */
    public NetServer(Authenticator authenticator, NetworkLimits limits, Optional<SslContext> tls, Scheduler clock) {
        this.authenticator = authenticator;
        this.limits = limits;
        this.tls = tls.orElse(null);
        this.clock = clock;
    }

    /** One listening port's connections: open now, and refused over the limit since it started. */
    public static final class Port {
        private final String name;
        private final AtomicInteger open = new AtomicInteger();
        private final AtomicLong refused = new AtomicLong();
        /** Set once its server is disposed, cleared when it is bound again (an ingest port restarts). */
        private volatile boolean stopped;

        Port(String name) {
            this.name = name;
        }

        public String name() {
            return name;
        }

        public int open() {
            return open.get();
        }

        public long refused() {
            return refused.get();
        }

        /** Whether its server was disposed (and not bound again since): what it still answers is a 503. */
        public boolean stopped() {
            return stopped;
        }
    }

    public Authenticator authenticator() {
        return authenticator;
    }

    public NetworkLimits limits() {
        return limits;
    }

    public boolean secure() {
        return tls != null;
    }

    /** {@code https} under TLS, else {@code http}. */
    public String scheme() {
        return tls == null ? "http" : "https";
    }

    /** Every port {@link #apply} set up, in order. */
    public List<Port> ports() {
        return List.copyOf(ports);
    }

    /** {@code server} with this node's limits and TLS; {@code name} names the port in metrics. */
    public HttpServer apply(HttpServer server, String name) {
        Port port = ports.stream().filter(p -> p.name.equals(name)).findFirst().orElseGet(() -> {
            Port p = new Port(name);
            ports.add(p);
            return p;
        });
        HttpServer out = server
                .idleTimeout(limits.idleTimeout())
                .readTimeout(limits.requestTimeout())
                .requestTimeout(limits.requestTimeout())
                .httpRequestDecoder(spec -> spec.maxHeaderSize(limits.maxHeaderBytes())
                        .maxInitialLineLength(Math.min(limits.maxHeaderBytes(), 8192)))
                .httpMessageLogFactory(OneLineMessageLog.INSTANCE) // a bad request is one log line, not one per header
                .doOnChannelInit((observer, channel, remote) -> {
                    if (port.open.incrementAndGet() > limits.maxConnectionsPerPort()) {
                        port.refused.incrementAndGet();
                        channel.pipeline().addFirst(new CloseAtOnce());
                    }
                    channel.closeFuture().addListener(f -> port.open.decrementAndGet());
                })
                .doOnBound(bound -> port.stopped = false)
                .doOnUnbound(unbound -> port.stopped = true)
                .mapHandle((handling, connection) -> whileStopping(port, handling, connection));
        return tls == null ? out : out.secure(spec -> spec.sslContext(tls));
    }

    /**
     * A call's handling on {@code port}: answered 503 without subscribing to it when the port stopped already
     * (a keep-alive connection opened before; the route's handler built the publisher already, so what a
     * handler does before its publisher is subscribed still runs), and 503 when it fails while the port stops.
     * A call whose target is not in origin form is answered 400 here too, whatever route it matched (or none).
     */
    private static Mono<Void> whileStopping(Port port, Mono<Void> handling, Connection connection) {
        if (!(connection instanceof HttpServerResponse response)) {
            return handling;
        }
        // a target no route should see (no route matches "//host/..." either: 400, not 404)
        Optional<String> malformed = connection instanceof HttpServerRequest request
                ? RequestTarget.notOriginForm(request.uri()) : Optional.empty();
        if (malformed.isPresent()) {
            return text(response.keepAlive(false), 400, malformed.get());
        }
        if (port.stopped) {
            return stopping(port, response, null);
        }
        return handling.onErrorResume(e -> port.stopped, e -> stopping(port, response, e));
    }

    private static Mono<Void> stopping(Port port, HttpServerResponse response, @Nullable Throwable failure) {
        if (failure != null) {
            LOG.debug("{}: a call failed while the port stops; answered 503", port.name, failure);
        }
        if (response.hasSentHeaders()) {
            // too late for a status (a WebSocket, a streamed answer): the connection goes, nothing is logged
            return Mono.fromRunnable(() -> response.withConnection(Connection::dispose));
        }
        return text(response.keepAlive(false), 503, "the " + port.name + " port is stopping; try again once it is back");
    }

    /** Closes a connection over the port's limit as soon as it is active: nothing of it is read. */
    private static final class CloseAtOnce extends ChannelInboundHandlerAdapter {
        @Override
        public void channelActive(ChannelHandlerContext ctx) {
            ctx.close();
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            io.netty.util.ReferenceCountUtil.release(msg);
        }
    }

    /**
     * May the caller of {@code request} use an endpoint of {@code role}? A request whose target is not in
     * origin form ({@link RequestTarget}) is refused with 400 first, whoever calls.
     */
    public Verdict check(HttpServerRequest request, Role role, String what) {
        Optional<String> malformed = RequestTarget.notOriginForm(request.uri());
        if (malformed.isPresent()) {
            return new Verdict.Refused(400, malformed.get());
        }
        String[] certificate = new String[1];
        request.withConnection(c -> certificate[0] = Certificates.clientName(c).orElse(null));
        Optional<String> authorization = Optional.ofNullable(request.requestHeaders().get(HttpHeaderNames.AUTHORIZATION));
        return authenticator.check(role, new Authenticator.Call(request.method().name(), request.uri(), authorization,
                Optional.ofNullable(certificate[0])), clock.now(TimeUnit.MILLISECONDS), what);
    }

    /**
     * {@code handler} behind a check of its caller: a refused call gets its 401 or 403 (plain text naming
     * why) and never reaches the handler.
     */
    public BiFunction<HttpServerRequest, HttpServerResponse, Publisher<Void>> guard(Role role, String what,
            BiFunction<HttpServerRequest, HttpServerResponse, ? extends Publisher<Void>> handler) {
        return (request, response) -> check(request, role, what) instanceof Verdict.Refused r
                ? text(response, r.status(), r.reason()) : handler.apply(request, response);
    }

    /** The client certificate's name on {@code connection}, if it offered a verified one. */
    public static Optional<String> certificateName(Connection connection) {
        return Certificates.clientName(connection);
    }

    /** A plain-text answer. */
    public static Mono<Void> text(HttpServerResponse response, int status, String message) {
        return response.status(HttpResponseStatus.valueOf(status))
                .header(HttpHeaderNames.CONTENT_TYPE, "text/plain; charset=utf-8")
                .sendString(Mono.just(message.endsWith("\n") ? message : message + "\n"), StandardCharsets.UTF_8)
                .then();
    }
}
