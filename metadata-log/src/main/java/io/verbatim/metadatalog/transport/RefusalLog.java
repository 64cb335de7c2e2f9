package io.verbatim.metadatalog.transport;

import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.OptionalLong;

/**
 * How often a server logs the connections it refuses: at most one line per source address per interval,
 * that line counting the refusals from the address it did not log. Every refusal is counted in the metrics
 * regardless. At most {@code maxSources} addresses are tracked; past them, the rest share one allowance.
 * Time is passed in. Thread-safe (the event loops of one port share it).
 */
final class RefusalLog {
    /** The allowance the addresses beyond {@code maxSources} share. */
    static final String OTHERS = "other addresses";
    private final long intervalNanos;
    private final int maxSources;
    private final Map<String, Window> sources = new LinkedHashMap<>();
    private long lines;

    private static final class Window {
        long startNanos;
        long suppressed;
    }

    RefusalLog(long intervalNanos, int maxSources) {
        if (intervalNanos < 0 || maxSources < 1) {
            throw new IllegalArgumentException("intervalNanos " + intervalNanos + " and maxSources " + maxSources
                    + " must be at least 0 and 1");
        }
        this.intervalNanos = intervalNanos;
        this.maxSources = maxSources;
    }

    /**
     * A refusal from {@code source} at {@code nowNanos}: the number of refusals from it not logged since its
     * last line, if this one is to be logged; empty if not (it is counted toward the next line).
     */
    synchronized OptionalLong admit(String source, long nowNanos) {
        Window w = sources.get(source);
        if (w == null) {
            expire(nowNanos);
            String key = sources.size() < maxSources ? source : OTHERS;
            w = sources.get(key);
            if (w == null) {
                w = new Window();
                w.startNanos = nowNanos;
                sources.put(key, w);
                lines++;
                return OptionalLong.of(0);
            }
        }
        if (nowNanos - w.startNanos < intervalNanos) {
            w.suppressed++;
            return OptionalLong.empty();
        }
        long suppressed = w.suppressed;
        w.startNanos = nowNanos;
        w.suppressed = 0;
        lines++;
        return OptionalLong.of(suppressed);
    }

    /**
     * Drops the addresses whose interval is over and that have nothing left to report, and those quiet for ten
     * intervals (what they did not report stays in the metrics).
     */
    private void expire(long nowNanos) {
        for (Iterator<Window> it = sources.values().iterator(); it.hasNext(); ) {
            Window w = it.next();
            long age = nowNanos - w.startNanos;
            if (age >= intervalNanos && (w.suppressed == 0 || age / 10 >= intervalNanos)) {
                it.remove();
            }
        }
    }

    /** The lines admitted so far. */
    synchronized long lines() {
        return lines;
    }
}
