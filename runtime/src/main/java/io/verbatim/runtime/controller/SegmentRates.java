package io.verbatim.runtime.controller;

import io.verbatim.metadatalog.state.SegmentKey;
import java.util.HashMap;
import java.util.Map;

/**
 * Bytes per second per segment over the last window or two (10 s each), from the bytes the broker members
 * report: what segments' ownership balances (PIP-483's bytes rate). Thread-safe.
 */
final class SegmentRates {
    static final long WINDOW_MS = 10_000;

    private Map<SegmentKey, Long> current = new HashMap<>();
    private Map<SegmentKey, Long> previous = new HashMap<>();
    private long currentSince = Long.MIN_VALUE;

    synchronized void add(SegmentKey segment, long bytes, long nowMs) {
        roll(nowMs);
        current.merge(segment, bytes, Long::sum);
    }

    /** Per segment, the bytes of the previous and the current window over the time they span. */
    synchronized Map<SegmentKey, Long> perSecond(long nowMs) {
        roll(nowMs);
        long spanMs = Math.max(1_000, nowMs - currentSince + (previous.isEmpty() ? 0 : WINDOW_MS));
        Map<SegmentKey, Long> out = new HashMap<>();
        previous.forEach((k, v) -> out.merge(k, v, Long::sum));
        current.forEach((k, v) -> out.merge(k, v, Long::sum));
        out.replaceAll((k, v) -> v * 1000 / spanMs);
        return out;
    }

    private void roll(long nowMs) {
        if (currentSince == Long.MIN_VALUE) {
            currentSince = nowMs;
        }
        if (nowMs - currentSince >= 2 * WINDOW_MS) {
            previous = new HashMap<>();
            current = new HashMap<>();
            currentSince = nowMs;
        } else if (nowMs - currentSince >= WINDOW_MS) {
            previous = current;
            current = new HashMap<>();
            currentSince += WINDOW_MS;
        }
    }

    synchronized void clear() {
        current = new HashMap<>();
        previous = new HashMap<>();
        currentSince = Long.MIN_VALUE;
    }
}
