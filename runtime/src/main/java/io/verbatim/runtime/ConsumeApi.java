package io.verbatim.runtime;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.verbatim.config.SubscriptionConfig;
import io.verbatim.model.entry.Message;
import io.verbatim.net.LogText;
import io.verbatim.net.NetServer;
import io.verbatim.net.Query;
import io.verbatim.net.Role;
import io.verbatim.net.Verdict;
import io.verbatim.runtime.broker.Subscription;
import io.verbatim.runtime.broker.Subscription.Delivery;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;
import reactor.core.Disposable;
import reactor.core.Disposables;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Scheduler;
import reactor.netty.http.server.HttpServerRequest;
import reactor.netty.http.server.HttpServerResponse;
import reactor.netty.http.server.HttpServerRoutes;
import reactor.netty.http.server.WebsocketServerSpec;
import reactor.netty.http.websocket.WebsocketInbound;
import reactor.netty.http.websocket.WebsocketOutbound;

/**
 * A PIP-486 subscription's consumer over a WebSocket, on every broker process's admin port (the admin role):
 * {@code GET /admin/v2/scalable/consume?topic=T&subscription=S&consumer=i&of=k[&receiverQueueSize=n]}.
 *
 * <p>The process dispatches to consumer {@code i} of {@code k} the entries of the segments it acts on: with many
 * broker processes in a cluster, a consumer connects to every one (as {@code testkit.NetworkConsumer} does, from
 * {@code GET /admin/v2/scalable/members}) and each segment's entries come from the process that owns it, moving
 * with it. The first connection for a subscription opens it on this process with {@code k} consumers; it is
 * closed {@link #LINGER} after its last connection closed, unless one comes back (its cursors stay, holding what was
 * not acknowledged; what was acknowledged out of order is delivered again only once it closed).
 *
 * <p>Frames, as JSON text in the manner of Pulsar's WebSocket consumer:
 * <ul>
 * <li>to the client, one per entry: {@code {"messageId": "...", "segment": 3, "bucket": 1, "position":
 *     "12:40", "messages": [{"key": "k", "payload": "<base64>"}, ...]}};
 * <li>from the client, an acknowledgement: {@code {"messageId": "..."}}. Until the client acknowledges an entry
 *     its segment's cursor does not go past it; what the client did not acknowledge when the connection ends is
 *     delivered again (to the next connection of the consumer, or by the segment's next owner). At most the
 *     subscription's receiver queue size of entries are unacknowledged at once.
 * </ul>
 * Anything else from the client is answered with {@code {"error": "..."}} naming what was wrong, and changes
 * nothing. Refused before the upgrade: a bad parameter (400), an unknown topic (404), a subscription open here
 * with another consumer count or a consumer that has a connection already (409), a stopping process (503).
 */
final class ConsumeApi {
    static final String PATH = "/admin/v2/scalable/consume";
    /** More consumers than this in one subscription is a mistake, not a tuning. */
    static final int MAX_CONSUMERS = 10_000;
    /** How long a subscription stays open on this process with no connection: a consumer reconnecting finds it. */
    static final Duration LINGER = Duration.ofSeconds(30);
    /** Bad frames one connection may send (each answered with an error) before it is closed. */
    static final int MAX_REFUSED = 100;
    private static final ObjectMapper JSON = new ObjectMapper();

    /** Deliveries (a dispatch thread) and answers to bad frames (the connection's) go into one outbound. */
    private static final Sinks.EmitFailureHandler SERIALIZED = Sinks.EmitFailureHandler.busyLooping(
            Duration.ofSeconds(5));

    private final ClusterNode node;
    private final NetServer net;
    private final Scheduler timer;
    /** The subscriptions the connections opened here, by topic and name. */
    private final Map<String, Opened> opened = new HashMap<>();

    /** A subscription opened for connections, and the consumers connected to it. */
    private static final class Opened {
        final Subscription subscription;
        /** Per consumer, the connection attached now (its token), or null. */
        final @Nullable Object[] connected;
        Disposable closing = Disposables.disposed();

        Opened(Subscription subscription) {
            this.subscription = subscription;
            this.connected = new Object[subscription.consumers()];
        }

        boolean idle() {
            for (Object c : connected) {
                if (c != null) {
                    return false;
                }
            }
            return true;
        }
    }

    /** @param timer when a subscription with no connection closes */
    ConsumeApi(ClusterNode node, NetServer net, Scheduler timer) {
        this.node = node;
        this.net = net;
        this.timer = timer;
    }

    void register(HttpServerRoutes routes) {
        routes.get(PATH, this::consume);
    }

