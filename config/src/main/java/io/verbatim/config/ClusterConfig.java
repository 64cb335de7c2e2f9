package io.verbatim.config;

/**
 * One cluster of the embedded runtime.
 *
 * @param name the cluster's name (Pulsar's {@code clusterName}), unique in the file
 * @param brokers how many brokers share its segments (each owns the segments whose id modulo this count is
 *        its index, and has its own ingest endpoint and slow-path budget)
 * @param adminPort the controller's HTTP port (exchange, status, metrics); 0 picks a free one
 */
public record ClusterConfig(String name, int brokers, int adminPort) {
    public ClusterConfig {
        if (name == null || !name.matches("[A-Za-z0-9][A-Za-z0-9._-]*")) {
            throw new IllegalArgumentException("name '" + name + "' is not a cluster name (letters, digits, '.', '_', '-')");
        }
        if (brokers < 1) {
            throw new IllegalArgumentException("brokers is " + brokers + ": must be at least 1");
        }
    }
}
