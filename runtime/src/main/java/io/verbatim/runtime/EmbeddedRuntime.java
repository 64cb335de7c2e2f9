package io.verbatim.runtime;

import io.verbatim.config.ClusterConfig;
import io.verbatim.config.ClusterUrls;
import io.verbatim.config.VerbatimConfig;
import io.verbatim.embedded.MemorySegments;
import io.verbatim.model.Layout;
import io.verbatim.model.Shape;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

/**
 * Several clusters in one process on loopback, as a configuration describes them: each with its
 * controller, brokers, segment logs and replicators, the exchange and replication crossing real
 * sockets. What the demo runs and what an end-to-end test starts.
 *
 * <pre>{@code
 * try (EmbeddedRuntime runtime = EmbeddedRuntime.start(VerbatimConfig.load(Path.of("config/samples/demo.yaml")))) {
 *     ClusterNode east = runtime.cluster("us-east");
 *     east.producer(topic, Compression.LZ4).send(List.of(Message.of("customer-42", bytes))).block();
 *     runtime.awaitQuiet(Duration.ofSeconds(30)).block();   // converged and replicated everywhere
 * }
 * }</pre>
 */
public final class EmbeddedRuntime implements AutoCloseable {
    private final VerbatimConfig config;
    private final Map<String, ClusterNode> clusters = new LinkedHashMap<>();
    private final Scheduler timer;
    private final Scheduler cpu;

    private EmbeddedRuntime(VerbatimConfig config, Scheduler timer, Scheduler cpu) {
        this.config = config;
        this.timer = timer;
        this.cpu = cpu;
    }

    /** Starts every cluster of {@code config} on loopback and connects them in a full mesh. */
    public static EmbeddedRuntime start(VerbatimConfig config) {
        EmbeddedRuntime runtime = new EmbeddedRuntime(config, Threads.timer(), Threads.cpu());
        try {
            for (ClusterConfig c : config.clusters()) {
                runtime.clusters.put(c.name(), new ClusterNode(config, c.name(), runtime.timer, runtime.cpu).start());
            }
            Map<String, ClusterUrls> addresses = new LinkedHashMap<>();
            runtime.clusters.forEach((name, node) -> addresses.put(name, node.address()));
            for (ClusterNode node : runtime.clusters.values()) {
                Map<String, ClusterUrls> peers = new LinkedHashMap<>(addresses);
                peers.remove(node.name());
                node.connect(peers);
            }
            runtime.awaitExchanged(Duration.ofSeconds(30)).block();
            return runtime;
        } catch (RuntimeException e) {
            runtime.close();
            throw e;
        }
    }

    public VerbatimConfig config() {
        return config;
    }

    public Map<String, ClusterNode> clusters() {
        return clusters;
    }

    public ClusterNode cluster(String name) {
        ClusterNode node = clusters.get(name);
        if (node == null) {
            throw new IllegalArgumentException("no cluster named '" + name + "' (the runtime has " + clusters.keySet() + ")");
        }
        return node;
    }

    /** The runtime's clock: everything timed in it reads this scheduler. */
    public Scheduler timer() {
        return timer;
    }

    public long nowMs() {
        return timer.now(TimeUnit.MILLISECONDS);
    }

    /**
     * Each cluster's embedded storage of {@code topic}, by cluster name: what a test kit's recorder attaches to
     * before traffic to check every entry as it is stored (a storage that deletes consumed entries and drained
     * segments keeps nothing to check at the end).
     */
    public Map<String, MemorySegments> storages(String topic) {
        Map<String, MemorySegments> storage = new LinkedHashMap<>();
        clusters.forEach((name, node) -> storage.put(name, node.storage(topic)));
        return storage;
    }

    /** True when every cluster holds the same shape of {@code topic}. */
    public boolean converged(String topic) {
        Shape first = null;
        for (ClusterNode node : clusters.values()) {
            Shape s = Shape.of(node.layout(topic));
            if (first == null) {
                first = s;
            } else if (!first.equals(s)) {
                return false;
            }
        }
        return true;
    }

    /**
     * Completes once every controller holds every peer's state: from then on each cluster's own layout
     * changes go ahead (a starting controller defers them, as after a failover) and every replicator's
     * exchange gate is open.
     */
    public Mono<Void> awaitExchanged(Duration timeout) {
        return Flux.interval(Duration.ZERO, Duration.ofMillis(20), timer)
                .filter(t -> clusters.values().stream().noneMatch(n -> n.controller().deferringOwnChanges()))
                .next().timeout(timeout, Mono.error(() -> new IllegalStateException("the clusters did not exchange "
                        + "layouts within " + timeout)), timer).then();
    }

    /** True when every topic has converged and every replication cursor is drained. */
    public boolean quiet() {
        return config.topics().stream().allMatch(t -> converged(t.name()))
                && clusters.values().stream().allMatch(ClusterNode::caughtUp);
    }

    /** Completes once {@link #quiet()} (polled every 50 ms), or errors after {@code timeout}. */
    public Mono<Void> awaitQuiet(Duration timeout) {
        return Flux.interval(Duration.ZERO, Duration.ofMillis(50), timer).filter(t -> quiet()).next()
                .timeout(timeout, Mono.error(() -> new IllegalStateException("not quiet after " + timeout + ": "
                        + describe())), timer).then();
    }

    /** Each cluster's layouts and replication backlog, for a message that says what is still moving. */
    public String describe() {
        StringBuilder b = new StringBuilder();
        for (ClusterNode node : clusters.values()) {
            b.append(node.name()).append(" {");
            for (String topic : node.topics()) {
                Layout l = node.layout(topic);
                b.append(' ').append(topic).append(" e").append(l.epoch()).append(' ').append(Shape.of(l));
                for (String peer : node.peers()) {
                    long backlog = node.backlog(topic, peer).values().stream().mapToLong(Long::longValue).sum();
                    b.append(" →").append(peer).append(':').append(backlog);
                }
            }
            b.append(" } ");
        }
        return b.toString();
    }

    @Override
    public void close() {
        clusters.values().forEach(ClusterNode::disconnect);
        clusters.values().forEach(ClusterNode::close);
        timer.dispose();
        cpu.dispose();
    }
}
