package io.verbatim.metadatalog.transport;

import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelOption;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.timeout.IdleStateHandler;
import io.netty.util.ReferenceCountUtil;
import io.verbatim.metadatalog.identity.MemberKeys;
import io.verbatim.metadatalog.proto.RaftMessageProto;
import io.verbatim.metadatalog.transport.RaftTransportMetrics.Drop;
import io.verbatim.metadatalog.transport.RaftTransportMetrics.Refusal;
import io.verbatim.model.Backoff;
import io.verbatim.net.NetworkLimits;
import io.verbatim.net.Tls;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.OptionalLong;
import java.util.Set;
import java.util.TreeSet;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.random.RandomGenerator;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import reactor.netty.Connection;
import reactor.netty.DisposableServer;
import reactor.netty.NettyPipeline;
import reactor.netty.resources.LoopResources;
import reactor.netty.tcp.TcpClient;
import reactor.netty.tcp.TcpServer;
import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * One member's Raft transport over TCP (Reactor Netty): a server for the messages addressed to it and one
 * outbound connection per peer for the messages it sends. Frames are length-prefixed; every connection
 * opens with a handshake in which each side proves, by a signature with its own key over both sides' fresh
 * nonces, that it is the member it names ({@link Frames}); no secret goes over the wire. The server thereafter
 * drops any message whose sender is not the member proven, whose group is not its own, or, from a member
 * its keys name a listener, any message only a voter sends. Optionally over mutual TLS ({@link Builder#tls}).
 * See {@link Builder} for the limits and their defaults.
 *
 * <pre>{@code
 * MemberKeys keys = MemberKeys.of("a", SigningKey.fromSecret(secretOfA))
 *         .withVoter("b", VerifyingKey.parse("ed25519:...")).withVoter("c", VerifyingKey.parse("ed25519:..."));
 * NettyRaftTransport t = NettyRaftTransport.builder("meta", keys)
 *         .bind("0.0.0.0", 7100)
 *         .peers(Map.of("b", "10.0.0.2:7100", "c", "10.0.0.3:7100"))
 *         .start();
 * }</pre>
 *
 * <p>Without TLS the connection itself is not protected: a party on the network path cannot pass for a
 * member, but can read the messages and, by taking over an established TCP connection, inject some. Where
 * the path is not trusted, run TLS.
 *
 * <p>Threads: the event loops only read, write and decode; {@link #inbound()} signals on the configured
 * scheduler, and backoff timers run on it. {@link #send} is thread-safe and never blocks.
 */
public final class NettyRaftTransport implements RaftTransport {
    private static final Logger LOG = Loggers.getLogger(NettyRaftTransport.class);
    /** Refusals are logged at most once per source address per this interval. */
    static final Duration REFUSAL_LOG_INTERVAL = Duration.ofSeconds(10);
    private final Settings settings;
    private final RefusalLog refusalLog = new RefusalLog(REFUSAL_LOG_INTERVAL.toNanos(), 1024);
    private volatile String lastRefusalLine = "";
    private final RaftTransportMetrics metrics;
    private final InboundSink sink;
    private final LoopResources loops;
    private final TcpClient client;
    private final Map<String, PeerLink> links = new ConcurrentHashMap<>();
    private final Map<Channel, String> inboundChannels = new ConcurrentHashMap<>();
    private final AtomicBoolean closed = new AtomicBoolean();
    /** The members' keys now: {@link Settings#keys()} at start, then {@link #updateKeys}. */
    private volatile MemberKeys keys;
    private final DisposableServer server;

    /** Settings resolved by the {@link Builder}. */
    record Settings(String member, String group, MemberKeys keys, String host, int port, Map<String, String> peers,
            @Nullable Tls tls, boolean certificateNameCheck, NetworkLimits limits, Duration handshakeTimeout,
            int maxFrameBytes, int maxQueuedMessages, long maxQueuedBytes, int inboundBuffer, Backoff reconnect,
            Scheduler scheduler, RandomGenerator random, int ioThreads) {
    }

    /**
     * A member's transport, not started.
     *
     * @param group the Raft group id every message must carry
     * @param keys this member's id ({@code keys.self()}: what it names itself in the handshake and as a
     *     message's sender) and signing key, and every peer's verifying key, listeners named apart
     */
    public static Builder builder(String group, MemberKeys keys) {
        return new Builder(group, keys);
    }

    private NettyRaftTransport(Settings s) {
        this.settings = s;
        this.keys = s.keys();
        this.metrics = new RaftTransportMetrics(s.member());
        this.sink = new InboundSink(s.inboundBuffer());
        this.loops = LoopResources.create("verbatim-raft-" + s.member(), 1, s.ioThreads(), true);
        SslContext serverTls = s.tls() == null ? null : s.tls().serverContext();
        SslContext clientTls = s.tls() == null ? null : s.tls().clientContext();
        TcpClient c = TcpClient.newConnection().runOn(loops)
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) Math.min(Integer.MAX_VALUE,
                        s.handshakeTimeout().toMillis()))
                .option(ChannelOption.TCP_NODELAY, true)
                .option(ChannelOption.WRITE_BUFFER_WATER_MARK, new WriteBufferWaterMark(256 << 10, 1 << 20))
                .doOnConnected(conn -> conn.channel().config().setAutoRead(true));
        this.client = clientTls == null ? c
                : c.secure(spec -> spec.sslContext(clientTls).handlerConfigurator(Tls.verifyHostname()));
        updatePeers(s.peers());
        this.server = bind(serverTls);
    }

    private DisposableServer bind(@Nullable SslContext tls) {
        TcpServer server = TcpServer.create().runOn(loops).host(settings.host()).port(settings.port())
                .childOption(ChannelOption.TCP_NODELAY, true)
                .doOnChannelInit((observer, channel, remote) -> initInbound(channel))
                // our handlers read the channel themselves; Reactor Netty's receive() is never subscribed
                .doOnConnection(conn -> conn.channel().config().setAutoRead(true))
                .handle((in, out) -> Mono.never());
        if (tls != null) {
            server = server.secure(spec -> spec.sslContext(tls));
        }
        try {
            return server.bindNow(Duration.ofSeconds(30));
        } catch (RuntimeException e) {
            loops.dispose();
            String why = e.getCause() != null ? e.getCause().getMessage() : e.getMessage();
            throw new IllegalStateException("member " + settings.member() + " cannot listen on " + settings.host()
                    + ":" + settings.port() + " for its Raft transport (is the address in use?): " + why, e);
        }
    }

    private void initInbound(Channel channel) {
        metrics.connectionOpened();
        channel.closeFuture().addListener(f -> metrics.connectionClosed());
        if (metrics.connectionsOpen() > settings.limits().maxConnectionsPerPort()) {
            metrics.refuse(Refusal.OVER_LIMIT);
            channel.pipeline().addFirst(new CloseAtOnce());
            return;
        }
        FrameDecoder decoder = new FrameDecoder(settings.maxFrameBytes());
        long idle = settings.limits().idleTimeout().toNanos();
        channel.pipeline()
                .addBefore(NettyPipeline.ReactiveBridge, "raft.idle", new IdleStateHandler(idle, 0, 0,
                        TimeUnit.NANOSECONDS))
                .addBefore(NettyPipeline.ReactiveBridge, "raft.frames", decoder)
                .addBefore(NettyPipeline.ReactiveBridge, "raft.inbound", new InboundHandler(this, decoder));
    }

    /** Dials {@code address} with {@code handler} at the end of the pipeline. */
    Mono<? extends Connection> dial(InetSocketAddress address, OutboundHandler handler) {
        return client.remoteAddress(() -> address)
                .doOnChannelInit((observer, channel, remote) -> channel.pipeline()
                        .addBefore(NettyPipeline.ReactiveBridge, "raft.frames",
                                new FrameDecoder(Frames.MAX_HANDSHAKE_BYTES))
                        .addBefore(NettyPipeline.ReactiveBridge, "raft.outbound", handler))
                .connect();
    }

    /** Sends {@code message} to the peer {@link RaftMessages#to} names; see {@link RaftTransport#send}. */
    @Override
    public void send(RaftMessageProto message) {
        if (closed.get()) {
            metrics.drop(Drop.CLOSED);
            return;
        }
        Drop invalid = Outgoing.check(message, settings.member(), settings.group());
        if (invalid != null) {
            metrics.drop(invalid);
            return;
        }
        PeerLink link = links.get(RaftMessages.to(message));
        if (link == null) {
            metrics.drop(Drop.UNKNOWN_MEMBER);
            return;
        }
        if (Frames.messageFrameBytes(message) > settings.maxFrameBytes()) {
            metrics.drop(Drop.OVERSIZED);
            return;
        }
        link.offer(Frames.message(message));
    }

    /**
     * The messages addressed to this member, in order per sender connection, signalled on the configured
     * scheduler. Hot: messages arrive whether or not anyone subscribes, up to the inbound buffer; beyond
     * it they are dropped ({@code inbound_overflow}). Completes on {@link #close()}.
     */
    @Override
    public Flux<RaftMessageProto> inbound() {
        return sink.flux().publishOn(settings.scheduler());
    }

    /**
     * Sets the peers to {@code peers} (member id → {@code host:port}; this member's own id, if present, is
     * left out; each must have a verifying key in this member's keys): a new peer is dialled on its first
     * message, a peer whose address changed is redialled at its new address, a peer no longer present is hung
     * up on (its queue dropped) and its inbound connections closed. Only peers may connect.
     *
     * @throws IllegalArgumentException naming the member and the value, for an address not {@code host:port}
     *     or a peer without a verifying key
     */
    public synchronized void updatePeers(Map<String, String> peers) {
        Map<String, InetSocketAddress> next = new LinkedHashMap<>();
        peers.forEach((member, address) -> {
            if (!member.equals(settings.member())) {
                if (keys.keyOf(member).isEmpty()) {
                    throw new IllegalArgumentException("peer " + member + " at " + address + " has no verifying key "
                            + "(expected one in this member's keys: " + keys + ")");
                }
                next.put(member, PeerAddress.parse(member, address));
            }
        });
        if (closed.get()) {
            return;
        }
        for (var e : next.entrySet()) {
            PeerLink link = links.get(e.getKey());
            if (link == null) {
                metrics.knowPeer(e.getKey());
                links.put(e.getKey(), new PeerLink(e.getKey(), e.getValue(), this));
            } else {
                link.moveTo(e.getValue());
            }
        }
        for (String gone : Set.copyOf(links.keySet())) {
            if (!next.containsKey(gone)) {
                Objects.requireNonNull(links.remove(gone), "the link of a peer listed under the lock")
                        .close(Drop.UNKNOWN_MEMBER);
                inboundChannels.forEach((ch, member) -> {
                    if (member.equals(gone)) {
                        ch.close();
                    }
                });
            }
        }
    }

    /**
     * Sets the members' keys to {@code next} (a member added at run time, a listener's key registered): this
     * member's own id and signing key stay. A member whose key changed, who is no longer known, or who is now a
     * listener where it was a voter (or the other way) is hung up on, its connections proven with what it was
     * closed; a peer without a key any more is dropped from the peers. Call {@link #updatePeers} after it to dial
     * a new member.
     *
     * @throws IllegalArgumentException naming what differs, when {@code next} is another member's keys
     */
    public synchronized void updateKeys(MemberKeys next) {
        MemberKeys now = keys;
        if (!next.self().equals(now.self()) || !next.own().verifying().equals(now.own().verifying())) {
            throw new IllegalArgumentException("keys of " + next.self() + " signing as " + next.own().verifying()
                    + " cannot replace those of " + now.self() + " signing as " + now.own().verifying()
                    + " (a member's id and secret stay for its life)");
        }
        keys = next;
        Set<String> changed = new TreeSet<>();
        for (String member : now.members()) {
            if (!next.keyOf(member).equals(now.keyOf(member)) || next.isListener(member) != now.isListener(member)) {
                changed.add(member);
            }
        }
        for (String member : changed) {
            if (next.keyOf(member).isEmpty()) {
                PeerLink link = links.remove(member);
                if (link != null) {
                    link.close(Drop.UNKNOWN_MEMBER);
                }
            } else {
                PeerLink link = links.get(member);
                if (link != null) {
                    link.redial(); // proven again, with its new key
                }
            }
            inboundChannels.forEach((ch, from) -> {
                if (from.equals(member)) {
                    ch.close();
                }
            });
        }
    }

    /** The peers now: member id → {@code host:port}. */
    public Map<String, String> peers() {
        Map<String, String> out = new LinkedHashMap<>();
        links.forEach((m, l) -> out.put(m, l.address().getHostString() + ":" + l.address().getPort()));
        return out;
    }

    /** The largest frame less its header: what one message may take ({@link Builder#maxFrameBytes}). */
    @Override
    public int maxMessageBytes() {
        return settings.maxFrameBytes() - Frames.HEADER_BYTES;
    }

    /** The port the server listens on (the one the system chose when bound to port 0). */
    public int port() {
        return ((InetSocketAddress) server.address()).getPort();
    }

    /** The address the server listens on. */
    public InetSocketAddress address() {
        return (InetSocketAddress) server.address();
    }

    public String member() {
        return settings.member();
    }

    public String group() {
        return settings.group();
    }

    public RaftTransportMetrics metrics() {
        return metrics;
    }

    /**
     * Closes the server (waiting, off a non-blocking thread, until the port is released), every connection
     * and every timer, and completes {@link #inbound()}; idempotent. Later messages are dropped
     * ({@code closed}).
     */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        synchronized (this) {
            links.values().forEach(l -> l.close(Drop.CLOSED));
            links.clear();
        }
        inboundChannels.keySet().forEach(Channel::close);
        if (Schedulers.isInNonBlockingThread()) {
            server.dispose();
        } else {
            try {
                server.disposeNow(Duration.ofSeconds(10));
            } catch (IllegalStateException e) {
                LOG.debug("member {}: the server took longer than 10s to close: {}", settings.member(), e.toString());
            }
        }
        loops.disposeLater(Duration.ZERO, Duration.ofSeconds(2)).subscribe();
        sink.complete();
    }

    // what the handlers use

    Settings settings() {
        return settings;
    }

    MemberKeys keys() {
        return keys;
    }

    /**
     * A refused connection from {@code remote}, for the log: at most one line per source address per
     * {@link #REFUSAL_LOG_INTERVAL}, naming how many were not logged; {@code peerLike}: INFO, else DEBUG.
     */
    void logRefusal(@Nullable SocketAddress remote, String why, boolean peerLike) {
        String source = remote instanceof InetSocketAddress a ? a.getAddress().getHostAddress() : String.valueOf(remote);
        OptionalLong unlogged = refusalLog.admit(source, settings.scheduler().now(TimeUnit.NANOSECONDS));
        if (unlogged.isEmpty()) {
            return;
        }
        String line = "member " + settings.member() + ": refused the connection from " + remote + ": " + why
                + (unlogged.getAsLong() == 0 ? "" : " (and " + unlogged.getAsLong() + " more from " + source
                        + " in the last " + REFUSAL_LOG_INTERVAL.toSeconds() + "s, not logged)");
        lastRefusalLine = line;
        if (peerLike) {
            LOG.info("{}", line);
        } else {
            LOG.debug("{}", line);
        }
    }

    /** The last refusal line logged, "" before any. */
    String lastRefusalLine() {
        return lastRefusalLine;
    }

    /** The refusal lines logged so far (the rest are counted in the metrics only). */
    long refusalLines() {
        return refusalLog.lines();
    }

    boolean checksCertificateNames() {
        return settings.tls() != null && settings.certificateNameCheck();
    }

    /** A member with an address and a verifying key. */
    boolean isPeer(String member) {
        return links.containsKey(member) && keys.keyOf(member).isPresent();
    }

    Duration backoff(long attempt) {
        RandomGenerator random = settings.random();
        synchronized (random) {
            return settings.reconnect().delay(attempt, random);
        }
    }

    void inboundOpened(String member, Channel channel) {
        inboundChannels.put(channel, member);
        if (!isPeer(member) || closed.get()) {
            channel.close(); // removed (or closed) between the check and now
        }
    }

    void inboundClosed(String member, Channel channel) {
        inboundChannels.remove(channel);
    }

    /** A message from {@code peer}'s authenticated connection, {@code bytes} on the wire. */
    void deliver(String peer, RaftMessageProto message, int bytes) {
        if (!links.containsKey(peer)) {
            metrics.drop(Drop.UNAUTHENTICATED); // no longer a peer: its connection is being closed
        } else if (!RaftMessages.from(message).equals(peer)) {
            metrics.drop(Drop.SPOOFED_SENDER);
        } else if (keys.isListener(peer) && !RaftMessages.listenerMaySend(message)) {
            metrics.drop(Drop.LISTENER_AS_VOTER);
        } else if (!RaftMessages.group(message).equals(settings.group())) {
            metrics.drop(Drop.WRONG_GROUP);
        } else if (!RaftMessages.to(message).equals(settings.member())) {
            metrics.drop(Drop.MISADDRESSED);
        } else if (!sink.emit(message)) {
            metrics.drop(closed.get() ? Drop.CLOSED : Drop.INBOUND_OVERFLOW);
        } else {
            metrics.received(peer, bytes);
        }
    }

    /** Closes a connection over the port's limit as soon as it is active: nothing of it is read. */
    private static final class CloseAtOnce extends ChannelInboundHandlerAdapter {
        @Override
        public void channelActive(ChannelHandlerContext ctx) {
            ctx.close();
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ReferenceCountUtil.release(msg);
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            ctx.close();
        }
    }

    /**
     * How a {@link NettyRaftTransport} is set up. Defaults: no peers; plain TCP; certificate names checked
     * under TLS; {@link NetworkLimits#defaults()} (its idle timeout closes a connection that carried
     * nothing for that long, 60 s, and its connections per port, 4,096); a 10 s handshake timeout (also the
     * connect timeout); 16 MiB frames; per peer at most 1,024 queued messages and 64 MiB queued; 4,096
     * undelivered inbound messages; reconnects after {@code 100 ms · 2^n} up to 5 s, ± 50 %; the
     * {@link Schedulers#parallel()} scheduler; two I/O threads.
     */
    public static final class Builder {
        private final String member;
        private final String group;
        private final MemberKeys keys;
        private @Nullable String host;
        private int port = -1;
        private Map<String, String> peers = Map.of();
        private @Nullable Tls tls;
        private boolean certificateNameCheck = true;
        private NetworkLimits limits = NetworkLimits.defaults();
        private Duration handshakeTimeout = Duration.ofSeconds(10);
        private int maxFrameBytes = 16 << 20;
        private int maxQueuedMessages = 1024;
        private long maxQueuedBytes = 64L << 20;
        private int inboundBuffer = 4096;
        private Backoff reconnect = new Backoff(Duration.ofMillis(100), Duration.ofSeconds(5), 0.5);
        private Scheduler scheduler = Schedulers.parallel();
        private RandomGenerator random = new SplittableRandom();
        private int ioThreads = 2;

        private Builder(String group, MemberKeys keys) {
            this.group = require("group", group);
            this.keys = Objects.requireNonNull(keys, "keys");
            this.member = require("member", keys.self());
        }

        /** Where the server listens (required); port 0: one the system chooses ({@link #port()}). */
        public Builder bind(String host, int port) {
            if (port < 0 || port > 65535) {
                throw new IllegalArgumentException("port is " + port + ": must be within [0, 65535]");
            }
            this.host = require("host", host);
            this.port = port;
            return this;
        }

        /** The peers at start (see {@link NettyRaftTransport#updatePeers}). */
        public Builder peers(Map<String, String> peers) {
            this.peers = Map.copyOf(peers);
            return this;
        }

        /**
         * Mutual TLS: the server serves {@code tls}'s certificate and asks clients for theirs per its client
         * authentication mode; clients present theirs and check the server's against the CA and the host
         * they dialled.
         */
        public Builder tls(Tls tls) {
            this.tls = tls;
            return this;
        }

        /**
         * Under TLS, whether a certificate's name (CN) must be the member id: the server checks the client
         * certificate's against the handshake's member, the client the server certificate's against the
         * peer it dialled. A connection without a certificate (client authentication optional) is not
         * checked. On by default.
         */
        public Builder certificateNameCheck(boolean check) {
            this.certificateNameCheck = check;
            return this;
        }

        /** The idle timeout and the connections per port of {@code limits} apply. */
        public Builder limits(NetworkLimits limits) {
            this.limits = limits;
            return this;
        }

        /** How long a connection may take to handshake, and a dial to connect. */
        public Builder handshakeTimeout(Duration timeout) {
            if (timeout == null || timeout.toMillis() < 10 || timeout.compareTo(NetworkLimits.MAX_TIMEOUT) > 0) {
                throw new IllegalArgumentException("handshakeTimeout is " + timeout + ": must be within [10ms, 1h]");
            }
            this.handshakeTimeout = timeout;
            return this;
        }

        /**
         * The largest frame, its 5 header bytes included (a message of up to {@code maxFrameBytes − 5}
         * bytes): a larger message is not sent ({@code oversized}); a larger frame received closes its
         * connection. A snapshot chunk must fit.
         */
        public Builder maxFrameBytes(int bytes) {
            if (bytes < NetworkLimits.MIN_FRAME_BYTES || bytes > NetworkLimits.MAX_FRAME_BYTES) {
                throw new IllegalArgumentException("maxFrameBytes is " + bytes + ": must be within ["
                        + NetworkLimits.MIN_FRAME_BYTES + ", " + NetworkLimits.MAX_FRAME_BYTES + "]");
            }
            this.maxFrameBytes = bytes;
            return this;
        }

        /** Per peer, the messages and the bytes waiting to be written; beyond either, dropped. */
        public Builder maxQueued(int messages, long bytes) {
            if (messages < 1 || messages > 1 << 20) {
                throw new IllegalArgumentException("maxQueuedMessages is " + messages + ": must be within [1, "
                        + (1 << 20) + "]");
            }
            if (bytes < 1 || bytes > 1L << 34) {
                throw new IllegalArgumentException("maxQueuedBytes is " + bytes + ": must be within [1, " + (1L << 34)
                        + "]");
            }
            this.maxQueuedMessages = messages;
            this.maxQueuedBytes = bytes;
            return this;
        }

        /**
         * The messages received and not yet taken by every subscriber of {@code inbound()} (Reactor rounds it
         * up to a power of two, at least 8).
         */
        public Builder inboundBuffer(int messages) {
            if (messages < 1 || messages > 1 << 20) {
                throw new IllegalArgumentException("inboundBuffer is " + messages + ": must be within [1, "
                        + (1 << 20) + "]");
            }
            this.inboundBuffer = messages;
            return this;
        }

        /** The wait between failed connection attempts to a peer. */
        public Builder reconnect(Backoff backoff) {
            this.reconnect = Objects.requireNonNull(backoff, "reconnect");
            return this;
        }

        /** Where {@code inbound()} signals and backoff timers run. */
        public Builder scheduler(Scheduler scheduler) {
            this.scheduler = Objects.requireNonNull(scheduler, "scheduler");
            return this;
        }

        /** The jitter's draws (seed it to repeat a run). */
        public Builder random(RandomGenerator random) {
            this.random = Objects.requireNonNull(random, "random");
            return this;
        }

        /** Event-loop threads, shared by the server and the peers' connections. */
        public Builder ioThreads(int threads) {
            if (threads < 1 || threads > 64) {
                throw new IllegalArgumentException("ioThreads is " + threads + ": must be within [1, 64]");
            }
            this.ioThreads = threads;
            return this;
        }

        /**
         * Binds the server and returns the running transport.
         *
         * @throws IllegalStateException naming the address, when it cannot be bound (in use)
         * @throws IllegalArgumentException for a setting out of range or a peer address not {@code host:port}
         */
        public NettyRaftTransport start() {
            if (host == null) {
                throw new IllegalArgumentException("member " + member + ": bind(host, port) was not given");
            }
            if (maxQueuedBytes < maxFrameBytes) {
                throw new IllegalArgumentException("maxQueuedBytes " + maxQueuedBytes + " is below maxFrameBytes "
                        + maxFrameBytes + ": the largest message could never be queued");
            }
            return new NettyRaftTransport(new Settings(member, group, keys, host, port, peers, tls,
                    certificateNameCheck, limits, handshakeTimeout, maxFrameBytes, maxQueuedMessages, maxQueuedBytes,
                    inboundBuffer, reconnect, scheduler, random, ioThreads));
        }

        private static String require(String what, String value) {
            if (value == null || value.isBlank()) {
                throw new IllegalArgumentException(what + " must not be empty");
            }
            return value;
        }
    }
}
