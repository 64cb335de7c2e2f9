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
 * The clusters' sections of the YAML: each cluster (addresses, brokers, caps, its controller replicas) and the
 * rule that no two listeners share a port.
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
                dataDir.map(Path::of), controllers, delegations));
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
            Addresses a = clusters.get(i).addresses();
            List<Listener> mine = new ArrayList<>();
            mine.add(new Listener("clusters[" + i + "].adminPort", a.bindAddress(), a.adminPort()));
            for (int b = 0; b < a.brokerPorts().size(); b++) {
                mine.add(new Listener("clusters[" + i + "].brokerPorts[" + b + "]", a.bindAddress(), a.brokerPorts().get(b)));
            }
            mine.add(new Listener("clusters[" + i + "].raftPort", a.bindAddress(), a.raftPort()));
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
