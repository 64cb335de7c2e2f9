package io.verbatim.config;

import io.verbatim.exchange.Caps;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import org.jspecify.annotations.Nullable;

/**
 * One cluster of the replication set.
 *
 * @param name the cluster's name (Pulsar's {@code clusterName}), unique in the file
 * @param brokers how many brokers share its segments (each owns the segments whose id modulo this count is
 *        its index, and has its own ingest endpoint and slow-path budget)
 * @param addresses where its controller and brokers listen and where peers reach them
 * @param caps this cluster's own caps (the file's {@code caps} unless the cluster names its own): the
 *        effective caps of a topic are the minimum over the cluster and its peers, a mismatch is reported
 * @param dataDir where a node of this cluster keeps its state across a restart (empty: nothing is kept)
 * @param controllers its controller replicas when each runs as a process of its own (the voters of its
 *        metadata log; the brokers' process is its listener); empty: the replicas run in the brokers' process
 * @param delegations the admin's listener delegation for a new metadata log: listener -> the voter that
 *        feeds it (see {@link #metadataVoters} and {@link #metadataListeners} for the members' ids); empty:
 *        the leader feeds every listener
 */
public record ClusterConfig(String name, int brokers, Addresses addresses, Caps caps, Optional<Path> dataDir,
        List<ControllerReplica> controllers, Map<String, String> delegations) {
    /** The voters of a metadata log whose replicas run in the brokers' process. */
    public static final List<String> IN_PROCESS_VOTERS = List.of("c1", "c2", "c3");

    /** At most this many controller replicas: a metadata log of seven voters survives three failures. */
    public static final int MAX_CONTROLLERS = 7;

    /** Pulsar's cluster names are short; this one goes into every URL, cursor and producer name. */
    public static final int MAX_NAME_LENGTH = 64;

    public ClusterConfig {
        nameProblem(name).ifPresent(problem -> {
            throw new IllegalArgumentException("name " + problem);
        });
        if (brokers < 1) {
            throw new IllegalArgumentException("brokers is " + brokers + ": must be at least 1");
        }
        if (addresses == null || addresses.brokerPorts().size() != brokers) {
            throw new IllegalArgumentException("cluster " + name + " has " + brokers + " broker(s) but "
                    + (addresses == null ? "no addresses" : addresses.brokerPorts().size() + " broker port(s)"));
        }
        if (caps == null) {
            throw new IllegalArgumentException("cluster " + name + " needs caps");
        }
        if (dataDir == null) {
            throw new IllegalArgumentException("cluster " + name + ": dataDir is Optional.empty() when not set");
        }
        controllers = List.copyOf(controllers);
        if (controllers.size() > MAX_CONTROLLERS) {
            throw new IllegalArgumentException("cluster " + name + " names " + controllers.size()
                    + " controllers: at most " + MAX_CONTROLLERS);
        }
        Set<String> ids = new HashSet<>();
        for (ControllerReplica c : controllers) {
            if (!ids.add(c.id())) {
                throw new IllegalArgumentException("cluster " + name + " names controller '" + c.id() + "' twice");
            }
        }
        if (!controllers.isEmpty() && addresses.raftPort() == 0) {
            throw new IllegalArgumentException("cluster " + name + " names its controllers but no raftPort: the brokers' "
                    + "process listens on its metadata log there (expected 1..65535)");
        }
        delegations = Collections.unmodifiableMap(new TreeMap<>(delegations));
        List<String> voters = voters(controllers);
        List<String> listeners = listeners(controllers, brokers);
        delegations.forEach((listener, follower) -> {
            if (!listeners.contains(listener)) {
                throw new IllegalArgumentException("delegation " + listener + " -> " + follower + ": " + listener
                        + " is not a listener of cluster " + name + "'s metadata log (expected one of " + listeners + ")");
            }
            if (!voters.contains(follower)) {
                throw new IllegalArgumentException("delegation " + listener + " -> " + follower + ": " + follower
                        + " is not a voter of cluster " + name + "'s metadata log (expected one of " + voters + ")");
            }
        });
    }

    public ClusterConfig(String name, int brokers, Addresses addresses, Caps caps, Optional<Path> dataDir,
            List<ControllerReplica> controllers) {
        this(name, brokers, addresses, caps, dataDir, controllers, Map.of());
    }

    public ClusterConfig(String name, int brokers, Addresses addresses, Caps caps, Optional<Path> dataDir) {
        this(name, brokers, addresses, caps, dataDir, List.of());
    }

    /** A cluster on loopback with free ports and no data directory: the embedded runtime's default. */
    public ClusterConfig(String name, int brokers, Caps caps) {
        this(name, brokers, Addresses.loopback(brokers), caps, Optional.empty());
    }

    public ClusterConfig(String name, int brokers) {
        this(name, brokers, Caps.PULSAR_DEFAULTS);
    }

    public ClusterConfig withDataDir(Path value) {
        return new ClusterConfig(name, brokers, addresses, caps, Optional.of(value), controllers, delegations);
    }

    /** The same cluster with the admin's listener delegation {@code value} (listener -> voter). */
    public ClusterConfig withDelegations(Map<String, String> value) {
        return new ClusterConfig(name, brokers, addresses, caps, dataDir, controllers, value);
    }

    /**
     * The voters of its metadata log: its controller replicas' ids, or {@link #IN_PROCESS_VOTERS} when they
     * run in the brokers' process.
     */
    public List<String> metadataVoters() {
        return voters(controllers);
    }

    private static List<String> voters(List<ControllerReplica> controllers) {
        return controllers.isEmpty() ? IN_PROCESS_VOTERS : controllers.stream().map(ControllerReplica::id).toList();
    }

    /**
     * The listeners of its metadata log: the brokers' process ({@value ControllerReplica#BROKERS}) when the
     * controllers run apart, else one per broker ({@code b0, b1, …}).
     */
    public List<String> metadataListeners() {
        return listeners(controllers, brokers);
    }

    private static List<String> listeners(List<ControllerReplica> controllers, int brokers) {
        if (!controllers.isEmpty()) {
            return List.of(ControllerReplica.BROKERS);
        }
        List<String> out = new ArrayList<>();
        for (int i = 0; i < brokers; i++) {
            out.add("b" + i);
        }
        return List.copyOf(out);
    }

    /** Whether its controller replicas run as processes of their own (see {@link #controllers}). */
    public boolean separateControllers() {
        return !controllers.isEmpty();
    }

    /** The controller replica {@code id}. */
    public Optional<ControllerReplica> controller(String id) {
        return controllers.stream().filter(c -> c.id().equals(id)).findFirst();
    }

    /** What is wrong with {@code name} as a cluster name, the name first; empty when nothing is. */
    static Optional<String> nameProblem(@Nullable String name) {
        if (name != null && name.length() <= MAX_NAME_LENGTH && name.matches("[A-Za-z0-9][A-Za-z0-9._-]*")) {
            return Optional.empty();
        }
        return Optional.of((name == null ? "null" : Section.quoted(name))
                + " is not a cluster name (expected letters, digits, "
                + "'.', '_', '-', starting with a letter or digit, at most " + MAX_NAME_LENGTH + " characters)");
    }
}
