package io.verbatim.runtime.broker;

import com.google.protobuf.InvalidProtocolBufferException;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.websocketx.BinaryWebSocketFrame;
import io.netty.handler.codec.http.websocketx.PingWebSocketFrame;
import io.netty.handler.codec.http.websocketx.PongWebSocketFrame;
import io.netty.handler.codec.http.websocketx.TextWebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketFrame;
import io.verbatim.embedded.MemorySegments;
import io.verbatim.model.Segment;
import io.verbatim.model.Stamp;
import io.verbatim.model.entry.Entry;
import io.verbatim.model.entry.EntryFormatException;
import io.verbatim.model.entry.SourcePosition;
import io.verbatim.model.proto.MessageMetadata;
import io.verbatim.net.LogText;
import io.verbatim.net.NetServer;
import io.verbatim.net.Principal;
import io.verbatim.net.Query;
import io.verbatim.net.Role;
import io.verbatim.net.Verdict;
import io.verbatim.pipeline.ProducerSession.Receipt;
import io.verbatim.pipeline.RemoteException;
import io.verbatim.runtime.proto.IngestReply;
import io.verbatim.runtime.proto.IngestSend;
import io.verbatim.runtime.storage.LayoutRecords;
import io.verbatim.runtime.storage.TopicStorage;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.netty.Connection;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;
import reactor.netty.http.server.HttpServerRequest;
import reactor.netty.http.server.HttpServerResponse;
import reactor.netty.http.server.WebsocketServerSpec;
import reactor.netty.http.websocket.WebsocketInbound;
import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * A broker's ingest endpoint: where replicators of other clusters write (one WebSocket per ordered
 * session) and read this cluster's layouts (one WebSocket streaming each new layout). Only a peer
 * cluster may call it, and a session carries only what that cluster may send: its producer is
 * {@code pulsar.repl.<caller>.<source segment>}, and every entry is stamped as replicated from the
 * caller, at the send's source position, with a stamp inside one bucket of the destination segment
 * ({@code FORBIDDEN} otherwise). Every arriving entry then goes through the destination's rules of
 * {@link MemorySegments#ingest}: deduplication on the source position (a position implausibly far past the
 * highest stored is refused), the session's sequence numbers (a gap or a refusal refuses the rest of the
 * session; a newer session fences older ones), sealed segments refused. An entry is answered once the
 * cluster's journal made it durable (at once in memory only), replies in the order of the sends. A malformed or forbidden frame is answered with what was wrong and ends the session;
 * nothing of it is stored. A session that hears nothing for {@code network.idleTimeout} (healthy clients
 * ping) is closed.
 */
public final class IngestServer {
    public static final String SESSION_PATH = "/ingest/v1/session";
    static final String LAYOUTS_PATH = "/ingest/v1/layouts";
    /** How many sends of one session may wait for the journal at once. */
    private static final int DURABLE_WAITS = 1024;
    private static final Logger LOG = Loggers.getLogger(IngestServer.class);

    private final String cluster;
    private final int broker;
    private final Function<String, Optional<TopicStorage>> topics;
    private final Arrival arrivals;
    private final Supplier<List<String>> brokerUrls;
    private final NetServer net;
    private final Set<String> peers;
    private final int maxFrameBytes;
    private final Counter persisted;
    private final Counter duplicates;
    private final Map<IngestReply.Result, Counter> refusals = new EnumMap<>(IngestReply.Result.class);
    private final Set<Connection> connections = ConcurrentHashMap.newKeySet();
    private @Nullable DisposableServer server;

    /** Told of every entry stored: replicated traffic is load on the segment like any producer's. */
    @FunctionalInterface
    public interface Arrival {
        Arrival NONE = (topic, segmentId, messages, bytes) -> { };

        void stored(String topic, long segmentId, int messages, int bytes);
    }

    /**
     * @param topics the cluster's storage of a topic, or empty when it does not host the topic
     * @param brokerUrls the cluster's ingest URLs its layout records name ({@link Brokers#layoutUrls})
     * @param net who may call (a peer cluster's signature or certificate), the port's limits and TLS
     * @param peers the clusters that replicate into this one
     */
    public IngestServer(String cluster, int broker, Function<String, Optional<TopicStorage>> topics,
            Supplier<List<String>> brokerUrls,
            NetServer net, Set<String> peers, MeterRegistry registry, Arrival arrivals) {
        this.cluster = cluster;
        this.broker = broker;
        this.topics = topics;
        this.arrivals = arrivals;
        this.brokerUrls = brokerUrls;
        this.net = net;
        this.peers = Set.copyOf(peers);
        this.maxFrameBytes = net.limits().maxFrameBytes();
        String b = Integer.toString(broker);
        this.persisted = Counter.builder("verbatim.ingest.entries").tag("broker", b).tag("result", "persisted")
                .description("replicated entries arriving at this broker, by what happened to them").register(registry);
        this.duplicates = Counter.builder("verbatim.ingest.entries").tag("broker", b).tag("result", "duplicate")
                .register(registry);
        for (IngestReply.Result r : IngestReply.Result.values()) {
            if (r != IngestReply.Result.PERSISTED && r != IngestReply.Result.DUPLICATE && r != IngestReply.Result.UNRECOGNIZED) {
                refusals.put(r, Counter.builder("verbatim.ingest.entries").tag("broker", b)
                        .tag("result", r.name().toLowerCase(Locale.ROOT)).register(registry));
            }
        }
    }

