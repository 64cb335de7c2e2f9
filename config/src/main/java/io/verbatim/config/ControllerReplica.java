package io.verbatim.config;

import java.util.List;
import java.util.Optional;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * One of a cluster's controller replicas: a voter of its metadata log, run as its own process
 * ({@code verbatim node --cluster NAME --member ID}). The replica that leads the log is the cluster's
 * controller leader; the others redirect exchange and admin calls to it.
 *
 * @param id the member id in the metadata log ({@code c1}, …), unique within the cluster
 * @param bindAddress the host or IP its ports bind (the cluster's {@code bindAddress} unless named)
 * @param advertisedAddress where peers and the other replicas reach it (the cluster's
 *        {@code advertisedAddress} unless named)
 * @param adminPort its HTTP port: exchange, admin, status and metrics (1..65535)
 * @param raftPort its metadata log transport's port (1..65535)
 */
public record ControllerReplica(String id, String bindAddress, String advertisedAddress, int adminPort, int raftPort) {
    /**
     * The member id of a cluster's one brokers process, the metadata log's listener, when the cluster names no
     * {@code brokerMembers} (its top-level {@code adminPort}, {@code brokerPorts}, {@code raftPort} and
     * {@code brokersSecret} are that process's).
     */
    public static final String BROKERS = "brokers";
    private static final Pattern ID = Pattern.compile("[A-Za-z0-9][A-Za-z0-9_-]{0,31}");

    public ControllerReplica {
        idProblem(id).ifPresent(problem -> {
            throw new IllegalArgumentException("id " + problem);
        });
        if (id.equals(BROKERS)) {
            throw new IllegalArgumentException("id '" + BROKERS + "' is the brokers' member: name the replica otherwise");
        }
        // the host checks are Addresses' own
        new Addresses(bindAddress, advertisedAddress, adminPort, List.of(1));
        if (adminPort < 1 || adminPort > 65535) {
            throw new IllegalArgumentException("adminPort " + adminPort + " is not a port of a replica (expected 1..65535: "
                    + "the other processes must know it)");
        }
        if (raftPort < 1 || raftPort > 65535) {
            throw new IllegalArgumentException("raftPort " + raftPort + " is not a port of a replica (expected 1..65535: "
                    + "the other processes must know it)");
        }
    }

    /** {@code scheme://advertisedAddress:adminPort}. */
    public String adminUrl(String scheme) {
        return new Addresses(bindAddress, advertisedAddress, adminPort, List.of(1)).advertisedUrl(scheme,
                adminPort);
    }

    /** {@code advertisedAddress:raftPort}, what the metadata log's transport dials. */
    public String raftAddress() {
        return hostPort(advertisedAddress, raftPort);
    }

    /**
     * What is wrong with {@code id} as a member id of a metadata log (a controller replica's or a broker
     * member's), the id first; empty when nothing is.
     */
    static Optional<String> idProblem(@Nullable String id) {
        if (id != null && ID.matcher(id).matches()) {
            return Optional.empty();
        }
        return Optional.of((id == null ? "null" : Section.quoted(id)) + " is not a member id (expected letters, "
                + "digits, '_', '-', starting with a letter or digit, at most 32 characters)");
    }

    static String hostPort(String host, int port) {
        return (host.contains(":") && !host.startsWith("[") ? "[" + host + "]" : host) + ":" + port;
    }
}
