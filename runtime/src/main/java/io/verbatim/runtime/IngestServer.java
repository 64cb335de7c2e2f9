package io.verbatim.runtime;

import com.google.protobuf.InvalidProtocolBufferException;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.QueryStringDecoder;
import io.verbatim.model.entry.Entry;
import io.verbatim.model.entry.EntryFormatException;
import io.verbatim.model.entry.SourcePosition;
import io.verbatim.model.proto.MessageMetadata;
import io.verbatim.pipeline.ProducerSession.Receipt;
import io.verbatim.pipeline.RemoteException;
import io.verbatim.pipeline.memory.MemoryCluster;
import io.verbatim.runtime.proto.IngestReply;
import io.verbatim.runtime.proto.IngestSend;
import java.nio.charset.StandardCharsets;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import java.util.function.Supplier;
import reactor.core.publisher.Mono;
import reactor.netty.Connection;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;
import reactor.netty.http.server.HttpServerRequest;
import reactor.netty.http.server.HttpServerResponse;
import reactor.netty.http.server.WebsocketServerSpec;
import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * A broker's ingest endpoint: where replicators of other clusters write (one WebSocket per ordered
 * session) and read this cluster's layouts (one WebSocket streaming each new layout). Every arriving
 * entry goes through the destination's rules of {@link MemoryCluster#ingest}: deduplication on the source
 * position, the session's sequence numbers (a gap or a refusal refuses the rest of the session; a newer
 * session fences older ones), sealed segments refused. A malformed frame or entry is answered with what
 * was wrong and ends the session; nothing of it is stored.
 */
final class IngestServer {
    static final String SESSION_PATH = "/ingest/v1/session";
    static final String LAYOUTS_PATH = "/ingest/v1/layouts";
    private static final Logger LOG = Loggers.getLogger(IngestServer.class);

    private final String cluster;
    private final Function<String, MemoryCluster> topics;
    private final Arrival arrivals;
    private final Supplier<List<String>> brokerUrls;
    private final String token;
    private final int maxFrameBytes;
    private final Counter persisted;
    private final Counter duplicates;
    private final Map<IngestReply.Result, Counter> refusals = new EnumMap<>(IngestReply.Result.class);
    private final Set<Connection> connections = ConcurrentHashMap.newKeySet();
    private DisposableServer server;

    /** Told of every entry stored: replicated traffic is load on the segment like any producer's. */
    @FunctionalInterface
    interface Arrival {
        Arrival NONE = (topic, segmentId, messages, bytes) -> { };

        void stored(String topic, long segmentId, int messages, int bytes);
    }

    /**
     * @param topics the cluster's storage of a topic, or {@code null} when it does not host the topic
     * @param brokerUrls every broker's ingest URL, in broker order
     */
    IngestServer(String cluster, int broker, Function<String, MemoryCluster> topics, Supplier<List<String>> brokerUrls,
            String token, int maxFrameBytes, MeterRegistry registry, Arrival arrivals) {
        this.cluster = cluster;
        this.topics = topics;
        this.arrivals = arrivals;
        this.brokerUrls = brokerUrls;
        this.token = token;
        this.maxFrameBytes = maxFrameBytes;
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
        server = HttpServer.create().host(host).port(port)
                .doOnConnection(c -> {
                    connections.add(c);
                    c.onDispose(() -> connections.remove(c));
                })
                .route(routes -> routes.get(SESSION_PATH, this::session).get(LAYOUTS_PATH, this::layouts))
                .bindNow();
        return this;
    }

    String baseUrl() {
        return "http://127.0.0.1:" + server.port();
    }

    int port() {
        return server.port();
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
        return checked(request, response, false, (storage, params) -> response.sendWebsocket((in, out) -> {
            String topic = params.get("topic");
            return out.send(storage.layouts().map(l -> Unpooled.wrappedBuffer(
                    LayoutCodec.toProto(topic, l, brokerUrls.get()).toByteArray()))).then();
        }, spec()));
    }

