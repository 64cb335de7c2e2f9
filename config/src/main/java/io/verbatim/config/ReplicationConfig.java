package io.verbatim.config;

import io.verbatim.model.Backoff;
import io.verbatim.pipeline.PartsCodec;
import io.verbatim.pipeline.ReplicatorConfig;
import io.verbatim.pipeline.StartAt;
import java.time.Duration;

/**
 * The replicator settings every cluster shares; {@link #forCluster} gives one cluster's
 * {@link ReplicatorConfig}.
 */
public record ReplicationConfig(StartAt startAt, Duration messageTtl, int maxInFlight, Duration sendTimeout,
        Backoff retry, PartsCodec partsCodec, Duration sealWait) {

    public ReplicationConfig {
        forCluster(startAt, messageTtl, maxInFlight, sendTimeout, retry, partsCodec, sealWait, "check");
    }

    public static ReplicationConfig defaults() {
        ReplicatorConfig d = ReplicatorConfig.defaults("defaults");
        return new ReplicationConfig(d.startAt(), d.messageTtl(), d.maxInFlight(), d.sendTimeout(), d.retry(),
                d.partsCodec(), d.sealWait());
    }

    public ReplicatorConfig forCluster(String cluster) {
        return forCluster(startAt, messageTtl, maxInFlight, sendTimeout, retry, partsCodec, sealWait, cluster);
    }

    /** The pipeline's own checks run here, once, at load. */
    private static ReplicatorConfig forCluster(StartAt startAt, Duration messageTtl, int maxInFlight,
            Duration sendTimeout, Backoff retry, PartsCodec partsCodec, Duration sealWait, String cluster) {
        return new ReplicatorConfig(cluster, maxInFlight, sendTimeout, retry, startAt, messageTtl, partsCodec,
                sealWait);
    }
}
