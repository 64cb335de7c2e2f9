package io.verbatim.runtime.storage;

import io.micrometer.core.instrument.MeterRegistry;
import io.verbatim.config.ControllerReplica;
import io.verbatim.config.VerbatimConfig;
import io.verbatim.embedded.ClusterImage;
import io.verbatim.embedded.MemorySegments;
import io.verbatim.model.Layout;
import io.verbatim.model.Segment;
import io.verbatim.pipeline.ReplicatorConfig;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.TimeoutException;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Scheduler;
import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * Where one cluster keeps its topics' segments: the embedded storage (in memory, or with a data directory's journal
 * and checkpoints, {@link LocalStorage}) or the cluster's Pulsar ({@code storage.type: pulsar}); each configured
 * topic opened on it at start, its backlogs and prunable segments, and a clean stop's images.
 */
public final class ClusterStorage implements AutoCloseable {
    private static final Logger LOG = Loggers.getLogger(ClusterStorage.class);
    /** How long a start waits for the cluster's Pulsar ({@code storage.type: pulsar}) before it fails. */
    private static final Duration PULSAR_START_WAIT = Duration.ofMinutes(2);

    private final String name;
    /** What this process's producers are called on Pulsar: one name per broker process. */
    private final String producerName;
    private final VerbatimConfig config;
    private final List<String> peers;
    private final Scheduler timer;
    private final Map<String, TopicStorage> topics = new LinkedHashMap<>();
    private final Optional<PulsarConnections> pulsar;
    private volatile LocalStorage local;
    private final Sinks.Empty<Void> closed = Sinks.empty();

    /** The storage of cluster {@code name}'s one brokers process ({@value ControllerReplica#BROKERS}). */
    public ClusterStorage(VerbatimConfig config, String name, List<String> peers, Scheduler timer) {
        this(config, name, ControllerReplica.BROKERS, peers, timer);
    }

    /**
     * The storage of broker member {@code member} of cluster {@code name}, in memory only until {@link #keepIn}
     * gives it a data directory's.
     */
    public ClusterStorage(VerbatimConfig config, String name, String member, List<String> peers, Scheduler timer) {
        this.name = name;
        this.producerName = PulsarTopicStorage.producerName(name, member);
        this.config = config;
        this.peers = List.copyOf(peers);
        this.timer = timer;
        this.pulsar = config.storage().onPulsar() ? Optional.of(new PulsarConnections(config, name)) : Optional.empty();
        this.local = LocalStorage.memoryOnly(name, timer);
    }

    /** Keeps the topics' segments in {@code storage} (a data directory's, with what it recovered). Before opening. */
    public synchronized void keepIn(LocalStorage storage) {
        local.close();
        local = storage;
    }

    /** Topic images to start from (by topic), each brought to the metadata log's layout as it opens. */
    public synchronized void offer(Map<String, ClusterImage> images) {
        images.forEach(local::offer);
    }

    /** The layout a data directory recovered for {@code topic}, if any. */
    public Optional<Layout> recoveredLayout(String topic) {
        return local.recoveredLayout(topic);
    }

    /** Opens {@code topic} at the layout the metadata log holds: in memory (or the data directory) or on Pulsar. */
    public synchronized TopicStorage open(String topic, Layout held, String key) {
        TopicStorage storage = pulsar.isPresent() ? onPulsar(pulsar.get(), topic, held, key) : inMemory(topic, held);
        topics.put(topic, storage);
        return storage;
    }

    /** Every configured topic is open: what the data directory kept of other topics is dropped, and said so. */
    public void configuredTopicsOpened() {
        local.configuredTopicsOpened();
        local.unopened().forEach(t -> LOG.warn("{}: topic {} was kept in the data directory but is not configured: "
                + "it is dropped at the next checkpoint", name, t));
    }

    private TopicStorage inMemory(String topic, Layout held) {
        MemorySegments storage = local.openTopic(topic, held).deleteConsumed(config.storage().deleteConsumed());
        for (String peer : peers) {
            storage.replicateTo(peer, config.replication().startAt());
        }
        return new MemoryTopicStorage(storage);
    }

    /**
     * The topic on this cluster's Pulsar: its namespace prepared (deduplication on), its segment topics and each
     * peer's replication subscription made, retried with backoff (each failure logged) for at most
     * {@link #PULSAR_START_WAIT}.
     */
    private TopicStorage onPulsar(PulsarConnections connections, String topic, Layout held, String key) {
        String url = connections.own().settings().adminUrl();
        Mono<TopicStorage> open = connections.prepared(config.replication().retry(), timer)
                .then(PulsarTopicStorage.open(name, producerName, connections.own(), topic, peers, held,
                        config.replication().retry(), timer, config.storage().pruneSealed())
                        .map(TopicStorage.class::cast));
        return open.timeout(PULSAR_START_WAIT, timer).onErrorMap(TimeoutException.class,
                e -> new IllegalStateException(key + ".pulsar: cannot reach Pulsar at " + url + " within "
                        + PULSAR_START_WAIT.toSeconds() + " s (see the warnings above for each attempt's cause)", e))
                .blockOptional().orElseThrow();
    }