    private Mono<Void> consume(HttpServerRequest request, HttpServerResponse response) {
        if (net.check(request, Role.ADMIN, "consuming a subscription") instanceof Verdict.Refused r) {
            return NetServer.text(response, r.status(), r.reason());
        }
        Map<String, String> params;
        try {
            params = Query.parse(request.uri());
        } catch (Query.BadParameter e) {
            return NetServer.text(response, 400, String.valueOf(e.getMessage()));
        }
        String topic = params.get("topic");
        if (topic == null || !node.topics().contains(topic)) {
            return NetServer.text(response, 404, "cluster " + node.name() + " has no topic '"
                    + LogText.escape(String.valueOf(topic), 200) + "'");
        }
        String name = params.get("subscription");
        if (name == null || name.isBlank()) {
            return NetServer.text(response, 400, "a consumer needs the subscription's name (subscription=...)");
        }
        int of;
        int consumer;
        int queueSize;
        try {
            of = integer(params, "of", 1, 1, MAX_CONSUMERS, "the subscription's consumer count");
            consumer = integer(params, "consumer", 0, 0, of - 1, "this consumer's index among " + of);
            // 0: the configuration's subscriptions.receiverQueueSize
            queueSize = integer(params, "receiverQueueSize", 0, 1, SubscriptionConfig.MAX_RECEIVER_QUEUE_SIZE,
                    "the entries one consumer's queue holds");
        } catch (IllegalArgumentException e) {
            return NetServer.text(response, 400, String.valueOf(e.getMessage()));
        }
        if (!NetServer.asksForWebSocket(request)) {
            return NetServer.notWebSocket(request, response);
        }
        if (node.stopping()) {
            return NetServer.text(response, 503, "cluster " + node.name() + " is stopping: consume from another "
                    + "broker process");
        }
        Opened o;
        Object token = new Object();
        try {
            o = attach(topic, name, of, consumer, queueSize, token);
        } catch (IllegalStateException e) {
            return NetServer.text(response, 409, String.valueOf(e.getMessage()));
        }
        // The upgrade waits for the request's (empty) body to end, as the ingest endpoint's does. Detached when the
        // session ends, or, when it never started (a client gone before the upgrade, an error), when the exchange
        // ends (which, once upgraded, is before the session's end).
        AtomicBoolean started = new AtomicBoolean();
        return request.receive().then(Mono.defer(() -> response.sendWebsocket((in, out) -> {
            started.set(true);
            // the reader disposed before the detach: a connection attaching next finds the consumer free
            return Mono.defer(() -> session(o, consumer, in, out, () -> detach(topic, name, o, consumer, token)))
                    .onErrorResume(e -> {
                        detach(topic, name, o, consumer, token);
                        return Mono.error(e);
                    });
        }, WebsocketServerSpec.builder().maxFramePayloadLength(64 * 1024).build())))
                .doFinally(s -> {
                    if (!started.get()) {
                        detach(topic, name, o, consumer, token);
                    }
                });
    }

    private static int integer(Map<String, String> params, String key, int absent, int min, int max, String what) {
        String value = params.get(key);
        if (value == null) {
            return absent;
        }
        try {
            int n = Integer.parseInt(value);
            if (n >= min && n <= max) {
                return n;
            }
        } catch (NumberFormatException e) {
            // named below
        }
        throw new IllegalArgumentException(key + ": '" + LogText.escape(value, 40) + "' is out of range (expected "
                + what + ", an integer within [" + min + ", " + max + "])");
    }

    private synchronized Opened attach(String topic, String name, int of, int consumer, int queueSize,
            Object token) {
        String key = topic + "\n" + name;
        Opened o = opened.get(key);
        if (o == null || o.subscription.isDisposed()) {
            Subscription.Builder b = node.subscription(topic, name).consumers(of);
            Subscription s = (queueSize > 0 ? b.receiverQueueSize(queueSize) : b).subscribe();
            o = new Opened(s);
            opened.put(key, o);
        } else if (o.subscription.consumers() != of) {
            throw new IllegalStateException("subscription '" + name + "' of " + topic + " is open on this process with "
                    + o.subscription.consumers() + " consumer(s), not " + of);
        }
        if (o.connected[consumer] != null) {
            throw new IllegalStateException("consumer " + consumer + " of subscription '" + name + "' has a connection "
                    + "to this process already (one at a time)");
        }
        o.connected[consumer] = token;
        o.closing.dispose();
        return o;
    }

