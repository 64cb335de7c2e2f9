package io.verbatim.runtime;

import io.verbatim.config.Addresses;
import io.verbatim.config.ClusterConfig;
import io.verbatim.config.VerbatimConfig;
import io.verbatim.pipeline.memory.ClusterImage;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import reactor.core.scheduler.Scheduler;
import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * One cluster of a configuration in this process, its peers in others: what {@code verbatim node} runs.
 * The same wiring as the demo's {@link EmbeddedRuntime} (a {@link ClusterNode}), on the addresses the
 * configuration names, connected to the peers at theirs.
 *
 * <p>With a data directory, the node starts from the state it wrote at its last clean stop and writes it
 * again at {@link #stop}: layouts, stored entries, cursors and the destination side's deduplication, so a
 * restart loses nothing and peers' repeats are recognised.
 */
public final class Node implements AutoCloseable {
    private static final Logger LOG = Loggers.getLogger(Node.class);

    private final ClusterNode cluster;
    private final Optional<NodeStateFile> state;
    private final Scheduler timer;
    private final Scheduler cpu;
    private final String started;
    private boolean stopped;

    private Node(ClusterNode cluster, Optional<NodeStateFile> state, Scheduler timer, Scheduler cpu, String started) {
        this.cluster = cluster;
        this.started = started;
        this.state = state;
        this.timer = timer;
        this.cpu = cpu;
    }

    /**
     * Starts cluster {@code name} of {@code config} and connects it to its peers.
     *
     * @param dataDir where its state is kept across restarts (empty: nothing is kept)
     * @throws IllegalArgumentException when the configuration cannot run as separate processes (it names the key)
     */
    public static Node start(VerbatimConfig config, String name, Optional<Path> dataDir) {
        ClusterConfig self = config.cluster(name);
        for (int i = 0; i < config.clusters().size(); i++) {
            Addresses a = config.clusters().get(i).addresses();
            if (!a.fixedPorts()) {
                throw new IllegalArgumentException("clusters[" + i + "] (" + config.clusters().get(i).name()
                        + "): a node needs every cluster's adminPort and brokerPorts named (0 picks a free port, "
                        + "which peers in other processes cannot know)");
            }
        }
        Optional<NodeStateFile> state = dataDir.map(NodeStateFile::new);
        Map<String, ClusterImage> images = new LinkedHashMap<>();
        state.ifPresent(s -> {
            if (s.uncleanStop()) {
                LOG.warn("{}: the previous run did not stop cleanly: starting from the state of the clean stop before "
                        + "it ({}); what was stored since is lost on this cluster", name,
                        java.nio.file.Files.exists(s.state()) ? s.state() : "none: empty");
            }
            s.read(name).ifPresent(images::putAll);
        });
        Scheduler timer = Threads.timer();
        Scheduler cpu = Threads.cpu();
        ClusterNode node = new ClusterNode(config, name, dataDir, timer, cpu).restore(images);
        try {
            node.start();
            Map<String, ClusterNode.Address> peers = new LinkedHashMap<>();
            for (ClusterConfig c : config.clusters()) {
                if (!c.name().equals(name)) {
                    peers.put(c.name(), ClusterNode.Address.of(config, c.name()));
                }
            }
            node.connect(peers);
            state.ifPresent(NodeStateFile::markRunning);
        } catch (RuntimeException e) {
            node.close();
            timer.dispose();
            cpu.dispose();
            throw e;
        }
        return new Node(node, state, timer, cpu, describe(node, self, images));
    }

    private static String describe(ClusterNode cluster, ClusterConfig self, Map<String, ClusterImage> images) {
        List<String> lines = new ArrayList<>();
        lines.add(cluster.name() + ": node started" + (images.isEmpty() ? "" : " from the state of its last clean stop ("
                + images.size() + " topic(s))"));
        lines.add("  controller (exchange, admin, status, metrics) " + cluster.adminUrl() + " bound to "
                + self.addresses().bindAddress() + ":" + cluster.adminPort());
        List<String> brokers = cluster.brokerUrls();
        for (int i = 0; i < brokers.size(); i++) {
            lines.add("  broker " + i + " (ingest) " + brokers.get(i));
        }
        lines.add("  peers " + cluster.peers() + ", topics " + cluster.topics());
        return String.join(System.lineSeparator(), lines);
    }

    /** What started, where it listens and where peers reach it, in a few lines (what the node logs). */
    public String describe() {
        return started;
    }

    public ClusterNode cluster() {
        return cluster;
    }

    /**
     * Stops cleanly (see {@link ClusterNode#stop}) and writes the state to the data directory, if any.
     * Idempotent.
     */
    public synchronized void stop(Duration drainTimeout) {
        if (stopped) {
            return;
        }
        stopped = true;
        try {
            Map<String, ClusterImage> images = cluster.stop(drainTimeout);
            state.ifPresent(s -> {
                s.write(cluster.name(), images, cluster.nowMs());
                LOG.info("{}: state written to {}", cluster.name(), s.state());
            });
        } finally {
            timer.dispose();
            cpu.dispose();
        }
    }

    @Override
    public void close() {
        stop(Duration.ofSeconds(10));
    }
}