    /** The cluster's Pulsar connections (its own and each peer's), when it keeps its segments there. */
    public Optional<PulsarConnections> pulsar() {
        return pulsar;
    }

    /** What keeps the embedded storage's segments: memory only, or a data directory's journal. */
    public LocalStorage local() {
        return local;
    }

    /** {@code topic}'s storage, or null when it is not (yet) open. */
    public @Nullable TopicStorage find(String topic) {
        return topics.get(topic);
    }

    /**
     * Completes once {@code topic}'s storage holds layout {@code epoch} or a newer one, as the layout store's watch
     * hands layouts to {@link TopicStorage#adopt} (the only path that adopts; one skipped because a newer one made it
     * moot is held once that newer one is): at once when it already does or the topic is not open here; at close;
     * after {@code patience} at most, with a WARN (the watch is behind or stuck, or the layout could not be taken).
     * Never an error. What follows goes on off the adopting thread (which holds the storage's lock while it publishes).
     */
    public Mono<Void> adopted(String topic, long epoch, Duration patience) {
        return Mono.defer(() -> {
            TopicStorage storage = topics.get(topic);
            if (storage == null || storage.layout().epoch() >= epoch) {
                return Mono.empty();
            }
            return storage.layouts().filter(l -> l.epoch() >= epoch).next().publishOn(timer).then()
                    .timeout(patience, Mono.fromRunnable(() -> LOG.warn("{}: the storage of {} has not taken layout "
                            + "epoch {} within {} ms (it holds epoch {}): the layout watch is behind or the layout "
                            + "could not be taken; answering the commit anyway", name, topic, epoch,
                            patience.toMillis(), storage.layout().epoch())), timer)
                    .takeUntilOther(closed.asMono());
        });
    }

    /** Where this cluster keeps {@code topic}'s segments: in memory or on its Pulsar. */
    public TopicStorage of(String topic) {
        TopicStorage storage = topics.get(topic);
        if (storage == null) {
            throw new IllegalArgumentException("cluster " + name + " has no topic '" + topic + "'");
        }
        return storage;
    }

    /**
     * The in-memory segment logs of {@code topic} (what the brokers store), for checks and images.
     *
     * @throws IllegalStateException when the cluster keeps its segments on Pulsar ({@link #of})
     */
    public MemorySegments memory(String topic) {
        return of(topic).memory().orElseThrow(() -> new IllegalStateException("cluster " + name
                + " keeps topic '" + topic + "' on Pulsar (storage.type pulsar), not in memory: read it through a "
                + "subscription"));
    }

    /** The open topics, in the configuration's order. */
    public List<String> topics() {
        return List.copyOf(topics.keySet());
    }

    /** Replication backlog per segment of {@code topic} toward {@code remote}; empty for a topic not open. */
    public Map<String, Long> backlog(String topic, String remote) {
        TopicStorage storage = topics.get(topic);
        Map<String, Long> out = new TreeMap<>();
        if (storage == null) {
            return out;
        }
        for (Segment s : storage.layout().segments().values()) {
            // Not storage.log(id): garbage collection may have deleted a segment of the layout just read.
            out.put(s.descriptor(), storage.backlog(s.id(), ReplicatorConfig.cursorName(remote)));
        }
        return out;
    }

    /** The sealed segments of {@code topic} nothing needs any more (backlog older than the message TTL does not pin). */
    public List<Long> prunable(String topic) {
        return of(topic).prunable(config.replication().messageTtl().toMillis());
    }

    /**
     * Every topic's image, taken under each topic's lock (an entry a peer's session still delivers is refused, not
     * stored after the image and lost at the restart), and written as a clean stop's checkpoint. On Pulsar the broker
     * keeps the segments: there is no image to take.
     */
    public Map<String, ClusterImage> stopCleanly() {
        Map<String, ClusterImage> images = new LinkedHashMap<>();
        topics.forEach((topic, storage) -> storage.memory().ifPresent(m -> images.put(topic, m.stop())));
        local.stopCleanly(images);
        return images;
    }

    /** Where a clean stop writes the topics' state (a data directory's checkpoint), if it keeps them at all. */
    public Optional<Path> stateFile() {
        return local.durable() ? local.stateFile() : Optional.empty();
    }

    public void bindTo(MeterRegistry registry) {
        local.bindTo(registry);
    }

    @Override
    public void close() {
        closed.tryEmitEmpty();
        topics.values().forEach(TopicStorage::close);
        local.close();
        pulsar.ifPresent(PulsarConnections::close);
    }
}
