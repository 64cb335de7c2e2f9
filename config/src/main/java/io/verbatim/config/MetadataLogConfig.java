package io.verbatim.config;

import java.time.Duration;

/**
 * Every cluster's metadata log: its listener delegation (RATIS-2599's knobs and defaults, with the admin's
 * assignment in {@code clusters[].delegations}) and its timing, which every member of every log runs on.
 *
 * @param enabled whether followers may feed listeners: every member runs delegation, and the admin's
 *        assignment is in force (off: the leader feeds every listener, whatever is assigned)
 * @param maxListenersPerFollower how many listeners the admin may assign to one follower
 * @param followerLagThreshold entries a delegate may lag the leader's commit and still feed its listeners;
 *        further behind, the leader revokes its delegations and feeds them itself
 * @param reassignmentInterval how often the leader re-checks a revoked delegation's follower and restores
 *        the admin's assignment once it is healthy again (and how long a listener may stand still below the
 *        commit before its delegation is revoked)
 * @param timing the clock of every member: its tick, election and heartbeat, snapshots, reads
 */
public record MetadataLogConfig(boolean enabled, int maxListenersPerFollower, int followerLagThreshold,
        Duration reassignmentInterval, Timing timing) {
    /**
     * @param tick how often a member's clock advances (everything below counts in ticks)
     * @param electionTicks a follower that hears no leader for this many ticks (drawn anew in [n, 2n)) campaigns;
     *        a leader that heard no quorum for as long steps down
     * @param heartbeatTicks a leader heartbeats every member this often; fewer than {@code electionTicks}
     * @param snapshotEvery a member snapshots its layouts every this many applied entries and drops the log
     *        they cover, but for a tail of {@code logTailEntries}
     * @param readTimeout how long a linearizable read waits for the leader's confirmation
     * @param logTailEntries how many entries before a snapshot a member keeps, so members a little behind are
     *        sent entries rather than the whole snapshot (0: none; in memory only)
     */
    public record Timing(Duration tick, int electionTicks, int heartbeatTicks, long snapshotEvery, Duration readTimeout,
            long logTailEntries) {
        public static final int MAX_TICKS = 10_000;
        public static final long MAX_SNAPSHOT_EVERY = 1_000_000_000L;
        /** Entries a compaction keeps by default: a tenth of the default {@code snapshotEvery}. */
        public static final long DEFAULT_LOG_TAIL_ENTRIES = 1_000;
        public static final long MAX_LOG_TAIL_ENTRIES = 1_000_000;

        /** With the default log tail. */
        public Timing(Duration tick, int electionTicks, int heartbeatTicks, long snapshotEvery, Duration readTimeout) {
            this(tick, electionTicks, heartbeatTicks, snapshotEvery, readTimeout, DEFAULT_LOG_TAIL_ENTRIES);
        }

        public Timing {
            Ranges.check("tick", tick, Ranges.MS, Duration.ofSeconds(10));
            if (electionTicks < 2 || electionTicks > MAX_TICKS) {
                throw new IllegalArgumentException("electionTicks is " + electionTicks + ": must be within 2.." + MAX_TICKS);
            }
            if (heartbeatTicks < 1 || heartbeatTicks >= electionTicks) {
                throw new IllegalArgumentException("heartbeatTicks is " + heartbeatTicks + ": must be within 1.."
                        + (electionTicks - 1) + " (fewer than electionTicks, " + electionTicks + ")");
            }
            if (snapshotEvery < 1 || snapshotEvery > MAX_SNAPSHOT_EVERY) {
                throw new IllegalArgumentException("snapshotEvery is " + snapshotEvery + ": must be within 1.."
                        + MAX_SNAPSHOT_EVERY);
            }
            Ranges.check("readTimeout", readTimeout, Ranges.MS, Ranges.MAX_INTERVAL);
            if (logTailEntries < 0 || logTailEntries > MAX_LOG_TAIL_ENTRIES) {
                throw new IllegalArgumentException("logTailEntries is " + logTailEntries + ": must be within 0.."
                        + MAX_LOG_TAIL_ENTRIES);
            }
        }

        /**
         * 50 ms ticks: an election timeout of 0.5–1 s, heartbeats every 100 ms (shorter timeouts made elections,
         * and so controller failovers, frequent on a loaded two-core machine); a snapshot every 10,000 entries;
         * reads wait 5 s.
         */
        public static Timing defaults() {
            return new Timing(Duration.ofMillis(50), 10, 2, 10_000, Duration.ofSeconds(5));
        }

        /** The election timeout's lower bound. */
        public Duration electionTimeout() {
            return tick.multipliedBy(electionTicks);
        }
    }

    /** The default timing. */
    public MetadataLogConfig(boolean enabled, int maxListenersPerFollower, int followerLagThreshold,
            Duration reassignmentInterval) {
        this(enabled, maxListenersPerFollower, followerLagThreshold, reassignmentInterval, Timing.defaults());
    }

    public static final int MAX_LISTENERS_PER_FOLLOWER = 1024;
    /** Entries: a follower further behind than this is catching up, not feeding anyone. */
    public static final int MAX_FOLLOWER_LAG = 1_000_000;

    public MetadataLogConfig {
        if (maxListenersPerFollower < 1 || maxListenersPerFollower > MAX_LISTENERS_PER_FOLLOWER) {
            throw new IllegalArgumentException("maxListenersPerFollower is " + maxListenersPerFollower
                    + ": must be within 1.." + MAX_LISTENERS_PER_FOLLOWER);
        }
        if (followerLagThreshold < 1 || followerLagThreshold > MAX_FOLLOWER_LAG) {
            throw new IllegalArgumentException("followerLagThreshold is " + followerLagThreshold + ": must be within 1.."
                    + MAX_FOLLOWER_LAG);
        }
        Ranges.check("reassignmentInterval", reassignmentInterval, Ranges.MS, Ranges.MAX_INTERVAL);
        if (timing == null) {
            throw new IllegalArgumentException("timing is null (expected Timing.defaults() when not set)");
        }
    }

    public static MetadataLogConfig defaults() {
        return new MetadataLogConfig(false, 5, 100, Duration.ofSeconds(30));
    }

    /** {@link #reassignmentInterval} in the members' ticks, at least one (rounded up). */
    public int reassignmentTicks() {
        long tickNanos = timing.tick().toNanos();
        return (int) Math.max(1, (reassignmentInterval.toNanos() + tickNanos - 1) / tickNanos);
    }

    /** The same log with delegation {@code on} or off. */
    public MetadataLogConfig withEnabled(boolean on) {
        return new MetadataLogConfig(on, maxListenersPerFollower, followerLagThreshold, reassignmentInterval, timing);
    }
}
