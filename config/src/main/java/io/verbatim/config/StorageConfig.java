package io.verbatim.config;

import java.time.Duration;
import java.util.Map;
import java.util.Objects;
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
 * @param flush in memory with a data directory: when the journal forces what it wrote to the disk, before
 *        anything is acknowledged ({@link Flush})
 * @param checkpointBytes in memory with a data directory: how much the journal may hold before a checkpoint
 *        writes every topic down and the journal starts again (it bounds how much a restart replays)
 */
public record StorageConfig(boolean deleteConsumed, boolean pruneSealed, Duration gcInterval, Type type,
        Map<String, PulsarConfig> pulsar, Flush flush, long checkpointBytes) {

    /** The smallest and largest {@link #checkpointBytes}. */
    public static final long MIN_CHECKPOINT_BYTES = 1 << 20;
    public static final long MAX_CHECKPOINT_BYTES = 64L << 30;
    /** The longest {@link Flush.Every} interval. */
    public static final Duration MAX_FLUSH_INTERVAL = Duration.ofMinutes(1);
    /** The default {@link #checkpointBytes}: 64 MiB. */
    public static final long DEFAULT_CHECKPOINT_BYTES = 64 << 20;

    /**
     * When the embedded storage's journal is forced to disk. Whatever the policy, a record is written to the
     * operating system before what it records is acknowledged, so a crash of the process loses nothing
     * acknowledged; the policy decides what a crash of the machine (power, kernel) may lose.
     */
    public sealed interface Flush {
        /** Forced after each batch of records, before any of them is acknowledged (the default): nothing. */
        record PerBatch() implements Flush {
            @Override
            public String toString() {
                return "batch";
            }
        }

        /** Forced at least every {@code interval}; acknowledged once written: at most the last interval. */
        record Every(Duration interval) implements Flush {
            public Every {
                Ranges.check("flush", interval, Ranges.MS, MAX_FLUSH_INTERVAL);
            }

            @Override
            public String toString() {
                return Section.pretty(interval);
            }
        }

        /** Never forced: the operating system writes when it will. */
        record Never() implements Flush {
            @Override
            public String toString() {
                return "never";
            }
        }
    }

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
        Objects.requireNonNull(flush, "flush");
        if (checkpointBytes < MIN_CHECKPOINT_BYTES || checkpointBytes > MAX_CHECKPOINT_BYTES) {
            throw new IllegalArgumentException("checkpointBytes " + checkpointBytes + " is out of range (expected at "
                    + "least " + MIN_CHECKPOINT_BYTES + " and at most " + MAX_CHECKPOINT_BYTES + ")");
        }
        if (type == Type.MEMORY && !pulsar.isEmpty()) {
            throw new IllegalArgumentException("pulsar settings for " + pulsar.keySet() + " while storage is in memory "
                    + "(expected type pulsar, or no Pulsar settings)");
        }
    }

    public StorageConfig(boolean deleteConsumed, boolean pruneSealed, Duration gcInterval, Type type,
            Map<String, PulsarConfig> pulsar) {
        this(deleteConsumed, pruneSealed, gcInterval, type, pulsar, new Flush.PerBatch(), DEFAULT_CHECKPOINT_BYTES);
    }

    public StorageConfig(boolean deleteConsumed, boolean pruneSealed, Duration gcInterval) {
        this(deleteConsumed, pruneSealed, gcInterval, Type.MEMORY, Map.of());
    }

    /** The same with the embedded storage's journal settings {@code flush} and {@code checkpointBytes}. */
    public StorageConfig withJournal(Flush flush, long checkpointBytes) {
        return new StorageConfig(deleteConsumed, pruneSealed, gcInterval, type, pulsar, flush, checkpointBytes);
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
        return new StorageConfig(deleteConsumed, pruneSealed, gcInterval, Type.PULSAR, settings, flush, checkpointBytes);
    }
}
