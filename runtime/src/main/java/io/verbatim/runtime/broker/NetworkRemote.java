package io.verbatim.runtime.broker;

import com.google.protobuf.InvalidProtocolBufferException;
import io.verbatim.model.Layout;
import io.verbatim.net.NetClient;
import io.verbatim.net.NetworkLimits;
import io.verbatim.net.Origin;
import io.verbatim.pipeline.ProducerSession;
import io.verbatim.pipeline.RemoteCluster;
import io.verbatim.runtime.proto.LayoutRecord;
import io.verbatim.runtime.storage.LayoutRecords;
import java.io.IOException;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;
import reactor.core.Disposable;
import reactor.core.Disposables;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Scheduler;
import reactor.netty.http.client.HttpClient;
import reactor.netty.http.client.WebsocketClientSpec;
import reactor.util.Logger;
import reactor.util.Loggers;
import reactor.util.retry.Retry;

/**
 * A remote cluster as one topic's replicators see it across the network: its layouts streamed from its
 * brokers' ingest endpoints (reconnecting with backoff, the last one kept), and ordered sessions opened
 * to the broker that owns the destination segment. Every call is signed for the remote.
 *
 * <p>Only the broker URLs configured for the remote are ever called. A layout names the remote's brokers
 * (their order says which owns a segment); a URL it names that is not configured is ignored — counted and
 * logged once — so a peer cannot send this cluster's replicators, and their entries, anywhere else.
 */
final class NetworkRemote implements RemoteCluster {
    private static final Logger LOG = Loggers.getLogger(NetworkRemote.class);
    private static final Duration LAYOUTS_MAX_BACKOFF = Duration.ofSeconds(1);
    private final String name;
    private final String topic;
    private final List<String> seedUrls;
    private final Set<Origin> configured;
    private final AtomicLong ignoredUrls = new AtomicLong();
    private final AtomicBoolean ignoredLogged = new AtomicBoolean();
    private final HttpClient client;
    private final NetworkLimits limits;
    private final int maxFrameBytes;
    private final Duration halfRtt;
    private final Heartbeat beat;
    private final Scheduler timer;
    private final Flux<LayoutRecord> records;
    private final AtomicInteger attempts = new AtomicInteger();
    private final Disposable.Swap stream = Disposables.swap();
    private final Sinks.Many<Long> reached = Sinks.many().multicast().directBestEffort();
    /** The layout stream failed, and no layout came since. */
    private volatile boolean unreached;
    /** The configured brokers the latest layout names, in its order (empty: none named, the configured order). */
    private volatile List<String> brokers = List.of();

    /**
     * @param seedUrls the remote's broker ingest URLs as configured, in broker order (any of them serves its
     *        layouts): the only addresses this remote calls
     * @param net this cluster's signing key and TLS, the frame limit and the remote's idle timeout
     * @param rtt a simulated round trip added to every session's traffic (half each way), or zero
     * @param beat how often sessions and the layout stream ping, and how long they may hear nothing before they
     *        are dead (pinging at least every third of the idle timeout, after which the remote closes them)
     */
    public NetworkRemote(String name, String topic, List<String> seedUrls, NetClient net, Duration rtt, Heartbeat beat,
            Scheduler timer) {
        this.name = name;
        this.topic = topic;
        this.seedUrls = List.copyOf(seedUrls);
        this.configured = seedUrls.stream().map(Origin::of).collect(Collectors.toUnmodifiableSet());
        this.limits = net.limits();
        this.maxFrameBytes = limits.maxFrameBytes();
        this.halfRtt = rtt.dividedBy(2);
        this.beat = beat.within(limits.idleTimeout());
        this.timer = timer;
        this.client = net.signing(HttpClient.create(), name);
        this.records = Flux.defer(this::streamOnce)
                .concatWith(Mono.error(() -> new IOException("layout stream of " + name + " ended")))
                // Reconnects within a second: a replicator that met a remote split waits for this stream's next
                // layout, so after a partition heals the stream must not sit out a long backoff. One stream per
                // topic and remote: cheap. A stream that received a layout starts afresh when it fails.
                .retryWhen(Retry.backoff(Long.MAX_VALUE, Duration.ofMillis(50)).maxBackoff(LAYOUTS_MAX_BACKOFF)
                        .transientErrors(true).scheduler(timer))
                .doOnNext(r -> brokers = configuredOf(r.getBrokerUrlsList()))
                .replay(1).autoConnect(1, stream::update);
    }

