package io.verbatim.model;

import java.time.Duration;
import java.util.random.RandomGenerator;

/**
 * Exponential backoff with jitter, the one retry schedule of Verbatim (the replicator's rewinds, the
 * exchange's pushes, the supervision of failed replicators). Pure: the random draw is passed in, so a
 * seeded generator makes a whole simulation repeatable.
 *
 * <p>Attempt {@code n} (from 1) waits {@code initial · 2^(n-1)}, capped at {@code max}, then spread by
 * {@code ± jitter} of itself, and never less than {@code initial} nor more than {@code max}.
 *
 * @param initial the first delay
 * @param max the largest delay
 * @param jitter the spread, {@code 0..1} of the delay (0: none)
 */
public record Backoff(Duration initial, Duration max, double jitter) {
    /** The longest delay: an hour between attempts is already giving up in all but name. */
    public static final Duration MAX_DELAY = Duration.ofHours(1);

    public Backoff {
        if (initial == null || initial.isZero() || initial.isNegative()) {
            throw new IllegalArgumentException("initial " + initial + " must be a positive duration");
        }
        if (max == null || max.compareTo(initial) < 0) {
            throw new IllegalArgumentException("max " + max + " is below initial " + initial);
        }
        if (max.compareTo(MAX_DELAY) > 0) {
            throw new IllegalArgumentException("max " + max + " is above " + MAX_DELAY + ", the longest delay");
        }
        if (!(jitter >= 0 && jitter <= 1)) {
            throw new IllegalArgumentException("jitter " + jitter + " is outside 0..1");
        }
    }

    /** The delay before attempt {@code attempt} (1 for the first retry). */
    public Duration delay(long attempt, RandomGenerator random) {
        if (attempt < 1) {
            throw new IllegalArgumentException("attempt " + attempt + " is below 1");
        }
        long min = initial.toNanos();
        long cap = max.toNanos();
        int doublings = (int) Math.min(attempt - 1, 62);
        long nanos = doublings >= Long.numberOfLeadingZeros(min) - 1 ? cap : Math.min(cap, min << doublings);
        if (jitter > 0) {
            nanos += (long) ((random.nextDouble() * 2 - 1) * jitter * nanos);
        }
        return Duration.ofNanos(Math.max(min, Math.min(cap, nanos)));
    }
}
