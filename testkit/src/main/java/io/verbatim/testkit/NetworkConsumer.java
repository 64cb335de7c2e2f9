package io.verbatim.testkit;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.verbatim.model.entry.Message;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import reactor.core.Disposable;
import reactor.core.Disposables;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.netty.http.client.HttpClient;
import reactor.netty.http.client.WebsocketClientSpec;
import reactor.util.Logger;
import reactor.util.Loggers;
import reactor.util.retry.Retry;

/**
 * One consumer of a PIP-486 subscription of a cluster whose brokers run in many processes: it connects to the
 * consume WebSocket ({@code /admin/v2/scalable/consume}) of every broker process the cluster lists ({@code GET
 * /admin/v2/scalable/members} on a seed URL, asked again every {@link Builder#rediscoverEvery}), so each segment's
 * entries reach it from whichever process owns the segment now. Each entry goes to the handler, one call at a time
 * over every connection, and is acknowledged once the handler returned: an entry the handler did not finish is
 * delivered again. A connection that ends (a process killed, restarted or stopped) is opened again with backoff
 * while the process is a member.
 *
 * <pre>{@code
 * NetworkConsumer c = NetworkConsumer.builder("http://east-broker-1:8080", topic, "billing")
 *         .token(adminToken).consumer(0, 2).start(received -> checks.record(received));
 * }</pre>
 */
public final class NetworkConsumer implements Disposable {
    /** One entry as a broker process delivered it. */
    public record Received(String from, int consumer, long segmentId, int bucket, String position,
            List<Message> messages) {
    }

    private static final Logger LOG = Loggers.getLogger(NetworkConsumer.class);
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String CONSUME = "/admin/v2/scalable/consume";
    private static final String MEMBERS = "/admin/v2/scalable/members";
    /** How long one process may take to list the members. */
    private static final Duration ASK_TIMEOUT = Duration.ofSeconds(5);

    private final Builder options;
    private final Consumer<Received> handler;
    private final Map<String, Disposable> connections = new ConcurrentHashMap<>();
    private final Disposable.Composite running = Disposables.composite();
    private final AtomicLong received = new AtomicLong();
    private final AtomicLong reconnects = new AtomicLong();

    private NetworkConsumer(Builder options, Consumer<Received> handler) {
        this.options = options;
        this.handler = handler;
    }

    /** A consumer of {@code subscription} on {@code topic}, the cluster's members listed by {@code seedUrl}. */
    public static Builder builder(String seedUrl, String topic, String subscription) {
        return builder(List.of(seedUrl), topic, subscription);
    }

    /** A consumer of {@code subscription} on {@code topic}, the cluster's members listed by any of {@code seedUrls}. */
    public static Builder builder(List<String> seedUrls, String topic, String subscription) {
        if (seedUrls.isEmpty()) {
            throw new IllegalArgumentException("a network consumer needs at least one seed URL");
        }
        return new Builder(seedUrls, topic, subscription);
    }

    /** Entries handled so far, over every connection. */
    public long received() {
        return received.get();
    }

    /** Connections opened again after one ended. */
    public long reconnects() {
        return reconnects.get();
    }

    /** The admin URLs connected to now. */
    public Set<String> connectedTo() {
        return Set.copyOf(connections.keySet());
    }

    private void start() {
        running.add(Flux.interval(Duration.ZERO, options.rediscoverEvery)
                .onBackpressureDrop() // a tick while the members are still being asked is skipped
                .concatMap(t -> members().onErrorResume(e -> {
                    LOG.warn("consumer {} of {}: cannot list the cluster's members ({}); keeps its connections",
                            options.consumer, options.subscription, e.toString());
                    return Mono.empty();
                }))
                .subscribe(this::connectTo, e -> LOG.error("consumer {} of {}: no longer follows the members: {}",
                        options.consumer, options.subscription, e.toString())));
    }

    /**
     * The admin URLs of every member not removed, as the first to answer of the seeds and the members known so far
     * lists them (the seed may be a member that went); the seed itself when the cluster runs as one process (it
     * lists none).
     */
    private Mono<Set<String>> members() {
        Set<String> ask = new LinkedHashSet<>(options.seeds);
        ask.addAll(connections.keySet());
        return Flux.fromIterable(ask).concatMap(seed -> options.client.followRedirect(true)
                .headers(h -> h.set(HttpHeaderNames.AUTHORIZATION, "Bearer " + options.token))
                .get().uri(seed + MEMBERS)
                .responseSingle((response, body) -> body.asString().defaultIfEmpty("").map(text -> {
                    if (response.status().code() != 200) {
                        throw new IllegalStateException(seed + MEMBERS + " answered " + response.status().code()
                                + ": " + text.strip());
                    }
                    Set<String> urls = adminUrls(text);
                    return urls.isEmpty() ? Set.of(seed) : urls; // a cluster of one process lists no members
                }))
                .timeout(ASK_TIMEOUT)
                .onErrorResume(e -> {
                    LOG.debug("consumer {} of {}: {} did not list the members: {}", options.consumer,
                            options.subscription, seed, e.toString());
                    return Mono.empty();
                }), 1)
                .next()
                .switchIfEmpty(Mono.error(new IllegalStateException("none of " + ask + " listed the members")));
    }