    IngestServer start(int port) {
        return start("127.0.0.1", port);
    }

    /** Binds {@code host:port} ({@code 0.0.0.0}: every interface; port 0 picks a free one). */
    IngestServer start(String host, int port) {
        server = net.apply(HttpServer.create().host(host).port(port), "ingest-" + broker)
                .doOnConnection(c -> {
                    connections.add(c);
                    c.onDispose(() -> connections.remove(c));
                })
                .route(routes -> routes.get(SESSION_PATH, this::session).get(LAYOUTS_PATH, this::layouts))
                .bindNow();
        return this;
    }

    String baseUrl() {
        return net.scheme() + "://127.0.0.1:" + bound().port();
    }

    int port() {
        return bound().port();
    }

    private DisposableServer bound() {
        return Objects.requireNonNull(server, "not started");
    }

    /** Stops as a crashed broker would: every open connection drops at once, nothing more is answered. */
    void stop() {
        if (server != null) {
            server.disposeNow();
            connections.forEach(Connection::dispose);
            server = null;
        }
    }

    boolean isRunning() {
        return server != null;
    }

    private Mono<Void> layouts(HttpServerRequest request, HttpServerResponse response) {
        return checked(request, response, false, (caller, storage, params) -> response.sendWebsocket((in, out) -> {
            closeWhenSilent(in);
            String topic = Objects.requireNonNull(params.get("topic")); // checked
            // The client's pings are answered by Reactor Netty itself; what else it sends is read and dropped, so
            // that its close, or a reset (a peer killed or restarting), ends the stream here, quietly: an inbound
            // nobody read would end in Reactor Netty's ERROR line with the reset's trace.
            Mono<Void> gone = in.receiveFrames().then().onErrorResume(e -> Mono.empty());
            return Mono.firstWithSignal(out.send(storage.layouts().map(l -> Unpooled.wrappedBuffer(
                    LayoutRecords.toProto(topic, l, brokerUrls.get()).toByteArray()))).then(), gone);
        }, spec()));
    }

    private Mono<Void> session(HttpServerRequest request, HttpServerResponse response) {
        return checked(request, response, true, (caller, topicStorage, params) -> {
            MemorySegments storage = topicStorage.memory().orElseThrow(); // checked
            long segment = Long.parseLong(params.get("segment"));
            String producer = Objects.requireNonNull(params.get("producer")); // checked
            String topic = Objects.requireNonNull(params.get("topic"));
            Rules rules = new Rules(caller);
            return response.sendWebsocket((in, out) -> {
                closeWhenSilent(in);
                long session = storage.newSessionId();
                // Each send is decided and stored as it arrives, in order; its reply goes once what it relies on is
                // durable. Replies keep the sends' order, and up to DURABLE_WAITS sends wait at once.
                return out.send(in.aggregateFrames(maxFrameBytes).receiveFrames()
                        .map(Frame::of) // copied out: Reactor Netty releases the frame itself, a filter would again
                        .filter(f -> !f.control())
                        .map(f -> f.binary() ? receive(topic, storage, segment, producer, session, rules, f.bytes())
                                : refused(0, IngestReply.Result.MALFORMED, "a " + f.kind() + " frame: a session takes "
                                        + "binary frames, one IngestSend each"))
                        .takeUntil(a -> a.reply().getResult() == IngestReply.Result.MALFORMED
                                || a.reply().getResult() == IngestReply.Result.FORBIDDEN)
                        .concatMap(this::whenDurable, DURABLE_WAITS)
                        .map(reply -> Unpooled.wrappedBuffer(reply.toByteArray()))).then();
            }, spec());
        });
    }

    /** The producer names of {@code caller}'s replicators: {@code pulsar.repl.<caller>.<source segment id>}. */
    private static String producerPrefix(String caller) {
        return "pulsar.repl." + caller + ".";
    }

