package io.verbatim.net;

import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.ssl.SslContext;
import io.netty.util.ReferenceCountUtil;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.function.BiFunction;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
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
 * with them: an idle timeout, a header size limit, a guard on every connection ({@link ConnectionGuard}: a
 * request arrives whole within the request timeout of its first byte, a connection that has not
 * authenticated sends a request whole within the first-request timeout), the connection limits of
 * {@link Admission} (per port and, for connections not yet authenticated, per address; an authenticated
 * peer is never starved) and, when configured, TLS. Every refusal is counted by {@link Refusal} and logged
 * at most once a minute per kind and port.
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
    /** At most one log line per refusal kind and port in this long. */
    static final Duration LOG_INTERVAL = Duration.ofMinutes(1);
    private final Authenticator authenticator;
    private final NetworkLimits limits;
    private final @Nullable SslContext tls;
    private final Scheduler timer;
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
        this(authenticator, limits, tls, Schedulers.parallel());
    }

    /**
     * @param tls what the ports serve, or empty for plain HTTP
     * @param timer the clock of every connection's deadlines, of the refusal log and of a cluster's signature's
     *        time of issue (the node's one clock; virtual in tests)
     */
    public NetServer(Authenticator authenticator, NetworkLimits limits, Optional<SslContext> tls, Scheduler timer) {
        this.authenticator = authenticator;
        this.limits = limits;
        this.tls = tls.orElse(null);
        this.timer = timer;
    }

    /**
     * One listening port's connections: how many are open, which have not authenticated yet ({@link Admission}),
     * and what it refused since it started, by {@link Refusal}.
     */
    public static final class Port {
        private final String name;
        private final NetworkLimits limits;
        private final Scheduler timer;
        private final Admission<ConnectionGuard> admission;
        private final AtomicLongArray refused = new AtomicLongArray(Refusal.values().length);
        private final RefusalLog log = new RefusalLog(LOG_INTERVAL.toNanos());
        /** Set once its server is disposed, cleared when it is bound again (an ingest port restarts). */
        private volatile boolean stopped;

        Port(String name, NetworkLimits limits, Scheduler timer) {
            this.name = name;
            this.limits = limits;
            this.timer = timer;
            this.admission = new Admission<>(limits);
        }

        public String name() {
            return name;
        }

        /** Connections open now (those refused at once not counted). */
        public int open() {
            return admission.open();
        }

        /** Connections open now that have not authenticated. */
        public int unauthenticated() {
            return admission.unauthenticated();
        }

        /** Its connections not yet authenticated, oldest first (tests wait on what their guards say). */
        List<ConnectionGuard> unauthenticatedConnections() {
            return admission.unauthenticatedConnections();
        }

        /** Everything refused since it started, every reason together. */
        public long refused() {
            long all = 0;
            for (int i = 0; i < refused.length(); i++) {
                all += refused.get(i);
            }
            return all;
        }

        public long refused(Refusal reason) {
            return refused.get(reason.ordinal());
        }

        /** Whether its server was disposed (and not bound again since): what it still answers is a 503. */
        public boolean stopped() {
            return stopped;
        }

        /** A new connection: admitted with its guard, or closed at once (and counted). */
        void accept(Channel channel, @Nullable SocketAddress remote) {
            String address = addressOf(remote != null ? remote : channel.remoteAddress());
            ConnectionGuard guard = new ConnectionGuard(channel, this, limits, timer, address);
            Admission.Outcome<ConnectionGuard> outcome = admission.open(guard, address);
            switch (outcome.decision()) {
                case REFUSE_ADDRESS_FULL, REFUSE_PORT_FULL -> {
                    refused(outcome.decision() == Admission.Decision.REFUSE_PORT_FULL ? Refusal.PORT_FULL
                            : Refusal.ADDRESS_FULL, address);
                    channel.pipeline().addFirst(new CloseAtOnce());
                    return;
                }
                case ADMIT_EVICTING_OLDEST -> {
                    ConnectionGuard evicted = Objects.requireNonNull(outcome.evicted());
                    refused(Refusal.EVICTED, evicted.address());
                    evicted.evict();
                }
                case ADMIT -> {
                }
            }
            channel.closeFuture().addListener(f -> admission.closed(guard));
            guard.install();
        }

        void authenticated(ConnectionGuard guard) {
            admission.authenticated(guard);
        }

        /** Counts a refusal, and logs it unless a line of its kind was logged within the interval. */
        void refused(Refusal reason, String address) {
            refused.incrementAndGet(reason.ordinal());
            long count = log.note(reason, timer.now(TimeUnit.NANOSECONDS));
            if (count > 0) {
                LOG.warn(RefusalLog.line(name, reason, count, address, limits, LOG_INTERVAL.toSeconds()));
            }
        }
    }

    /** A remote address as the per-address limit counts it: an IPv4 address, or an IPv6 address's /64. */
    static String addressOf(@Nullable SocketAddress remote) {
        if (!(remote instanceof InetSocketAddress inet) || inet.getAddress() == null) {
            return String.valueOf(remote);
        }
        InetAddress a = inet.getAddress();
        if (a instanceof Inet6Address) {
            byte[] b = a.getAddress();
            StringBuilder prefix = new StringBuilder();
            for (int i = 0; i < 8; i += 2) {
                prefix.append(Integer.toHexString(((b[i] & 0xff) << 8) | (b[i + 1] & 0xff))).append(':');
            }
            return prefix.append(":/64").toString();
        }
        return a.getHostAddress();
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
            Port p = new Port(name, limits, timer);
            ports.add(p);
            return p;
        });
        // A request's deadlines (network.requestTimeout from its first byte, network.firstRequestTimeout until a
        // connection authenticates) are the connection guard's: Reactor Netty's own read and request timeouts
        // start only once the headers arrived, so trickled headers were held until the idle timeout.
        HttpServer out = server
                .idleTimeout(limits.idleTimeout())
                .httpRequestDecoder(spec -> spec.maxHeaderSize(limits.maxHeaderBytes())
                        .maxInitialLineLength(Math.min(limits.maxHeaderBytes(), 8192)))
                .httpMessageLogFactory(OneLineMessageLog.INSTANCE) // a bad request is one log line, not one per header
                .doOnChannelInit((observer, channel, remote) -> port.accept(channel, remote))
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

    /** Closes a refused connection as soon as it is active: nothing of it is read. */
    private static final class CloseAtOnce extends ChannelInboundHandlerAdapter {
        @Override
        public void channelActive(ChannelHandlerContext ctx) {
            ctx.close();
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ReferenceCountUtil.release(msg);
        }
    }

    /**
     * May the caller of {@code request} use an endpoint of {@code role}? A request whose target is not in
     * origin form ({@link RequestTarget}) is refused with 400 first, whoever calls. A call allowed as a cluster
     * or the admin authenticates its connection: the port no longer holds it to {@code network.firstRequestTimeout}
     * nor closes it to make room. An anonymous status call does not.
     */
    public Verdict check(HttpServerRequest request, Role role, String what) {
        Optional<String> malformed = RequestTarget.notOriginForm(request.uri());
        if (malformed.isPresent()) {
            return new Verdict.Refused(400, malformed.get());
        }
        String[] certificate = new String[1];
        request.withConnection(c -> certificate[0] = Certificates.clientName(c).orElse(null));
        Optional<String> authorization = Optional.ofNullable(request.requestHeaders().get(HttpHeaderNames.AUTHORIZATION));
        Verdict verdict = authenticator.check(role, new Authenticator.Call(request.method().name(), request.uri(),
                authorization, Optional.ofNullable(certificate[0])), timer.now(TimeUnit.MILLISECONDS), what);
        if (verdict instanceof Verdict.Allowed allowed && !(allowed.principal() instanceof Principal.Anonymous)) {
            authenticated(request);
        }
        return verdict;
    }

    /**
     * Marks the connection of {@code request} as authenticated, for an endpoint that checks a credential of
     * its own (the brokers' report is signed by the brokers' member key): see {@link #check}.
     */
    public static void authenticated(HttpServerRequest request) {
        request.withConnection(c -> {
            ConnectionGuard guard = ConnectionGuard.of(c.channel());
            if (guard != null) {
                guard.authenticated();
            }
        });
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

    /** Whether {@code request} asks for a WebSocket (an {@code Upgrade: websocket} header). */
    public static boolean asksForWebSocket(HttpServerRequest request) {
        return request.requestHeaders().containsValue(HttpHeaderNames.UPGRADE, HttpHeaderValues.WEBSOCKET, true);
    }

    /** The answer to a plain request at a WebSocket endpoint: 426, naming the path and what it expects. */
    public static Mono<Void> notWebSocket(HttpServerRequest request, HttpServerResponse response) {
        response.header(HttpHeaderNames.UPGRADE, HttpHeaderValues.WEBSOCKET);
        return text(response, 426, request.path() + " is a WebSocket endpoint (expected Upgrade: websocket)");
    }

    /** A plain-text answer. */
    public static Mono<Void> text(HttpServerResponse response, int status, String message) {
        return response.status(HttpResponseStatus.valueOf(status))
                .header(HttpHeaderNames.CONTENT_TYPE, "text/plain; charset=utf-8")
                .sendString(Mono.just(message.endsWith("\n") ? message : message + "\n"), StandardCharsets.UTF_8)
                .then();
    }
}
