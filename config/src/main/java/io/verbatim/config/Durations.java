package io.verbatim.config;

import java.time.Duration;

/** Durations as the configuration writes them, for command lines that take the same notation. */
public final class Durations {
    private Durations() {
    }

    /**
     * Parses {@code 250ms}, {@code 30s}, {@code 5m}, {@code 1h}, {@code 0} or ISO-8601 ({@code PT30S}).
     *
     * @param name what the value is (an option or a key), named in the error
     * @throws ConfigException naming {@code name}, the value and the notation expected
     */
    public static Duration parse(String name, String text) {
        Duration d = text == null ? null : Section.parseDuration(text);
        if (d == null || d.isNegative()) {
            throw new ConfigException(name, "'" + text + "' is not a duration (expected a number with a unit: 250ms,"
                    + " 30s, 5m, 1h, or 0)");
        }
        return d;
    }
}