    /** A session or stream that hears nothing, not even a ping, for the idle timeout is half-open: closed. */
    private void closeWhenSilent(WebsocketInbound in) {
        in.withConnection(c -> c.onReadIdle(net.limits().idleTimeout().toMillis(), c::dispose));
    }

    /** A received frame's kind, and its bytes when it is a binary one. Nothing reference-counted. */
    private record Frame(String kind, byte[] bytes) {
        static Frame of(WebSocketFrame frame) {
            if (frame instanceof BinaryWebSocketFrame) {
                return new Frame("binary", ByteBufUtil.getBytes(frame.content()));
            }
            return new Frame(frame instanceof TextWebSocketFrame ? "text" : frame instanceof PingWebSocketFrame ? "ping"
                    : frame instanceof PongWebSocketFrame ? "pong" : frame.getClass().getSimpleName(), new byte[0]);
        }

        boolean binary() {
            return kind.equals("binary");
        }

        /** A ping or a pong: no send, nothing to answer (Reactor Netty answers pings itself). */
        boolean control() {
            return kind.equals("ping") || kind.equals("pong");
        }
    }

    /** What the authenticated cluster may send on one session. */
    private record Rules(String caller) {
    }

    /** A send's reply, and whether it may go only once the cluster's journal holds what it answers for. */
    private record Answer(IngestReply reply, @Nullable MemorySegments waitFor) {
        Answer(IngestReply reply) {
            this(reply, null);
        }
    }

    /** {@code a}'s reply once what it answers for is durable; unavailable when the journal failed. */
    private Mono<IngestReply> whenDurable(Answer a) {
        MemorySegments storage = a.waitFor();
        if (storage == null) {
            return Mono.just(a.reply());
        }
        return storage.durable().thenReturn(a.reply()).onErrorResume(e -> Mono.just(refused(a.reply().getSequence(),
                IngestReply.Result.UNAVAILABLE, String.valueOf(e.getMessage())).reply()));
    }

    private Answer receive(String topic, MemorySegments storage, long segment, String producer, long session,
            Rules rules, byte[] frame) {
        IngestSend send;
        try {
            send = IngestSend.parseFrom(frame);
        } catch (InvalidProtocolBufferException e) {
            return refused(0, IngestReply.Result.MALFORMED, "frame is not an IngestSend: " + e.getMessage());
        }
        SourcePosition position;
        Entry entry;
        try {
            position = new SourcePosition(send.getLedgerId(), send.getEntryId(), send.getPart());
            entry = Entry.parse(send.getEntry().asReadOnlyByteBuffer());
        } catch (EntryFormatException | IllegalArgumentException e) {
            return refused(send.getSequence(), IngestReply.Result.MALFORMED, "entry at " + send.getLedgerId() + ":"
                    + send.getEntryId() + " is unusable: " + e.getMessage());
        }
        String forbidden = forbidden(storage, segment, rules, position, entry);
        if (forbidden != null) {
            return refused(send.getSequence(), IngestReply.Result.FORBIDDEN, "entry at " + position + ": " + forbidden);
        }
        try {
            Receipt receipt = storage.ingest(segment, producer, session, send.getSequence(), position, entry);
            if (receipt == Receipt.PERSISTED) {
                persisted.increment();
                MessageMetadata md = entry.metadata();
                arrivals.stored(topic, segment, md.hasNumMessagesInBatch() ? md.getNumMessagesInBatch() : 1,
                        entry.payload().remaining());
            } else {
                duplicates.increment();
            }
            return new Answer(IngestReply.newBuilder().setSequence(send.getSequence())
                    .setResult(receipt == Receipt.PERSISTED ? IngestReply.Result.PERSISTED : IngestReply.Result.DUPLICATE)
                    .build(), storage); // a duplicate too: what stored it first may not be durable yet
        } catch (RemoteException e) {
            return refused(send.getSequence(), switch (e.kind()) {
                case SEALED -> IngestReply.Result.SEALED;
                case UNAVAILABLE -> IngestReply.Result.UNAVAILABLE;
                case OUT_OF_ORDER -> IngestReply.Result.OUT_OF_ORDER;
                case IN_FLIGHT -> IngestReply.Result.IN_FLIGHT;
                case IMPLAUSIBLE -> IngestReply.Result.IMPLAUSIBLE;
                default -> IngestReply.Result.REJECTED;
            }, e.getMessage());
        }
    }

