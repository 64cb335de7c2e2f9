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
    public ClusterConfig {
        if (name == null || !name.matches("[A-Za-z0-9][A-Za-z0-9._-]*")) {
            throw new IllegalArgumentException("name '" + name + "' is not a cluster name (letters, digits, '.', '_', '-')");
        }
        if (brokers < 1) {
            throw new IllegalArgumentException("brokers is " + brokers + ": must be at least 1");
        }
        if (caps == null) {
            throw new IllegalArgumentException("cluster " + name + " needs caps");
        }
    }

    public ClusterConfig(String name, int brokers, int adminPort) {
        this(name, brokers, adminPort, Caps.PULSAR_DEFAULTS);
    }
}
