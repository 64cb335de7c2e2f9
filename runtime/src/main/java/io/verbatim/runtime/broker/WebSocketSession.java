package io.verbatim.runtime.broker;

import com.google.protobuf.ByteString;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.UnsafeByteOperations;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.websocketx.BinaryWebSocketFrame;
import io.netty.handler.codec.http.websocketx.PingWebSocketFrame;
import io.verbatim.model.entry.Entry;
import io.verbatim.model.entry.SourcePosition;
import io.verbatim.net.LogText;
import io.verbatim.net.NetworkLimits;
import io.verbatim.pipeline.ProducerSession;
import io.verbatim.pipeline.RemoteException;
import io.verbatim.pipeline.RemoteException.Kind;
import io.verbatim.runtime.proto.IngestReply;
import io.verbatim.runtime.proto.IngestSend;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Scheduler;
import reactor.netty.http.client.HttpClient;
import reactor.netty.http.client.WebsocketClientSpec;
import reactor.netty.http.websocket.WebsocketInbound;
import reactor.netty.http.websocket.WebsocketOutbound;

/**
 * One ordered replication session over one WebSocket: sends go out in call order with their sequence
 * number, replies come back in order and complete the matching send. Any failure breaks the session
 * (later sends fail at once; the replicator opens a new one): a refused send, a lost connection, or a
 * connection that never opened.
 */
final class WebSocketSession implements ProducerSession {
    private final long segmentId;
    private final Sinks.Many<IngestSend> outbound = Sinks.many().unicast().onBackpressureBuffer();
    private final Map<Long, Sinks.One<Receipt>> pending = new ConcurrentHashMap<>();
    private final HeartbeatWatch heartbeat;
    private final Disposable connection;
    private long nextSequence;
    private volatile boolean broken;
    private volatile String brokenBecause = "an earlier send failed";
    private volatile boolean disposed;

    /**
     * @param beat how often it pings, and how long it may hear nothing (opening included) before it is dead
     * @param timer the clock of the heartbeat and of the simulated round trip
     */
    WebSocketSession(HttpClient client, WebsocketClientSpec spec, NetworkLimits limits, String uri, long segmentId,
            Duration halfRtt, Heartbeat beat, Scheduler timer) {
        this.segmentId = segmentId;
        this.heartbeat = new HeartbeatWatch(beat, timer, "the session to remote segment " + segmentId);
        this.connection = client.websocket(spec).uri(uri).handle((in, out) -> {
            // The simulated wire holds everything sent within the last half round trip: the delay stage must
            // not wait for the socket's demand (Reactor Netty asks for 128 frames at a time), or the link
            // would carry at most 128 frames per half round trip whatever the window.
            Flux<IngestSend> sends = halfRtt.isZero() ? outbound.asFlux()
                    : outbound.asFlux().delaySequence(halfRtt, timer).onBackpressureBuffer();
            Mono<Void> sending = out.send(sends.map(s -> Unpooled.wrappedBuffer(s.toByteArray()))).then();
            Flux<byte[]> replies = binaryFrames(in, limits, heartbeat);
            Mono<Void> receiving = (halfRtt.isZero() ? replies : replies.delaySequence(halfRtt, timer))
                    .doOnNext(this::onReply).then();
            heartbeat.heard(); // the opening was answered
            heartbeat.pingWith(() -> ping(out));
            return Mono.firstWithSignal(sending, receiving);
        }).doOnTerminate(heartbeat::dispose) // a closed connection ends now, not when the silence expires
                .mergeWith(heartbeat.expired()).subscribe(v -> { }, e -> lost("connection failed: " + e.getMessage()),
                () -> lost("connection closed"));
    }

    /**
     * The binary frames {@code in} receives, as bytes (pongs left out); every frame, pongs included, tells
     * {@code heartbeat} the connection lives.
     */
    static Flux<byte[]> binaryFrames(WebsocketInbound in, NetworkLimits limits, HeartbeatWatch heartbeat) {
        return in.aggregateFrames(limits.maxFrameBytes()).receiveFrames().doOnNext(f -> heartbeat.heard())
                .filter(f -> f instanceof BinaryWebSocketFrame).map(f -> ByteBufUtil.getBytes(f.content()));
    }

    /** One ping, fire and forget: a connection that cannot take it is closing, which the session hears anyway. */
    static void ping(WebsocketOutbound out) {
        out.sendObject(new PingWebSocketFrame()).then().subscribe(v -> { }, e -> { });
    }

    @Override
    public Mono<Receipt> send(Entry entry, SourcePosition position) {
        return Mono.defer(() -> {
            Sinks.One<Receipt> reply = Sinks.one();
            synchronized (this) {
                if (broken || disposed) {
                    return Mono.error(new RemoteException(Kind.SESSION_BROKEN, segmentId, brokenBecause));
                }
                long seq = nextSequence++;
                pending.put(seq, reply);
                outbound.emitNext(IngestSend.newBuilder().setSequence(seq).setLedgerId(position.ledgerId())
                        .setEntryId(position.entryId()).setPart(position.part())
                        .setEntry(wrap(entry)).build(),
                        Sinks.EmitFailureHandler.busyLooping(Duration.ofSeconds(1)));
            }
            return reply.asMono().doOnError(e -> broken = true);
        });
    }

    /** The entry's buffers as one ByteString without copying them: the frame's serialization is the one copy. */
    private static ByteString wrap(Entry entry) {
        ByteString out = ByteString.EMPTY;
        for (ByteBuffer b : entry.buffers()) {
            out = out.concat(UnsafeByteOperations.unsafeWrap(b)); // stored entries never change
        }
        return out;
    }

    private void onReply(byte[] bytes) {
        IngestReply reply;
        try {
            reply = IngestReply.parseFrom(bytes);
        } catch (InvalidProtocolBufferException e) {
            lost("the remote sent a reply that does not parse");
            return;
        }
        Sinks.One<Receipt> waiting = pending.remove(reply.getSequence());
        if (waiting == null) {
            return;
        }
        switch (reply.getResult()) {
            case PERSISTED -> waiting.tryEmitValue(Receipt.PERSISTED);
            case DUPLICATE -> waiting.tryEmitValue(Receipt.DUPLICATE);
            default -> {
                broken = true;
                // the detail is the peer's text: escaped, it cannot forge lines where the failure is logged
                waiting.tryEmitError(new RemoteException(kind(reply.getResult()), segmentId,
                        LogText.escape(reply.getDetail())));
            }
        }
    }

    private static Kind kind(IngestReply.Result result) {
        return switch (result) {
            case SEALED -> Kind.SEALED;
            case UNAVAILABLE -> Kind.UNAVAILABLE;
            case OUT_OF_ORDER -> Kind.OUT_OF_ORDER;
            case IN_FLIGHT -> Kind.IN_FLIGHT;
            default -> Kind.REJECTED;
        };
    }

    private synchronized void lost(String why) {
        if (!broken) {
            brokenBecause = why;
        }
        broken = true;
        heartbeat.dispose();
        for (Long seq : pending.keySet()) {
            Sinks.One<Receipt> waiting = pending.remove(seq);
            if (waiting != null) {
                waiting.tryEmitError(new RemoteException(Kind.UNAVAILABLE, segmentId, why));
            }
        }
    }

    @Override
    public void dispose() {
        disposed = true;
        outbound.tryEmitComplete();
        heartbeat.dispose();
        connection.dispose();
        lost("session closed");
    }

    @Override
    public boolean isDisposed() {
        return disposed;
    }
}
