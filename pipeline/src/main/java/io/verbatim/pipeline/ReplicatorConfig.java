package io.verbatim.pipeline;

import io.verbatim.budget.InFlightBudget;
import io.verbatim.model.Backoff;
import java.time.Duration;

/**
 * How a segment replicator behaves. Every value is checked when the record is built; a bad one is
 * named with its value.
 *
 * @param localCluster this cluster's name: stamped as {@code replicated_from} and in producer names
 * @param maxInFlight entries read and not yet acknowledged by the remote; by default no bound of its own
 *        (the byte window binds first: it charges each entry {@link InFlightBudget#ENTRY_OVERHEAD_BYTES} beyond
 *        its bytes). Pulsar's {@code replicationProducerQueueSize} of 1000 entries let 1000 entries of 1 KiB
 *        have 10 MB/s over a 100 ms round trip: a window counted in entries is sized for no link at all.
 * @param maxInFlightBytes bytes of entries read and not yet acknowledged by the remote; an entry larger than
 *        the window goes alone. Default {@link #DEFAULT_MAX_IN_FLIGHT_BYTES}: twice the bandwidth-delay
 *        product of 1 Gbit/s over a 250 ms round trip
 * @param sendTimeout how long one send may take before the replicator rewinds and re-sends
 * @param retry the backoff between attempts (rewinds, and restarts of a failed replicator)
 * @param startAt where a new replication cursor starts
 * @param messageTtl entries older than this are skipped; {@link Duration#ZERO} keeps them forever
 * @param partsCodec how re-batched parts are compressed
 * @param sealWait after a destination was sealed, how long to wait for the remote's next layout
 */
public record ReplicatorConfig(
        String localCluster,
        int maxInFlight,
        long maxInFlightBytes,
        Duration sendTimeout,
        Backoff retry,
        StartAt startAt,
        Duration messageTtl,
        PartsCodec partsCodec,
        Duration sealWait) {

    /** Entries in flight per replicator at most; also the default (no bound beyond the byte window's). */
    public static final int MAX_IN_FLIGHT = 1_000_000;
    public static final int DEFAULT_MAX_IN_FLIGHT = MAX_IN_FLIGHT;
    /**
     * 64 MiB: 1 Gbit/s × 250 ms is 31.25 MB in flight; twice that keeps the link busy while receipts and
     * cursor acknowledgements lag behind the wire.
     */
    public static final long DEFAULT_MAX_IN_FLIGHT_BYTES = 64L << 20;
    /** The largest window: 16 GiB. */
    public static final long MAX_IN_FLIGHT_BYTES = 16L << 30;
    /** The longest send timeout and seal wait: beyond an hour a remote is down, not slow. */
    public static final Duration MAX_TIMEOUT = Duration.ofHours(1);
    /** Ten years: the longest message TTL (publish time plus TTL stays far inside a long of milliseconds). */
    public static final Duration MAX_MESSAGE_TTL = Duration.ofDays(3650);

    public ReplicatorConfig {
        if (localCluster == null || localCluster.isBlank()) {
            throw new IllegalArgumentException("localCluster must name this cluster");
        }
        if (maxInFlight < 1 || maxInFlight > MAX_IN_FLIGHT) {
            throw new IllegalArgumentException("maxInFlight " + maxInFlight + " must be within 1.." + MAX_IN_FLIGHT);
        }
        if (maxInFlightBytes < 1 || maxInFlightBytes > MAX_IN_FLIGHT_BYTES) {
            throw new IllegalArgumentException("maxInFlightBytes " + maxInFlightBytes + " must be within 1.."
                    + MAX_IN_FLIGHT_BYTES);
        }
        requirePositive("sendTimeout", sendTimeout);
        requirePositive("sealWait", sealWait);
        if (retry == null) {
            throw new IllegalArgumentException("retry must be set");
        }
        if (messageTtl == null || messageTtl.isNegative() || messageTtl.compareTo(MAX_MESSAGE_TTL) > 0) {
            throw new IllegalArgumentException("messageTtl " + messageTtl + " must be zero (none) or positive, at most "
                    + MAX_MESSAGE_TTL);
        }
        if (startAt == null || partsCodec == null) {
            throw new IllegalArgumentException("startAt and partsCodec must be set");
        }
    }

    /** The defaults, for the cluster {@code localCluster}. */
    public static ReplicatorConfig defaults(String localCluster) {
        return new ReplicatorConfig(localCluster, DEFAULT_MAX_IN_FLIGHT, DEFAULT_MAX_IN_FLIGHT_BYTES,
                Duration.ofSeconds(30),
                new Backoff(Duration.ofMillis(100), Duration.ofMinutes(1), 0.5), StartAt.LATEST, Duration.ZERO,
                PartsCodec.SOURCE, Duration.ofSeconds(30));
    }

    public ReplicatorConfig withLocalCluster(String value) {
        return new ReplicatorConfig(value, maxInFlight, maxInFlightBytes, sendTimeout, retry,
                startAt, messageTtl, partsCodec, sealWait);
    }

    public ReplicatorConfig withMaxInFlight(int value) {
        return new ReplicatorConfig(localCluster, value, maxInFlightBytes, sendTimeout, retry,
                startAt, messageTtl, partsCodec, sealWait);
    }

    public ReplicatorConfig withMaxInFlightBytes(long value) {
        return new ReplicatorConfig(localCluster, maxInFlight, value, sendTimeout, retry, startAt, messageTtl,
                partsCodec, sealWait);
    }

    public ReplicatorConfig withStartAt(StartAt value) {
        return new ReplicatorConfig(localCluster, maxInFlight, maxInFlightBytes, sendTimeout, retry, value, messageTtl,
                partsCodec, sealWait);
    }

    public ReplicatorConfig withMessageTtl(Duration value) {
        return new ReplicatorConfig(localCluster, maxInFlight, maxInFlightBytes, sendTimeout, retry, startAt, value,
                partsCodec, sealWait);
    }

    public ReplicatorConfig withPartsCodec(PartsCodec value) {
        return new ReplicatorConfig(localCluster, maxInFlight, maxInFlightBytes, sendTimeout, retry, startAt,
                messageTtl, value, sealWait);
    }

    public ReplicatorConfig withRetry(Duration min, Duration max, double jitter) {
        return new ReplicatorConfig(localCluster, maxInFlight, maxInFlightBytes, sendTimeout,
                new Backoff(min, max, jitter), startAt,
                messageTtl, partsCodec, sealWait);
    }

    public ReplicatorConfig withSendTimeout(Duration value) {
        return new ReplicatorConfig(localCluster, maxInFlight, maxInFlightBytes, value, retry,
                startAt, messageTtl, partsCodec, sealWait);
    }

    /** The durable cursor a replicator toward {@code remote} reads through: {@code pulsar.repl.<remote>}. */
    public static String cursorName(String remote) {
        return "pulsar.repl." + remote;
    }

    /** The producer name per source segment: {@code pulsar.repl.<sourceCluster>.<segmentId>}. */
    public static String producerName(String sourceCluster, long segmentId) {
        return "pulsar.repl." + sourceCluster + "." + segmentId;
    }

    private static void requirePositive(String name, Duration d) {
        if (d == null || d.isZero() || d.isNegative() || d.compareTo(MAX_TIMEOUT) > 0) {
            throw new IllegalArgumentException(name + " " + d + " must be a positive duration, at most " + MAX_TIMEOUT);
        }
    }
}
