package io.verbatim.config;

import java.util.List;

/**
 * One of a cluster's broker processes ({@code verbatim node --cluster NAME --member ID}): a listener of the
 * cluster's metadata log with its own ingest endpoints, its own admin port (produce, image, status, metrics)
 * and its own secret. Named in {@code clusters[].brokerMembers}; a cluster that names none has one, with id
 * {@value ControllerReplica#BROKERS}, on the cluster's top-level addresses ({@link #of}).
 *
 * @param id the member id in the metadata log ({@code broker-1}, …), unique among the cluster's voters and
 *        broker members
 * @param bindAddress the host or IP its ports bind (the cluster's {@code bindAddress} unless named)
 * @param advertisedAddress where peers and the other members reach it (the cluster's {@code advertisedAddress}
 *        unless named)
 * @param adminPort its HTTP port (produce, image, status, metrics; exchange and admin calls are redirected to
 *        the controller leader)
 * @param brokerPorts each of its brokers' ingest ports, in broker order
 * @param raftPort its listener's port on the metadata log (0 for the one brokers process of a cluster whose
 *        metadata log runs inside it)
 */
public record BrokerMember(String id, String bindAddress, String advertisedAddress, int adminPort,
        List<Integer> brokerPorts, int raftPort) {

    public BrokerMember {
        ControllerReplica.idProblem(id).ifPresent(problem -> {
            throw new IllegalArgumentException("id " + problem);
        });
        brokerPorts = List.copyOf(brokerPorts);
        // the host and port checks are Addresses' own
        new Addresses(bindAddress, advertisedAddress, adminPort, brokerPorts, raftPort);
        if (!id.equals(ControllerReplica.BROKERS)) {
            named("adminPort", adminPort);
            for (int i = 0; i < brokerPorts.size(); i++) {
                named("brokerPorts[" + i + "]", brokerPorts.get(i));
            }
            named("raftPort", raftPort);
        }
    }

    /** The one brokers process of a cluster that names no broker members: on the cluster's {@code addresses}. */
    public static BrokerMember of(Addresses addresses) {
        return new BrokerMember(ControllerReplica.BROKERS, addresses.bindAddress(), addresses.advertisedAddress(),
                addresses.adminPort(), addresses.brokerPorts(), addresses.raftPort());
    }

    /** Where this process listens and where peers reach it. */
    public Addresses addresses() {
        return new Addresses(bindAddress, advertisedAddress, adminPort, brokerPorts, raftPort);
    }

    /** How many brokers run in this process: one per ingest port. */
    public int brokers() {
        return brokerPorts.size();
    }

    /** {@code advertisedAddress:raftPort}, what the metadata log's transport dials. */
    public String raftAddress() {
        return ControllerReplica.hostPort(advertisedAddress, raftPort);
    }

    /** {@code scheme://advertisedAddress:adminPort}. */
    public String adminUrl(String scheme) {
        return addresses().advertisedUrl(scheme, adminPort);
    }

    /** Each of its brokers' ingest URLs as peers reach them, in broker order. */
    public List<String> ingestUrls(String scheme) {
        Addresses a = addresses();
        return brokerPorts.stream().map(p -> a.advertisedUrl(scheme, p)).toList();
    }

    private static void named(String key, int port) {
        if (port < 1 || port > 65535) {
            throw new IllegalArgumentException(key + " " + port + " is not a port of a broker member (expected "
                    + "1..65535: the other processes must know it)");
        }
    }
}