    private Flux<LayoutRecord> streamOnce() {
        String base = seedUrls.get(Math.floorMod(attempts.getAndIncrement(), seedUrls.size()));
        HeartbeatWatch heartbeat = new HeartbeatWatch(beat, timer, "the layout stream of " + name);
        return client.websocket(spec()).uri(base + IngestServer.LAYOUTS_PATH + "?topic=" + encode(topic))
                .handle((in, out) -> {
                    heartbeat.heard(); // the opening was answered
                    heartbeat.pingWith(() -> WebSocketSession.ping(out));
                    return WebSocketSession.binaryFrames(in, limits, heartbeat).map(bytes -> {
                        try {
                            return LayoutRecord.parseFrom(bytes);
                        } catch (InvalidProtocolBufferException e) {
                            throw new IllegalStateException(name + " sent a layout that does not parse: " + e.getMessage(), e);
                        }
                    });
                })
                // a closed connection ends the stream at once (the merge below waits for the heartbeat to end);
                // a dead one (silent for the ping timeout, or never opened) fails it: either way it reconnects
                .doOnTerminate(heartbeat::dispose)
                .mergeWith(heartbeat.expired().then(Mono.<LayoutRecord>empty()))
                .doOnNext(record -> {
                    if (unreached) {
                        unreached = false;
                        reached.tryEmitNext(timer.now(TimeUnit.MILLISECONDS));
                    }
                })
                .doOnComplete(() -> unreached = true)
                .doOnError(e -> {
                    unreached = true;
                    LOG.debug("the layout stream of {} from {} failed, reconnecting: {}", name, base, e.toString());
                })
                .doFinally(s -> heartbeat.dispose());
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public Flux<Layout> layouts() {
        // Reconnects may repeat a layout: only newer ones go on.
        return records.map(LayoutRecords::fromProto).scan((held, next) -> next.epoch() > held.epoch() ? next : held)
                .distinctUntilChanged(Layout::epoch);
    }

    /** Each time the layout stream brings a layout again after it failed: the remote is reachable again. */
    @Override
    public Flux<Long> reachedAgain() {
        return reached.asFlux();
    }

    @Override
    public ProducerSession open(long segmentId, String producerName) {
        String owner = owner(segmentId);
        String uri = owner + IngestServer.SESSION_PATH + "?topic=" + encode(topic) + "&segment=" + segmentId
                + "&producer=" + encode(producerName);
        return new WebSocketSession(client, spec(), limits, uri, segmentId, halfRtt, beat, timer);
    }

    /**
     * The broker that owns {@code segmentId}: by the order of the brokers the remote's latest layout names,
     * among those configured; by the configured order when it names none of them.
     */
    String owner(long segmentId) {
        List<String> named = brokers;
        List<String> among = named.isEmpty() ? seedUrls : named;
        return among.get((int) Math.floorMod(segmentId, (long) among.size()));
    }

    /** The URLs of {@code named} that are configured; any other is counted and, the first one, logged. */
    private List<String> configuredOf(List<String> named) {
        List<String> out = new ArrayList<>(named.size());
        for (String url : named) {
            Optional<Origin> origin = Origin.parse(url);
            if (origin.isPresent() && configured.contains(origin.get())) {
                out.add(url);
            } else {
                ignoredUrls.incrementAndGet();
                if (ignoredLogged.compareAndSet(false, true)) {
                    LOG.warn("{}: a layout of {} names broker URL '{}', which is not configured for it {}: ignored "
                            + "(counted in verbatim.replication.brokers.ignored; only configured brokers are called)",
                            topic, name, shown(url), seedUrls);
                }
            }
        }
        return out;
    }

    /** At most 200 characters of what the remote sent, control characters replaced: one log line. */
    private static String shown(String s) {
        String t = s.length() > 200 ? s.substring(0, 200) + "…" : s;
        return t.replaceAll("\\p{Cntrl}", "?");
    }

    /** How many broker URLs the remote's layouts named that are not configured, over every layout received. */
    public long ignoredBrokerUrls() {
        return ignoredUrls.get();
    }

    /** How many times the layout stream connected (or tried to). */
    int connects() {
        return attempts.get();
    }

    /** Stops following the remote's layouts (and reconnecting to do so). */
    public void close() {
        stream.dispose();
    }

    private WebsocketClientSpec spec() {
        return WebsocketClientSpec.builder().maxFramePayloadLength(maxFrameBytes).build();
    }

    private static String encode(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8);
    }
}
