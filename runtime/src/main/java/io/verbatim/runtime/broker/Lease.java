package io.verbatim.runtime.broker;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import reactor.core.scheduler.Scheduler;

/**
 * A broker member's lease on acting for the segments it owns, renewed by each report the controller
 * leader answers. The lease runs from when the report was <em>sent</em> (this member's clock, before the
 * leader could have heard it) for the lease length less a margin for clock drift, so it always ends before
 * the leader, counting the same length from when it <em>received</em> the report, may expire the member.
 * An answer also names the ownership epoch the leader had applied: the member acts only once its own replica
 * of the metadata log has applied that far, so a member coming back (a long pause, a healed partition) never
 * acts on segments its replica still shows as its own after the leader gave them away. Pure: times are
 * passed in (a monotonic clock, in milliseconds); one thread at a time.
 */
public final class Lease {
    private final long lengthMs;
    private final long marginMs;
    private volatile long untilMs = Long.MIN_VALUE;
    private volatile long minEpoch = Long.MAX_VALUE;

    /** A lease of {@code length} with the default margin, a tenth of it and at least a second (less than half). */
    public Lease(Duration length) {
        this(length, Duration.ofMillis(Math.min(Math.max(1000, length.toMillis() / 10), length.toMillis() / 2)));
    }

    public Lease(Duration length, Duration margin) {
        if (length.isNegative() || length.isZero() || margin.isNegative() || margin.compareTo(length) >= 0) {
            throw new IllegalArgumentException("a lease of " + length + " with a margin of " + margin
                    + ": expected a positive length and a margin shorter than it");
        }
        this.lengthMs = length.toMillis();
        this.marginMs = margin.toMillis();
    }

    /**
     * The leader answered the report sent at {@code sentMs} with its applied ownership epoch: the lease runs
     * to {@code sentMs} + length − margin (never shortened by an older answer arriving late).
     */
    public void granted(long sentMs, long leaderEpoch) {
        long until = sentMs + lengthMs - marginMs;
        if (until > untilMs) {
            untilMs = until;
            minEpoch = leaderEpoch;
        }
    }

    /** Whether the lease holds at {@code nowMs}. */
    public boolean holds(long nowMs) {
        return nowMs < untilMs;
    }

    /** Whether the member may act on what its replica, applied to {@code appliedEpoch}, shows as its own. */
    public boolean mayAct(long nowMs, long appliedEpoch) {
        return holds(nowMs) && appliedEpoch >= minEpoch;
    }

    /** How long the lease still holds at {@code nowMs} (zero once it lapsed). */
    public Duration remaining(long nowMs) {
        return untilMs == Long.MIN_VALUE ? Duration.ZERO : Duration.ofMillis(Math.max(0, untilMs - nowMs));
    }

    /**
     * The clock leases are counted on, in milliseconds: a monotonic one ({@link System#nanoTime}) where
     * {@code timer} keeps the wall clock's time (a real scheduler, whose time a wall clock step would move), else
     * {@code timer}'s own (a virtual one in tests, whose time starts at 0).
     */
    public static LongSupplier clock(Scheduler timer) {
        long wall = System.currentTimeMillis();
        if (Math.abs(timer.now(TimeUnit.MILLISECONDS) - wall) < TimeUnit.DAYS.toMillis(1)) {
            return () -> TimeUnit.NANOSECONDS.toMillis(System.nanoTime());
        }
        return () -> timer.now(TimeUnit.MILLISECONDS);
    }

    /** The epoch the member's replica must have applied before it acts (of the latest grant). */
    public long minEpoch() {
        return minEpoch;
    }
}
