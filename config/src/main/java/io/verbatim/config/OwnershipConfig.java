package io.verbatim.config;

import java.time.Duration;

/**
 * How a cluster with many broker processes ({@code clusters[].brokerMembers}) shares its segments among them:
 * the controller leader records each segment's owner in the metadata log, as Pulsar records bundles' owners.
 *
 * @param lease a broker member acts on its segments while the leader answered one of its reports within this
 *        (less a tenth, at least a second, for clock drift); one silent for longer loses them
 * @param interval how often the leader plans ownership (and how often the members report)
 * @param maxMoves at most this many balancing moves per {@code moveInterval} (a drain's are not counted)
 * @param moveInterval the window {@code maxMoves} counts in
 * @param minTenure a segment given or moved is not moved again for balance within this
 * @param imbalance segments move while the most loaded member carries more than {@code 1 + imbalance} times
 *        the mean (bytes per second per segment, PIP-483's load)
 * @param drainTimeout a broker member stopped with SIGTERM waits at most this long for its segments to move
 */
public record OwnershipConfig(Duration lease, Duration interval, int maxMoves, Duration moveInterval,
        Duration minTenure, double imbalance, Duration drainTimeout) {
    static final Duration MIN_LEASE = Duration.ofSeconds(2);
    static final Duration MAX_LEASE = Duration.ofMinutes(10);
    static final int MAX_MOVES = 10_000;
    static final double MAX_IMBALANCE = 10;

    public OwnershipConfig {
        Ranges.check("lease", lease, MIN_LEASE, MAX_LEASE);
        Ranges.check("interval", interval, Duration.ofMillis(100), lease.dividedBy(2));
        Ranges.check("moveInterval", moveInterval, Duration.ofSeconds(1), Duration.ofHours(1));
        Ranges.check("minTenure", minTenure, Duration.ZERO, Duration.ofHours(1));
        Ranges.check("drainTimeout", drainTimeout, Duration.ZERO, Duration.ofHours(1));
        if (maxMoves < 0 || maxMoves > MAX_MOVES) {
            throw new IllegalArgumentException("maxMoves is " + maxMoves + ": must be within 0.." + MAX_MOVES);
        }
        if (!(imbalance >= 0 && imbalance <= MAX_IMBALANCE)) {
            throw new IllegalArgumentException("imbalance is " + imbalance + ": must be within 0.." + MAX_IMBALANCE);
        }
    }

    /** A 10 s lease, planned every second, 8 moves per 10 s, 60 s tenure, 25 % imbalance, 30 s to drain. */
    public static OwnershipConfig defaults() {
        return new OwnershipConfig(Duration.ofSeconds(10), Duration.ofSeconds(1), 8, Duration.ofSeconds(10),
                Duration.ofSeconds(60), 0.25, Duration.ofSeconds(30));
    }
}