    private synchronized void detach(String topic, String name, Opened o, int consumer, Object token) {
        if (o.connected[consumer] != token) {
            return;
        }
        o.connected[consumer] = null;
        if (!o.idle()) {
            return;
        }
        o.closing = timer.schedule(() -> close(topic, name, o), LINGER.toMillis(), TimeUnit.MILLISECONDS);
    }

    private synchronized void close(String topic, String name, Opened o) {
        if (!o.idle()) {
            return;
        }
        opened.remove(topic + "\n" + name, o);
        o.subscription.dispose(); // its cursors stay: what no consumer acknowledged is delivered again
    }

    /**
     * Sends consumer {@code consumer}'s deliveries, at most the receiver queue size unacknowledged at once; runs
     * {@code ended} once it ended and its reader is gone.
     */
    private Mono<Void> session(Opened o, int consumer, WebsocketInbound in, WebsocketOutbound out, Runnable ended) {
        Subscription s = o.subscription;
        in.withConnection(c -> c.onReadIdle(net.limits().idleTimeout().toMillis(), c::dispose));
        Sinks.Many<String> frames = Sinks.many().unicast().onBackpressureBuffer();
        Map<String, Delivery> unacknowledged = new ConcurrentHashMap<>();
        BaseSubscriber<Delivery> reader = new BaseSubscriber<>() {
            @Override
            protected void hookOnSubscribe(org.reactivestreams.Subscription subscription) {
                subscription.request(s.receiverQueueSize());
            }

            @Override
            protected void hookOnNext(Delivery d) {
                String id = messageId(d);
                if (unacknowledged.putIfAbsent(id, d) != null) {
                    // the same entry again (its segment read again from the cursor): the copy out is acknowledged
                    // for both, so this one is not sent, and the window keeps its room
                    request(1);
                    return;
                }
                frames.emitNext(frame(id, d), SERIALIZED);
            }

            @Override
            protected void hookOnComplete() {
                frames.tryEmitComplete(); // the subscription closed (the process stops)
            }

            @Override
            protected void hookOnError(Throwable e) {
                frames.tryEmitError(e); // the connection ends; the consumer connects again
            }
        };
        Function<String, @Nullable String> acknowledge = text -> {
            String id;
            try {
                JsonNode root = JSON.readTree(text);
                JsonNode field = root == null ? null : root.get("messageId");
                if (field == null || !field.isTextual() || root.size() != 1) {
                    return "expected an acknowledgement {\"messageId\": \"...\"}";
                }
                id = field.asText();
            } catch (JacksonException e) {
                return "not JSON: " + e.getOriginalMessage();
            }
            Delivery d = unacknowledged.remove(id);
            if (d == null) {
                return "messageId '" + LogText.escape(id, 80) + "' is not one this connection has unacknowledged";
            }
            s.acknowledge(d);
            reader.request(1);
            return null;
        };
        s.consumerWithAcknowledgements(consumer).subscribe(reader);
        int[] refused = {0};
        Mono<Void> acks = in.receive().asString().concatMap(text -> {
            String error = acknowledge.apply(text);
            if (error != null) {
                if (++refused[0] > MAX_REFUSED) { // the answers would pile up unread: the connection ends
                    return Mono.error(new IllegalArgumentException("more than " + MAX_REFUSED + " bad frames"));
                }
                frames.emitNext(error(error), SERIALIZED);
            }
            return Mono.empty();
        }).then().onErrorResume(e -> Mono.empty());
        return Mono.firstWithSignal(out.sendString(frames.asFlux()).then(), acks)
                .doFinally(signal -> {
                    reader.dispose(); // what was not acknowledged goes to the next reader
                    ended.run();
                });
    }

    /** A delivery's id on its connection: segment, then position. */
    static String messageId(Delivery d) {
        return d.segmentId() + ":" + d.position();
    }

    private static String frame(String id, Delivery d) {
        Map<String, Object> f = new LinkedHashMap<>();
        f.put("messageId", id);
        f.put("segment", d.segmentId());
        f.put("bucket", d.bucket());
        f.put("position", d.position().toString());
        List<Map<String, Object>> messages = new ArrayList<>();
        for (Message m : d.messages()) {
            Map<String, Object> one = new LinkedHashMap<>();
            one.put("key", m.key().orElse(null));
            one.put("payload", Base64.getEncoder().encodeToString(m.payloadBytes()));
            messages.add(one);
        }
        f.put("messages", messages);
        return json(f);
    }

    private static String error(String why) {
        return json(Map.of("error", why));
    }

    private static String json(Object value) {
        try {
            return JSON.writeValueAsString(value);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
