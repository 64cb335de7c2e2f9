package io.verbatim.config;

import java.time.Duration;

/**
 * The duration ranges the loader and the records of this package share (the other modules' records hold their
 * own): what a real deployment never leaves, and nothing downstream (nanoseconds in a {@code long}, Reactor
 * timers, doubling backoff) overflows within.
 */
final class Ranges {
    static final Duration MS = Duration.ofMillis(1);
    static final Duration TEN_MS = Duration.ofMillis(10);
    /** An interval, a cooldown, a window: a day. */
    static final Duration MAX_INTERVAL = Duration.ofDays(1);
    /** A simulated round trip: a real one is under a second. */
    static final Duration MAX_RTT = Duration.ofMinutes(1);

    private Ranges() {
    }

    /** Refuses a {@code d} outside {@code [min, max]}, naming {@code name} and both bounds. */
    static void check(String name, Duration d, Duration min, Duration max) {
        if (d == null || d.compareTo(min) < 0 || d.compareTo(max) > 0) {
            throw new IllegalArgumentException(name + " is " + (d == null ? "null" : Section.pretty(d))
                    + ": must be within " + Section.pretty(min) + ".." + Section.pretty(max));
        }
    }
}
