package io.verbatim.runtime;

import io.verbatim.config.BrokerMember;
import io.verbatim.config.ClusterConfig;
import io.verbatim.config.ClusterUrls;
import io.verbatim.config.ControllerReplica;
import io.verbatim.config.VerbatimConfig;
import io.verbatim.runtime.controller.ControllerReplicaNode;
import io.verbatim.runtime.storage.LocalStorage;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.jspecify.annotations.Nullable;
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

    private final Optional<ClusterNode> cluster;
    private final Optional<ControllerReplicaNode> replica;
    private final Scheduler timer;
    private final Scheduler cpu;
    private final String started;
    private boolean stopped;

    private Node(Optional<ClusterNode> cluster, Optional<ControllerReplicaNode> replica, Scheduler timer, Scheduler cpu,
            String started) {
        this.cluster = cluster;
        this.replica = replica;
        this.started = started;
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
        return start(config, name, Optional.empty(), dataDir);
    }

    /** What one process of a cluster runs: the whole cluster, one controller replica, or one broker process. */
    sealed interface Role {
        /** The cluster's brokers and its controller replicas, in this process (it names no controllers). */
        record Whole() implements Role {
        }

        /** One controller replica, a voter of the cluster's metadata log. */
        record Voter(ControllerReplica replica) implements Role {
        }

        /** One broker process, a listener of the cluster's metadata log, on its own ports with its own secret. */
        record Broker(BrokerMember member) implements Role {
        }
    }

    /**
     * What {@code --member} ({@code member}) of cluster {@code name} runs.
     *
     * @throws IllegalArgumentException naming the key or the member when it cannot run so
     */
    static Role role(VerbatimConfig config, String name, Optional<String> member) {
        ClusterConfig self = config.cluster(name);
        String key = "clusters[" + config.clusters().indexOf(self) + "]";
        List<String> voters = self.controllers().stream().map(ControllerReplica::id).toList();
        List<String> brokers = self.brokerMembers().stream().map(BrokerMember::id).toList();
        if (self.separateControllers() && member.isEmpty()) {
            throw new IllegalArgumentException(key + " (" + name + ") runs its controller replicas as processes of their "
                    + "own: start each with --member " + String.join("|", voters) + ", and its "
                    + (self.namesBrokerMembers() ? "broker processes" : "brokers") + " with --member "
                    + String.join("|", brokers));
        }
        if (!self.separateControllers() && member.isPresent()) {
            throw new IllegalArgumentException(key + " (" + name + ") names no controllers: its controller replicas run "
                    + "in its brokers' process (start it without --member)");
        }
        if (member.isEmpty()) {
            return new Role.Whole();
        }
        String id = member.get();
        Optional<Role> role = self.controller(id).<Role>map(Role.Voter::new)
                .or(() -> self.brokerMember(id).map(Role.Broker::new));
        return role.orElseThrow(() -> new IllegalArgumentException("--member " + id + " is not a member of " + name
                + " (it has controller replicas " + voters + " and broker members " + brokers + ")"));
    }

    /**
     * Starts {@code member} of cluster {@code name}, a cluster whose controller replicas run as processes of
     * their own ({@code clusters[].controllers}): one of its controller replicas ({@code c1}, …), or one of its
     * broker processes (a member of its {@code brokerMembers}, or its one brokers process
     * {@value io.verbatim.config.ControllerReplica#BROKERS}); without a member, the whole cluster (its controller
     * replicas in this process).
     *
     * @throws IllegalArgumentException when the configuration cannot run so (it names the key or the member)
     */
    public static Node start(VerbatimConfig config, String name, Optional<String> member, Optional<Path> dataDir) {
        ClusterConfig self = config.cluster(name);
        String key = "clusters[" + config.clusters().indexOf(self) + "]";
        Role role = role(config, name, member);
        for (int i = 0; i < config.clusters().size(); i++) {
            ClusterConfig c = config.clusters().get(i);
            if (!c.brokerMembers().stream().allMatch(m -> m.addresses().fixedPorts())) {
                throw new IllegalArgumentException("clusters[" + i + "] (" + c.name()
                        + "): a node needs every cluster's adminPort and brokerPorts named (0 picks a free port, "
                        + "which peers in other processes cannot know)");
            }
        }
        if (role instanceof Role.Voter voter) {
            String id = voter.replica().id();
            Path dir = dataDir.orElseThrow(() -> new IllegalArgumentException("--member " + id
                    + " is a voter of " + name + "'s metadata log: it needs a data directory (--data-dir, or "
                    + key + ".dataDir), or a restart forgets its vote and what it acknowledged"));
            Scheduler timer = Threads.timer();
            try {
                ControllerReplicaNode replica = ControllerReplicaNode.start(config, name, id, dir, timer);
                return new Node(Optional.empty(), Optional.of(replica), timer, timer, replica.describe());
            } catch (RuntimeException e) {
                timer.dispose();
                throw e;
            }
        }
        Scheduler timer = Threads.timer();
        Scheduler cpu = Threads.cpu();
        ClusterNode node;
        LocalStorage storage = null;
        try {
            // On Pulsar the brokers keep the segments; in memory, a data directory keeps them across any stop.
            storage = dataDir.isPresent() && !config.storage().onPulsar()
                    ? LocalStorage.open(name, dataDir.get(), config.storage(), timer) : LocalStorage.memoryOnly(name, timer);
            if (storage.uncleanStop()) {
                LOG.warn("{}: the previous run did not stop cleanly (killed or crashed): recovered what it "
                        + "acknowledged from the journal", name);
            }
            node = (role instanceof Role.Broker broker
                    ? ClusterNode.brokersOf(config, name, broker.member().id(), dataDir, timer, cpu)
                    : new ClusterNode(config, name, dataDir, timer, cpu)).storage(storage);
        } catch (RuntimeException e) {
            if (storage != null) {
                storage.close();
            }
            timer.dispose();
            cpu.dispose();
            throw e;
        }
        try {
            node.start();
            Map<String, ClusterUrls> peers = new LinkedHashMap<>();
            for (ClusterConfig c : config.clusters()) {
                if (!c.name().equals(name)) {
                    peers.put(c.name(), ClusterUrls.of(config, c.name()));
                }
            }
            node.connect(peers);
        } catch (RuntimeException e) {
            node.close();
            timer.dispose();
            cpu.dispose();
            throw e;
        }
        return new Node(Optional.of(node), Optional.empty(), timer, cpu, describe(node, self, config.storage().onPulsar() ? null : storage));
    }

    /** @param storage where its topics' segments are kept; null on Pulsar */
    private static String describe(ClusterNode cluster, ClusterConfig self, @Nullable LocalStorage storage) {
        List<String> lines = new ArrayList<>();
        lines.add(cluster.name() + ": node started");
        if (storage != null) {
            lines.add("  storage " + storage.describe());
        }
        BrokerMember process = cluster.process();
        lines.add((self.separateControllers() ? "  brokers' admin (produce, image, status, metrics; exchange and admin "
                + "redirect to the controller leader) " : "  controller (exchange, admin, status, metrics) ")
                + cluster.adminUrl() + " bound to " + process.bindAddress() + ":" + cluster.adminPort());
        if (self.separateControllers()) {
            lines.add("  metadata log listener " + process.id() + " " + process.raftAddress() + ", controller replicas "
                    + self.controllers().stream().map(c -> c.id() + " " + c.raftAddress()).toList());
        }
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

    /**
     * The cluster this node runs (its brokers, and its controller unless the controller replicas run as
     * processes of their own).
     *
     * @throws IllegalStateException on a controller replica's node
     */
    public ClusterNode cluster() {
        return cluster.orElseThrow(() -> new IllegalStateException("this node runs controller replica "
                + replica.map(ControllerReplicaNode::member).orElse("?") + ", not the cluster's brokers"));
    }

    /** The controller replica this node runs, if it runs one. */
    public Optional<ControllerReplicaNode> replica() {
        return replica;
    }

    /** Its admin port's URL as peers reach it. */
    public String adminUrl() {
        return cluster.map(ClusterNode::adminUrl).orElseGet(() -> replica.orElseThrow().adminUrl());
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
            replica.ifPresent(ControllerReplicaNode::close);
            cluster.ifPresent(c -> {
                c.stop(drainTimeout);
                c.stateFile().ifPresent(f -> LOG.info("{}: state written to {}", c.name(), f));
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
