package io.verbatim.net;

import java.util.EnumMap;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * At most one log line per refusal kind and interval: the first refusal of a kind is told at once, those that
 * follow within the interval are counted, and the next one after it is told with their count. Pure: time
 * is passed in; the caller logs what it answers.
 */
final class RefusalLog {
    private final long intervalNanos;
    private final Map<Refusal, Kind> kinds = new EnumMap<>(Refusal.class);

    /** Per kind: when its last line was told, and how many refusals since. */
    private static final class Kind {
        long toldAt;
        long since;
    }

    RefusalLog(long intervalNanos) {
        this.intervalNanos = intervalNanos;
    }

    /**
     * One more refusal of {@code kind} at {@code nowNanos}: the line's count (this one and those not told
     * since the last line), or 0 when it is to be counted silently.
     */
    synchronized long note(Refusal kind, long nowNanos) {
        Kind k = kinds.get(kind);
        if (k == null) {
            k = new Kind();
            kinds.put(kind, k);
        } else if (nowNanos - k.toldAt < intervalNanos) {
            k.since++;
            return 0;
        }
        long count = k.since + 1;
        k.toldAt = nowNanos;
        k.since = 0;
        return count;
    }

    /** The line for {@code count} refusals of {@code kind} on {@code port}, the last from {@code address}. */
    static String line(String port, Refusal kind, long count, @Nullable String address, NetworkLimits limits,
            long intervalSeconds) {
        String from = address == null ? "" : count == 1 ? "from " + address + " " : "(the last from " + address + ") ";
        return port + ": " + (count == 1 ? "a connection " : count + " connections since the last such line ")
                + from + kind.describe(limits) + "; at most one such line "
                + "every " + intervalSeconds + " s (verbatim.net.connections.refused{reason=" + kind.tag()
                + "} counts them all)";
    }
}
