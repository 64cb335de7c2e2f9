package io.verbatim.config;

import io.verbatim.model.Backoff;
import io.verbatim.pipeline.PartsCodec;
import io.verbatim.pipeline.ReplicatorConfig;
import io.verbatim.pipeline.StartAt;
import java.time.Duration;

/**
 * The replicator settings every cluster shares; {@link #forCluster} gives one cluster's
 * {@link ReplicatorConfig}.
 *
 * @param brokerInFlightBytes the bytes in flight all replicators of one broker may hold together
 *        ({@link io.verbatim.pipeline.InFlightBudget}); each may still take one entry when it holds none
 */
public record ReplicationConfig(StartAt startAt, Duration messageTtl, int maxInFlight, long maxInFlightBytes,
        long brokerInFlightBytes, Duration sendTimeout, Backoff retry, PartsCodec partsCodec, Duration sealWait) {

    /** 512 MiB: eight replicators' full default windows; beyond, they share. */
    public static final long DEFAULT_BROKER_IN_FLIGHT_BYTES = 512L << 20;
    /** The largest broker budget: 64 GiB. */
    public static final long MAX_BROKER_IN_FLIGHT_BYTES = 64L << 30;

    public ReplicationConfig {
        forCluster(startAt, messageTtl, maxInFlight, maxInFlightBytes, sendTimeout, retry, partsCodec, sealWait,
                "check");
        if (brokerInFlightBytes < 1 || brokerInFlightBytes > MAX_BROKER_IN_FLIGHT_BYTES) {
            throw new IllegalArgumentException("brokerInFlightBytes " + brokerInFlightBytes + " must be within 1.."
                    + MAX_BROKER_IN_FLIGHT_BYTES);
        }
    }

    public static ReplicationConfig defaults() {
        ReplicatorConfig d = ReplicatorConfig.defaults("defaults");
        return new ReplicationConfig(d.startAt(), d.messageTtl(), d.maxInFlight(), d.maxInFlightBytes(),
                DEFAULT_BROKER_IN_FLIGHT_BYTES, d.sendTimeout(), d.retry(), d.partsCodec(), d.sealWait());
    }

    public ReplicatorConfig forCluster(String cluster) {
        return forCluster(startAt, messageTtl, maxInFlight, maxInFlightBytes, sendTimeout, retry, partsCodec, sealWait,
                cluster);
    }

    /** The pipeline's own checks run here, once, at load. */
    private static ReplicatorConfig forCluster(StartAt startAt, Duration messageTtl, int maxInFlight,
            long maxInFlightBytes, Duration sendTimeout, Backoff retry, PartsCodec partsCodec, Duration sealWait,
            String cluster) {
        return new ReplicatorConfig(cluster, maxInFlight, maxInFlightBytes, sendTimeout, retry, startAt, messageTtl,
                partsCodec, sealWait);
    }
}
