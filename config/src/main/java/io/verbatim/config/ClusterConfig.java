package io.verbatim.config;

import io.verbatim.exchange.Caps;

/**
 * One cluster of the embedded runtime.
 *
 * @param name the cluster's name (Pulsar's {@code clusterName}), unique in the file
 * @param brokers how many brokers share its segments (each owns the segments whose id modulo this count is
 *        its index, and has its own ingest endpoint and slow-path budget)
 * @param adminPort the controller's HTTP port (exchange, status, metrics); 0 picks a free one
 * @param caps this cluster's own caps (the file's {@code caps} unless the cluster names its own): the
 *        effective caps of a topic are the minimum over the cluster and its peers, a mismatch is reported
 */
public record ClusterConfig(String name, int brokers, int adminPort, Caps caps) {
    /** Pulsar's cluster names are short; this one goes into every URL, cursor and producer name. */
    public static final int MAX_NAME_LENGTH = 64;

    public ClusterConfig {
        String problem = nameProblem(name);
        if (problem != null) {
            throw new IllegalArgumentException("name " + problem);
        }
        if (brokers < 1) {
            throw new IllegalArgumentException("brokers is " + brokers + ": must be at least 1");
        }
        if (caps == null) {
            throw new IllegalArgumentException("cluster " + name + " needs caps");
        }
    }

    /** What is wrong with {@code name} as a cluster name, the name first; {@code null} when nothing is. */
    static String nameProblem(String name) {
        if (name != null && name.length() <= MAX_NAME_LENGTH && name.matches("[A-Za-z0-9][A-Za-z0-9._-]*")) {
            return null;
        }
        return (name == null ? "null" : Section.quoted(name)) + " is not a cluster name (expected letters, digits, "
                + "'.', '_', '-', starting with a letter or digit, at most " + MAX_NAME_LENGTH + " characters)";
    }

    public ClusterConfig(String name, int brokers, int adminPort) {
        this(name, brokers, adminPort, Caps.PULSAR_DEFAULTS);
    }
}
