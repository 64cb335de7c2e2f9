package io.verbatim.config;

import io.verbatim.pipeline.PartsCodec;
import io.verbatim.pipeline.ReplicatorConfig;
import io.verbatim.pipeline.StartAt;
import java.time.Duration;

/**
 * The replicator settings every cluster shares; {@link #forCluster} gives one cluster's
 * {@link ReplicatorConfig}.
 */
public record ReplicationConfig(StartAt startAt, Duration messageTtl, int maxInFlight, Duration sendTimeout,
        Duration retryInitial, Duration retryMax, double retryJitter, PartsCodec partsCodec, Duration sealWait) {

    public ReplicationConfig {
        forCluster(startAt, messageTtl, maxInFlight, sendTimeout, retryInitial, retryMax, retryJitter, partsCodec,
                sealWait, "check"); // the pipeline's own checks, once, at load
    }

    public static ReplicationConfig defaults() {
        ReplicatorConfig d = ReplicatorConfig.defaults("defaults");
        return new ReplicationConfig(d.startAt(), d.messageTtl(), d.maxInFlight(), d.sendTimeout(),
                d.retryBackoffMin(), d.retryBackoffMax(), d.retryJitter(), d.partsCodec(), d.sealWait());
    }

    public ReplicatorConfig forCluster(String cluster) {
        return forCluster(startAt, messageTtl, maxInFlight, sendTimeout, retryInitial, retryMax, retryJitter,
                partsCodec, sealWait, cluster);
    }

    private static ReplicatorConfig forCluster(StartAt startAt, Duration messageTtl, int maxInFlight,
            Duration sendTimeout, Duration retryInitial, Duration retryMax, double retryJitter, PartsCodec partsCodec,
            Duration sealWait, String cluster) {
        return new ReplicatorConfig(cluster, maxInFlight, sendTimeout, retryInitial, retryMax, retryJitter, startAt,
                messageTtl, partsCodec, sealWait);
    }
}