    /** Why the caller may not send {@code entry} into {@code segment} on this session, or {@code null}. */
    private static @Nullable String forbidden(MemorySegments storage, long segment, Rules rules, SourcePosition position,
            Entry entry) {
        String from = entry.metadata().hasReplicatedFrom() ? entry.metadata().getReplicatedFrom() : null;
        if (!rules.caller().equals(from)) {
            return "replicated_from is " + (from == null ? "not set" : "'" + from + "'") + ", but the session is "
                    + rules.caller() + "'s";
        }
        SourcePosition stamped;
        try {
            stamped = entry.sourcePosition().orElse(null);
        } catch (IllegalArgumentException e) {
            stamped = null;
        }
        if (!position.equals(stamped)) {
            return "the entry is stamped with source position " + stamped + ", not the send's";
        }
        Stamp stamp = entry.facts().stamp().orElse(null);
        if (stamp == null) {
            return "the entry has no stamp (entry_hash_min/max)";
        }
        Segment destination = storage.layout().segment(segment).orElse(null);
        if (destination != null && !destination.buckets().holdsInOneBucket(stamp.asRange())) {
            return "its stamp " + stamp.asRange().toHexString() + " is not inside one bucket of destination segment "
                    + destination.descriptor();
        }
        return null;
    }

    /** A refusal; its detail may quote what the peer sent ({@code replicated_from}): escaped, on one line. */
    private Answer refused(long sequence, IngestReply.Result result, @Nullable String detail) {
        Objects.requireNonNull(refusals.get(result)).increment();
        String escaped = LogText.escape(detail);
        if (result == IngestReply.Result.MALFORMED || result == IngestReply.Result.FORBIDDEN
                || result == IngestReply.Result.IMPLAUSIBLE) {
            LOG.warn("{}: ingest refused a {} send: {}", cluster, result.name().toLowerCase(Locale.ROOT), escaped);
        }
        return new Answer(IngestReply.newBuilder().setSequence(sequence).setResult(result).setDetail(escaped).build());
    }

    private WebsocketServerSpec spec() {
        return WebsocketServerSpec.builder().maxFramePayloadLength(maxFrameBytes).build();
    }

    /** What a checked request goes on to do. */
    private interface Upgrade {
        Mono<Void> apply(String caller, TopicStorage storage, Map<String, String> params);
    }

    /**
     * Credentials (a peer cluster's), the parameters, then the upgrade header, each refused with the
     * problem named before any upgrade (a plain GET gets 426, not Reactor Netty's failed handshake).
     */
    private Mono<Void> checked(HttpServerRequest request, HttpServerResponse response, boolean session,
            Upgrade upgrade) {
        Verdict verdict = net.check(request, Role.BROKER, "the ingest endpoint");
        if (verdict instanceof Verdict.Refused r) {
            return NetServer.text(response, r.status(), r.reason());
        }
        String caller = ((Principal.Cluster) ((Verdict.Allowed) verdict).principal()).name();
        if (caller.equals(cluster) || !peers.contains(caller)) {
            return NetServer.text(response, 403, "cluster " + caller + " is not a peer of " + cluster
                    + (caller.equals(cluster) ? " (a cluster does not replicate into itself)" : " " + new TreeSet<>(peers)));
        }
        Map<String, String> params;
        try {
            params = Query.parse(request.uri());
        } catch (Query.BadParameter e) {
            return NetServer.text(response, 400, String.valueOf(e.getMessage()));
        }
        String topic = params.get("topic");
        TopicStorage storage = topic == null ? null : topics.apply(topic).orElse(null);
        if (storage == null) {
            return NetServer.text(response, 404, "cluster " + cluster + " has no topic '" + topic + "'");
        }
        if (session && storage.memory().isEmpty()) {
            return NetServer.text(response, 409, "cluster " + cluster + " keeps its segments on Pulsar (storage.type "
                    + "pulsar): replicators write into its Pulsar, not into this endpoint");
        }
        if (session) {
            String segment = params.get("segment");
            if (segment == null || !segment.matches("\\d{1,18}")) {
                return NetServer.text(response, 400, "segment '" + segment + "' is not a segment id");
            }
            String producer = params.get("producer");
            if (producer == null || producer.isBlank()) {
                return NetServer.text(response, 400, "a session needs a producer name");
            }
            String prefix = producerPrefix(caller);
            if (!producer.startsWith(prefix) || !producer.substring(prefix.length()).matches("\\d{1,18}")) {
                return NetServer.text(response, 403, "producer '" + producer + "' is not one cluster " + caller
                        + " may use (expected " + prefix + "<source segment id>)");
            }
        }
        if (!NetServer.asksForWebSocket(request)) {
            return NetServer.notWebSocket(request, response);
        }
        // The upgrade waits for the request's (empty) body to end: Reactor Netty stops the request's read and
        // request timeouts there, and a WebSocket upgraded before it would be cut when they fire.
        return request.receive().then(Mono.defer(() -> upgrade.apply(caller, storage, params)));
    }
}