    private static Set<String> adminUrls(String text) {
        Set<String> out = new LinkedHashSet<>();
        try {
            for (JsonNode m : JSON.readTree(text)) {
                if (!"REMOVED".equals(m.path("state").asText()) && m.hasNonNull("adminUrl")) {
                    out.add(m.get("adminUrl").asText());
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out;
    }

    private synchronized void connectTo(Set<String> members) {
        if (running.isDisposed()) {
            return;
        }
        connections.entrySet().removeIf(e -> {
            if (members.contains(e.getKey())) {
                return false;
            }
            e.getValue().dispose();
            return true;
        });
        for (String url : members) {
            connections.computeIfAbsent(url, u -> Flux.defer(() -> connection(u))
                    .repeat() // a connection that ended normally (the process stopped) is opened again too
                    .retryWhen(Retry.backoff(Long.MAX_VALUE, Duration.ofMillis(100)).maxBackoff(Duration.ofSeconds(2))
                            .doBeforeRetry(r -> reconnects.incrementAndGet()))
                    .subscribe(v -> { }, e -> LOG.error("consumer {} of {}: no longer connects to {}: {}",
                            options.consumer, options.subscription, u, e.toString())));
        }
    }

    /** One connection to one process's consume endpoint: its entries to the handler, each acknowledged after. */
    private Flux<Void> connection(String url) {
        String uri = url.replaceFirst("^http", "ws") + CONSUME + "?topic=" + enc(options.topic) + "&subscription="
                + enc(options.subscription) + "&consumer=" + options.consumer + "&of=" + options.of;
        Sinks.Many<String> acks = Sinks.many().unicast().onBackpressureBuffer();
        return options.client.headers(h -> h.set(HttpHeaderNames.AUTHORIZATION, "Bearer " + options.token))
                .websocket(WebsocketClientSpec.builder().maxFramePayloadLength(256 * 1024 * 1024).build())
                .uri(uri)
                .handle((in, out) -> {
                    Mono<Void> pings = Flux.interval(options.pingEvery)
                            .concatMap(t -> out.sendObject(new io.netty.handler.codec.http.websocketx.PingWebSocketFrame()))
                            .then();
                    Mono<Void> reading = in.aggregateFrames(256 * 1024 * 1024).receive().asString().doOnNext(text -> {
                        JsonNode frame;
                        try {
                            frame = JSON.readTree(text);
                        } catch (IOException e) {
                            throw new UncheckedIOException(e);
                        }
                        if (frame.has("error")) {
                            LOG.warn("consumer {} of {}: {} said: {}", options.consumer, options.subscription, url,
                                    frame.get("error").asText());
                            return;
                        }
                        Received r = received(url, frame);
                        synchronized (this) {
                            handler.accept(r);
                        }
                        received.incrementAndGet();
                        acks.tryEmitNext("{\"messageId\":" + frame.get("messageId").toString() + "}");
                    }).then();
                    return Mono.firstWithSignal(reading, out.sendString(acks.asFlux()).then(), pings);
                });
    }

    private Received received(String url, JsonNode frame) {
        List<Message> messages = new ArrayList<>();
        for (JsonNode m : frame.path("messages")) {
            JsonNode key = m.get("key");
            messages.add(Message.of(key == null || key.isNull() ? Optional.empty() : Optional.of(key.asText()),
                    Base64.getDecoder().decode(m.path("payload").asText())));
        }
        return new Received(url, options.consumer, frame.path("segment").asLong(), frame.path("bucket").asInt(),
                frame.path("position").asText(), messages);
    }

    private static String enc(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8);
    }

    @Override
    public synchronized void dispose() {
        running.dispose();
        connections.values().forEach(Disposable::dispose);
        connections.clear();
    }

    @Override
    public boolean isDisposed() {
        return running.isDisposed();
    }

    /** A consumer to set up: consumer 0 of 1, no token, members asked every 2 s, a ping every 5 s. */
    public static final class Builder {
        private final List<String> seeds;
        private final String topic;
        private final String subscription;
        private String token = "";
        private int consumer;
        private int of = 1;
        private HttpClient client = HttpClient.create();
        private Duration rediscoverEvery = Duration.ofSeconds(2);
        private Duration pingEvery = Duration.ofSeconds(5);

        private Builder(List<String> seeds, String topic, String subscription) {
            this.seeds = List.copyOf(seeds);
            this.topic = Objects.requireNonNull(topic, "topic");
            this.subscription = Objects.requireNonNull(subscription, "subscription");
        }

        /** The admin role's token. */
        public Builder token(String value) {
            token = Objects.requireNonNull(value, "token");
            return this;
        }

        /** This is consumer {@code index} of the subscription's {@code of} consumers. */
        public Builder consumer(int index, int of) {
            if (of < 1 || index < 0 || index >= of) {
                throw new IllegalArgumentException("consumer " + index + " of " + of + ": expected 0 <= index < of");
            }
            this.consumer = index;
            this.of = of;
            return this;
        }

        /** The HTTP client (its TLS trust, say); {@code HttpClient.create()} unless set. */
        public Builder client(HttpClient value) {
            client = Objects.requireNonNull(value, "client");
            return this;
        }

        /** How often the cluster's members are asked for (a member added or removed is followed). */
        public Builder rediscoverEvery(Duration value) {
            rediscoverEvery = Objects.requireNonNull(value, "rediscoverEvery");
            return this;
        }

        /** How often each connection pings (a process closes a connection it hears nothing on). */
        public Builder pingEvery(Duration value) {
            pingEvery = Objects.requireNonNull(value, "pingEvery");
            return this;
        }

        /** Connects, and hands each entry to {@code handler} (one call at a time; must not block for long). */
        public NetworkConsumer start(Consumer<Received> handler) {
            NetworkConsumer c = new NetworkConsumer(this, Objects.requireNonNull(handler, "handler"));
            c.start();
            return c;
        }
    }
}
