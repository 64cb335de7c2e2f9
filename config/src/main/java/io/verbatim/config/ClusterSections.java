package io.verbatim.config;

import static io.verbatim.config.VerbatimConfig.build;
import static io.verbatim.config.VerbatimConfig.caps;

import com.fasterxml.jackson.databind.JsonNode;
import io.verbatim.exchange.Caps;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The clusters' sections of the YAML: each cluster (addresses, brokers, caps, its controller replicas, its broker
 * members) and the rule that no two listeners share a port.
 */
final class ClusterSections {
    private ClusterSections() {
    }

    static ClusterConfig cluster(Section s, Caps defaults) {
        String name = s.requiredString("name", "the cluster's name");
        ClusterConfig.nameProblem(name).ifPresent(problem -> {
            throw new ConfigException(s.key("name"), problem);
        });
        String bind = s.string("bindAddress", Addresses.LOOPBACK);
        Optional<String> advertised = s.optionalString("advertisedAddress");
        boolean named = s.has("brokerMembers");
        if (named) {
            oneForm(s);
        }
        int adminPort = s.integer("adminPort", 0, 0, 65535);
        List<Integer> brokerPorts = s.integers("brokerPorts", 0, 65535);
        int brokers = s.integer("brokers", brokerPorts.isEmpty() ? 1 : brokerPorts.size(), 1, 16);
        if (brokerPorts.isEmpty()) {
            brokerPorts = Collections.nCopies(brokers, 0);
        } else if (brokerPorts.size() != brokers) {
            throw new ConfigException(s.key("brokerPorts"), brokerPorts + " names " + brokerPorts.size()
                    + " port(s) (expected one per broker: " + brokers + ")");
        }
        Caps caps = caps(s.section("caps"), defaults);
        Optional<String> dataDir = s.optionalString("dataDir");
        int raftPort = s.integer("raftPort", 0, 0, 65535);
        String advertisedAddress = advertised.orElseGet(() -> Addresses.defaultAdvertised(bind));
        List<ControllerReplica> controllers = new ArrayList<>();
        for (Section c : s.sections("controllers")) {
            controllers.add(controller(c, bind, advertisedAddress));
        }
        List<BrokerMember> members = named ? brokerMembers(s, controllers, bind, advertisedAddress) : List.of();
        Map<String, String> delegations = new LinkedHashMap<>();
        s.entries("delegations", e -> {
            JsonNode v = e.value();
            if (v == null || !v.isTextual() || v.asText().isBlank()) {
                throw new ConfigException(e.key(), (v == null ? "null" : Section.shown(v))
                        + " is not a member id (expected the voter that feeds listener " + e.name() + ")");
            }
            delegations.put(e.name(), v.asText().trim());
            return e.name();
        });
        // the caller reads the cluster's credentials and TLS, then done()
        List<Integer> ports = brokerPorts;
        Addresses addresses = build(s, () -> new Addresses(bind, advertisedAddress, adminPort, ports, raftPort));
        return build(s, () -> new ClusterConfig(name, brokers, addresses, caps,
                dataDir.map(Path::of), controllers, delegations, members));
    }

    /** The keys of the one brokers process, refused beside {@code brokerMembers}: a cluster uses one form. */
    private static final List<String> ONE_PROCESS_KEYS = List.of("adminPort", "brokerPorts", "brokers", "raftPort",
            "brokersSecret");

    private static void oneForm(Section s) {
        for (String k : ONE_PROCESS_KEYS) {
            if (s.has(k)) {
                throw new ConfigException(s.key(k), "is given beside " + s.key("brokerMembers") + " (expected one form: "
                        + "each broker member's own adminPort, brokerPorts, raftPort and secret in brokerMembers, or the "
                        + "one brokers process's adminPort, brokerPorts, raftPort and brokersSecret on the cluster)");
            }
        }
    }

    /**
     * {@code brokerMembers}: at least one, only beside controllers (the voters run apart), each id its own among
     * the log's members.
     */
    private static List<BrokerMember> brokerMembers(Section s, List<ControllerReplica> controllers, String clusterBind,
            String clusterAdvertised) {
        List<Section> sections = s.sections("brokerMembers");
        if (sections.isEmpty()) {
            throw new ConfigException(s.key("brokerMembers"), "is empty (expected at least one broker member: "
                    + "{id, adminPort, brokerPorts, raftPort, secret}, or no brokerMembers key for the one brokers "
                    + "process on the cluster's own ports)");
        }
        if (controllers.isEmpty()) {
            throw new ConfigException(s.key("brokerMembers"), "names " + sections.size() + " broker member(s) but the "
                    + "cluster names no controllers (expected clusters[].controllers: each broker member is a listener "
                    + "of the cluster's metadata log, so its voters must run apart, as processes of their own)");
        }
        Map<String, String> ids = new LinkedHashMap<>();
        for (int r = 0; r < controllers.size(); r++) {
            ids.putIfAbsent(controllers.get(r).id(), s.key("controllers[" + r + "].id"));
        }
        List<BrokerMember> out = new ArrayList<>();
        for (Section m : sections) {
            BrokerMember member = brokerMember(m, clusterBind, clusterAdvertised);
            String other = ids.putIfAbsent(member.id(), m.key("id"));
            if (other != null) {
                throw new ConfigException(m.key("id"), Section.quoted(member.id()) + " is also " + other
                        + " (expected ids unique among the cluster's controller replicas and broker members)");
            }
            out.add(member);
        }
        return out;
    }

