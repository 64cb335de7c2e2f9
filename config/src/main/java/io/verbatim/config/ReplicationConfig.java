package io.verbatim.config;

import io.verbatim.budget.InFlightBudget;
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
 * @param pingInterval how often a replication session and a layout stream ping the remote's broker
 * @param pingTimeout how long a session or layout stream may hear nothing (no receipt, no layout, no pong, no
 *        answer to its opening) before it is taken for dead, closed and opened again; above {@code pingInterval}
 * @param stallAfter how long a replicator with backlog may acknowledge nothing before status calls it stalled
 */
public record ReplicationConfig(StartAt startAt, Duration messageTtl, int maxInFlight, long maxInFlightBytes,
        long brokerInFlightBytes, Duration sendTimeout, Backoff retry, PartsCodec partsCodec, Duration sealWait,
        Duration pingInterval, Duration pingTimeout, Duration stallAfter) {

    /** 512 MiB: eight replicators' full default windows; beyond, they share. */
    public static final long DEFAULT_BROKER_IN_FLIGHT_BYTES = 512L << 20;
    /** The largest broker budget: 64 GiB. */
    public static final long MAX_BROKER_IN_FLIGHT_BYTES = 64L << 30;
    /** The shortest ping interval and timeout: below, a loaded machine's pauses look like dead peers. */
    public static final Duration MIN_PING = Duration.ofMillis(10);
    /** A ping every second. */
    public static final Duration DEFAULT_PING_INTERVAL = Duration.ofSeconds(1);
    /**
     * Dead after 3 s of silence: three pings unanswered, each with a WAN round trip to spare, and room for a
     * loaded machine's pauses (at 1.5 s, sessions of a machine running 25 threads per core were cut again and again).
     */
    public static final Duration DEFAULT_PING_TIMEOUT = Duration.ofSeconds(3);
    /** Stalled after 5 s without an acknowledgement while it has backlog. */
    public static final Duration DEFAULT_STALL_AFTER = Duration.ofSeconds(5);

    public ReplicationConfig {
        forCluster(startAt, messageTtl, maxInFlight, maxInFlightBytes, sendTimeout, retry, partsCodec, sealWait,
                "check");
        if (brokerInFlightBytes < 1 || brokerInFlightBytes > MAX_BROKER_IN_FLIGHT_BYTES) {
            throw new IllegalArgumentException("brokerInFlightBytes " + brokerInFlightBytes + " must be within 1.."
                    + MAX_BROKER_IN_FLIGHT_BYTES);
        }
        within("pingInterval", pingInterval, MIN_PING);
        within("pingTimeout", pingTimeout, MIN_PING);
        within("stallAfter", stallAfter, Duration.ofMillis(1));
        if (pingTimeout.compareTo(pingInterval) <= 0) {
            throw new IllegalArgumentException("pingTimeout " + pingTimeout + " must be above pingInterval "
                    + pingInterval + " (a ping needs time to be answered)");
        }
    }

    private static void within(String name, Duration d, Duration min) {
        if (d == null || d.compareTo(min) < 0 || d.compareTo(ReplicatorConfig.MAX_TIMEOUT) > 0) {
            throw new IllegalArgumentException(name + " " + d + " must be within " + min + ".."
                    + ReplicatorConfig.MAX_TIMEOUT);
        }
    }

    public static ReplicationConfig defaults() {
        ReplicatorConfig d = ReplicatorConfig.defaults("defaults");
        return new ReplicationConfig(d.startAt(), d.messageTtl(), d.maxInFlight(), d.maxInFlightBytes(),
                DEFAULT_BROKER_IN_FLIGHT_BYTES, d.sendTimeout(), d.retry(), d.partsCodec(), d.sealWait(),
                DEFAULT_PING_INTERVAL, DEFAULT_PING_TIMEOUT, DEFAULT_STALL_AFTER);
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
