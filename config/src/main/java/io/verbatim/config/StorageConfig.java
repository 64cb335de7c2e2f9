package io.verbatim.config;

import java.time.Duration;
import java.util.Map;
import java.util.Optional;

/**
 * Where and how the clusters keep their segments.
 *
 * @param deleteConsumed in memory: whether entries every cursor (replication and subscription) acknowledged
 *        are dropped as the slowest cursor moves on (Pulsar's retention of zero): a log then holds its backlog
 *        only. Off, every entry stays until its segment is deleted (tests that read what is stored). On
 *        Pulsar, the namespace's retention policy decides.
 * @param pruneSealed whether garbage collection deletes a sealed segment once every cursor drained it
 *        (PIP-495's GC gating: replication backlog pins it, for as long as the message TTL allows)
 * @param gcInterval how often garbage collection looks for sealed segments to delete
 * @param type in memory (the default) or on each cluster's Apache Pulsar
 * @param pulsar on Pulsar: each cluster's Pulsar, by cluster name ({@code clusters[].pulsar})
 */
public record StorageConfig(boolean deleteConsumed, boolean pruneSealed, Duration gcInterval, Type type,
        Map<String, PulsarConfig> pulsar) {

    /** Where segments live. */
    public enum Type {
        /** In this process's memory (lost when it stops, unless a node's data directory keeps an image). */
        MEMORY,
        /** On each cluster's Apache Pulsar: a segment is a persistent topic, a cursor a durable subscription. */
        PULSAR
    }

    public StorageConfig {
        Ranges.check("gcInterval", gcInterval, Ranges.TEN_MS, Ranges.MAX_INTERVAL);
        pulsar = Map.copyOf(pulsar);
        if (type == Type.MEMORY && !pulsar.isEmpty()) {
            throw new IllegalArgumentException("pulsar settings for " + pulsar.keySet() + " while storage is in memory "
                    + "(expected type pulsar, or no Pulsar settings)");
        }
    }

    public StorageConfig(boolean deleteConsumed, boolean pruneSealed, Duration gcInterval) {
        this(deleteConsumed, pruneSealed, gcInterval, Type.MEMORY, Map.of());
    }

    public static StorageConfig defaults() {
        return new StorageConfig(false, true, Duration.ofSeconds(10));
    }

    /** Whether segments live on Pulsar. */
    public boolean onPulsar() {
        return type == Type.PULSAR;
    }

    /** Cluster {@code cluster}'s Pulsar; empty in memory. */
    public Optional<PulsarConfig> pulsar(String cluster) {
        return Optional.ofNullable(pulsar.get(cluster));
    }

    /**
     * On Pulsar, with {@code settings} as each cluster's Pulsar (every cluster of the file needs one; {@link
     * VerbatimConfig#withStorage} checks).
     */
    public StorageConfig onPulsar(Map<String, PulsarConfig> settings) {
        return new StorageConfig(deleteConsumed, pruneSealed, gcInterval, Type.PULSAR, settings);
    }
}