    private Mono<Void> session(HttpServerRequest request, HttpServerResponse response) {
        return checked(request, response, true, (storage, params) -> {
            long segment = Long.parseLong(params.get("segment"));
            String producer = params.get("producer");
            String topic = params.get("topic");
            return response.sendWebsocket((in, out) -> {
                long session = storage.newSessionId();
                return out.send(in.aggregateFrames(maxFrameBytes).receive()
                        .map(frame -> receive(topic, storage, segment, producer, session, frame))
                        .takeUntil(reply -> reply.getResult() == IngestReply.Result.MALFORMED)
                        .map(reply -> Unpooled.wrappedBuffer(reply.toByteArray()))).then();
            }, spec());
        });
    }

    private IngestReply receive(String topic, MemoryCluster storage, long segment, String producer, long session,
            ByteBuf frame) {
        IngestSend send;
        try {
            send = IngestSend.parseFrom(ByteBufUtil.getBytes(frame));
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
            return IngestReply.newBuilder().setSequence(send.getSequence())
                    .setResult(receipt == Receipt.PERSISTED ? IngestReply.Result.PERSISTED : IngestReply.Result.DUPLICATE)
                    .build();
        } catch (RemoteException e) {
            return refused(send.getSequence(), switch (e.kind()) {
                case SEALED -> IngestReply.Result.SEALED;
                case OUT_OF_ORDER -> IngestReply.Result.OUT_OF_ORDER;
                case IN_FLIGHT -> IngestReply.Result.IN_FLIGHT;
                default -> IngestReply.Result.REJECTED;
            }, e.getMessage());
        }
    }

    private IngestReply refused(long sequence, IngestReply.Result result, String detail) {
        refusals.get(result).increment();
        if (result == IngestReply.Result.MALFORMED) {
            LOG.warn("{}: ingest refused a malformed send: {}", cluster, detail);
        }
        return IngestReply.newBuilder().setSequence(sequence).setResult(result).setDetail(detail).build();
    }

    private WebsocketServerSpec spec() {
        return WebsocketServerSpec.builder().maxFramePayloadLength(maxFrameBytes).build();
    }

    /** What a checked request goes on to do. */
    private interface Upgrade {
        Mono<Void> apply(MemoryCluster storage, Map<String, String> params);
    }

    /** Credentials, then the parameters, each refused with the problem named before any upgrade. */
    private Mono<Void> checked(HttpServerRequest request, HttpServerResponse response, boolean session,
            Upgrade upgrade) {
        String auth = request.requestHeaders().get(HttpHeaderNames.AUTHORIZATION);
        if (auth == null) {
            return text(response, 401, "no bearer token: the ingest endpoint needs the broker role");
        }
        if (!auth.equals("Bearer " + token)) {
            return text(response, 403, "the bearer token is not valid for the broker role");
        }
        Map<String, String> params = new HashMap<>();
        new QueryStringDecoder(request.uri()).parameters().forEach((k, v) -> params.put(k, v.get(0)));
        String topic = params.get("topic");
        MemoryCluster storage = topic == null ? null : topics.apply(topic);
        if (storage == null) {
            return text(response, 404, "cluster " + cluster + " has no topic '" + topic + "'");
        }
        if (session) {
            String segment = params.get("segment");
            if (segment == null || !segment.matches("\\d{1,18}")) {
                return text(response, 400, "segment '" + segment + "' is not a segment id");
            }
            String producer = params.get("producer");
            if (producer == null || producer.isBlank()) {
                return text(response, 400, "a session needs a producer name");
            }
        }
        return upgrade.apply(storage, params);
    }

    private static Mono<Void> text(HttpServerResponse response, int status, String message) {
        return response.status(HttpResponseStatus.valueOf(status)).header(HttpHeaderNames.CONTENT_TYPE, "text/plain")
                .sendString(Mono.just(message + "\n"), StandardCharsets.UTF_8).then();
    }
}