    /** A broker member: its host defaults to the cluster's, its ports are required (other processes dial them). */
    static BrokerMember brokerMember(Section s, String clusterBind, String clusterAdvertised) {
        String id = s.requiredString("id", "the broker member's id, e.g. broker-1");
        if (id.equals(ControllerReplica.BROKERS)) {
            throw new ConfigException(s.key("id"), "'" + id + "' is the id of the one brokers process of a cluster that "
                    + "names no brokerMembers (expected an id of the member's own, e.g. broker-1)");
        }
        String bind = s.string("bindAddress", clusterBind);
        String advertised = s.optionalString("advertisedAddress")
                .orElse(bind.equals(clusterBind) ? clusterAdvertised : Addresses.defaultAdvertised(bind));
        int admin = s.integer("adminPort", 0, 1, 65535);
        int raft = s.integer("raftPort", 0, 1, 65535);
        List<Integer> ports = s.integers("brokerPorts", 1, 65535);
        for (String k : List.of("adminPort", "brokerPorts", "raftPort")) {
            if (!s.has(k)) {
                throw new ConfigException(s.key(k), "is required for a broker member (the other processes and the peers "
                        + "dial it; " + (k.equals("brokerPorts") ? "a list of ports, one per broker" : "1..65535") + ")");
            }
        }
        if (ports.isEmpty()) {
            throw new ConfigException(s.key("brokerPorts"), "is empty (expected one ingest port per broker of the "
                    + "member, 1..65535)");
        }
        s.has("secret"); // read with the cluster's credentials (MemberSecrets)
        s.done();
        return build(s, () -> new BrokerMember(id, bind, advertised, admin, ports, raft));
    }

    static ControllerReplica controller(Section s, String clusterBind, String clusterAdvertised) {
        String id = s.requiredString("id", "the replica's member id, e.g. c1");
        String bind = s.string("bindAddress", clusterBind);
        String advertised = s.optionalString("advertisedAddress")
                .orElse(bind.equals(clusterBind) ? clusterAdvertised : Addresses.defaultAdvertised(bind));
        int admin = s.integer("adminPort", 0, 1, 65535);
        int raft = s.integer("raftPort", 0, 1, 65535);
        if (!s.has("adminPort") || !s.has("raftPort")) {
            throw new ConfigException(s.key(s.has("adminPort") ? "raftPort" : "adminPort"),
                    "is required for a controller replica (the other processes dial it; 1..65535)");
        }
        s.has("secret"); // read with the cluster's credentials (MemberSecrets)
        s.done();
        return build(s, () -> new ControllerReplica(id, bind, advertised, admin, raft));
    }

    /**
     * No two ports of the file may be the same on one host: each (bind address, port) pair is one listener,
     * and a wildcard bind address overlaps every address.
     */
    static void distinctPorts(List<ClusterConfig> clusters) {
        record Listener(String key, String host, int port) {
            boolean overlaps(Listener o) {
                return port == o.port && (host.equals(o.host) || Addresses.isWildcard(host) || Addresses.isWildcard(o.host));
            }
        }
        List<Listener> seen = new ArrayList<>();
        for (int i = 0; i < clusters.size(); i++) {
            ClusterConfig cluster = clusters.get(i);
            List<Listener> mine = new ArrayList<>();
            List<BrokerMember> members = cluster.brokerMembers();
            for (int m = 0; m < members.size(); m++) {
                BrokerMember b = members.get(m);
                // the one brokers process's ports are the cluster's own keys
                String key = "clusters[" + i + "]" + (cluster.namesBrokerMembers() ? ".brokerMembers[" + m + "]" : "");
                mine.add(new Listener(key + ".adminPort", b.bindAddress(), b.adminPort()));
                for (int p = 0; p < b.brokerPorts().size(); p++) {
                    mine.add(new Listener(key + ".brokerPorts[" + p + "]", b.bindAddress(), b.brokerPorts().get(p)));
                }
                mine.add(new Listener(key + ".raftPort", b.bindAddress(), b.raftPort()));
            }
            List<ControllerReplica> replicas = clusters.get(i).controllers();
            for (int r = 0; r < replicas.size(); r++) {
                ControllerReplica c = replicas.get(r);
                String key = "clusters[" + i + "].controllers[" + r + "]";
                mine.add(new Listener(key + ".adminPort", c.bindAddress(), c.adminPort()));
                mine.add(new Listener(key + ".raftPort", c.bindAddress(), c.raftPort()));
            }
            for (Listener l : mine) {
                if (l.port() == 0) {
                    continue;
                }
                for (Listener o : seen) {
                    if (l.overlaps(o)) {
                        throw new ConfigException(l.key(), l.port() + " on " + l.host() + " is also " + o.key()
                                + " on " + o.host() + " (expected a port of its own)");
                    }
                }
                seen.add(l);
            }
        }
    }
}
