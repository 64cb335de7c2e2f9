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
 * @param brokers how many brokers its one brokers process runs (each owns the segments whose id modulo this
 *        count is its index, and has its own ingest endpoint and slow-path budget); 1 when it names
 *        {@code brokerMembers}, each of which says its own
 * @param addresses where its controller and brokers listen and where peers reach them; when it names
 *        {@code brokerMembers}, only its bind and advertised addresses count (each member's defaults) and
 *        its ports are 0: each member names its own
 * @param caps this cluster's own caps (the file's {@code caps} unless the cluster names its own): the
 *        effective caps of a topic are the minimum over the cluster and its peers, a mismatch is reported
 * @param dataDir where a node of this cluster keeps its state across a restart (empty: nothing is kept)
 * @param controllers its controller replicas when each runs as a process of its own (the voters of its
 *        metadata log; its broker processes are its listeners); empty: the replicas run in the brokers' process
 * @param delegations the admin's listener delegation for a new metadata log: listener -> the voter that
 *        feeds it (see {@link #metadataVoters} and {@link #metadataListeners} for the members' ids); empty:
 *        the leader feeds every listener (or, for named broker members, the runtime's default spread)
 * @param brokerMembers its broker processes, each a listener of its metadata log, in the file's order
 *        ({@code clusters[].brokerMembers}); when it names none (an empty list given), the one brokers process
 *        on {@code addresses}, with id {@value ControllerReplica#BROKERS}
 */
public record ClusterConfig(String name, int brokers, Addresses addresses, Caps caps, Optional<Path> dataDir,
        List<ControllerReplica> controllers, Map<String, String> delegations, List<BrokerMember> brokerMembers) {
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
        brokerMembers = brokerMembers.isEmpty() ? List.of(BrokerMember.of(addresses)) : List.copyOf(brokerMembers);
        if (named(brokerMembers)) {
            checkNamed(name, brokers, addresses, controllers, brokerMembers, ids);
        } else if (!brokerMembers.get(0).equals(BrokerMember.of(addresses))) {
            throw new IllegalArgumentException("cluster " + name + ": its one brokers process " + brokerMembers.get(0)
                    + " is not on its addresses " + addresses + " (expected an empty list of broker members, or members "
                    + "of their own ids)");
        } else if (!controllers.isEmpty() && addresses.raftPort() == 0) {
            throw new IllegalArgumentException("cluster " + name + " names its controllers but no raftPort: the brokers' "
                    + "process listens on its metadata log there (expected 1..65535)");
        }
        delegations = Collections.unmodifiableMap(new TreeMap<>(delegations));
        List<String> voters = voters(controllers);
        List<String> listeners = listeners(controllers, brokers, brokerMembers);
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

    /** A cluster that names no broker members: its one brokers process is on {@code addresses}. */
    public ClusterConfig(String name, int brokers, Addresses addresses, Caps caps, Optional<Path> dataDir,
            List<ControllerReplica> controllers, Map<String, String> delegations) {
        this(name, brokers, addresses, caps, dataDir, controllers, delegations, List.of());
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
        return new ClusterConfig(name, brokers, addresses, caps, Optional.of(value), controllers, delegations,
                brokerMembers);
    }

    /** The same cluster with the admin's listener delegation {@code value} (listener -> voter). */
    public ClusterConfig withDelegations(Map<String, String> value) {
        return new ClusterConfig(name, brokers, addresses, caps, dataDir, controllers, value, brokerMembers);
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
     * The listeners of its metadata log: its broker members' ids when the controllers run apart (the one
     * brokers process, {@value ControllerReplica#BROKERS}, when it names none), else one per broker
     * ({@code b0, b1, …}) of the process the log runs in.
     */
    public List<String> metadataListeners() {
        return listeners(controllers, brokers, brokerMembers);
    }

    private static List<String> listeners(List<ControllerReplica> controllers, int brokers, List<BrokerMember> members) {
        if (!controllers.isEmpty()) {
            return members.stream().map(BrokerMember::id).toList();
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

    /** The broker member {@code id} ({@value ControllerReplica#BROKERS} when it names none). */
    public Optional<BrokerMember> brokerMember(String id) {
        return brokerMembers.stream().filter(m -> m.id().equals(id)).findFirst();
    }

    /**
     * Whether it names its broker processes ({@code clusters[].brokerMembers}) rather than running one on its
     * top-level ports.
     */
    public boolean namesBrokerMembers() {
        return named(brokerMembers);
    }

    private static boolean named(List<BrokerMember> members) {
        return members.size() > 1 || !members.get(0).id().equals(ControllerReplica.BROKERS);
    }

    /**
     * Named broker members run apart from the voters, on ports of their own (the cluster's are 0), each with an
     * id no other member of the log has.
     */
    private static void checkNamed(String name, int brokers, Addresses addresses, List<ControllerReplica> controllers,
            List<BrokerMember> members, Set<String> voterIds) {
        if (controllers.isEmpty()) {
            throw new IllegalArgumentException("cluster " + name + " names broker members but no controllers: each broker "
                    + "member is a listener of the metadata log, whose voters must run apart, as processes of their own");
        }
        if (brokers != 1 || addresses.adminPort() != 0 || addresses.raftPort() != 0
                || addresses.brokerPorts().stream().anyMatch(p -> p != 0)) {
            throw new IllegalArgumentException("cluster " + name + " names broker members and also brokers " + brokers
                    + " on " + addresses + " (expected one form: with broker members, the cluster's own ports are 0 "
                    + "and its brokers 1)");
        }
        Set<String> ids = new HashSet<>(voterIds);
        for (BrokerMember m : members) {
            if (m.id().equals(ControllerReplica.BROKERS)) {
                throw new IllegalArgumentException("cluster " + name + ": broker member id '" + ControllerReplica.BROKERS
                        + "' is the one brokers process of a cluster that names no broker members: name it otherwise");
            }
            if (!ids.add(m.id())) {
                throw new IllegalArgumentException("cluster " + name + " names member '" + m.id() + "' twice (expected "
                        + "ids unique among its controller replicas and broker members)");
            }
        }
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
