package io.verbatim.config;

import java.time.Duration;

/** Durations as the configuration writes them, for command lines that take the same notation. */
public final class Durations {
    private Durations() {
    }

    /**
     * Parses {@code 250ms}, {@code 30s}, {@code 5m}, {@code 1h}, {@code 0} or ISO-8601 ({@code PT30S}), exactly:
     * a duration whose nanoseconds do not fit a {@code long} (longer than 106751 days) is refused, never
     * saturated, so {@link Duration#toNanos()} of the result never overflows.
     *
     * @param name what the value is (an option or a key), named in the error
     * @throws ConfigException naming {@code name}, the value and the notation expected
     */
    public static Duration parse(String name, String text) {
        String shown = text == null ? "null" : Section.quoted(text);
        Duration d = text == null ? null : Section.parseDuration(name, shown, text,
                "at most " + Section.pretty(Section.MAX_DURATION) + ": durations are counted in nanoseconds");
        if (d == null || d.isNegative()) {
            throw new ConfigException(name, shown + " is not a duration (expected a number with a unit: 250ms, 30s,"
                    + " 5m, 1h, or 0)");
        }
        return d;
    }
}
