package io.verbatim.runtime.broker;

import io.verbatim.config.AutoScaleConfig;
import io.verbatim.config.AutoScaleConfig.Rates;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * Per segment of one topic: messages and bytes produced and dispatched, turned into rates at each
 * {@link #sample} (what PIP-483's load reporter writes), with how long each segment has been cold.
 */
public final class LoadTracker {
    private record Counts(LongAdder msgIn, LongAdder bytesIn, LongAdder msgOut, LongAdder bytesOut) {
        Counts() {
            this(new LongAdder(), new LongAdder(), new LongAdder(), new LongAdder());
        }
    }

    private final Map<Long, Counts> counts = new ConcurrentHashMap<>();
    private final Map<Long, Long> coldSince = new HashMap<>();
    private long lastSampleMs = -1;

    public void produced(long segmentId, long messages, long bytes) {
        Counts c = counts.computeIfAbsent(segmentId, id -> new Counts());
        c.msgIn.add(messages);
        c.bytesIn.add(bytes);
    }

    void dispatched(long segmentId, long messages, long bytes) {
        Counts c = counts.computeIfAbsent(segmentId, id -> new Counts());
        c.msgOut.add(messages);
        c.bytesOut.add(bytes);
    }

    /**
     * What was counted per segment since the last drain, {@code [msgIn, bytesIn, msgOut, bytesOut]}, and resets
     * it: what a brokers' process reports to its controller leader (see {@link #add} to put a report back).
     */
    public Map<Long, long[]> drain() {
        Map<Long, long[]> out = new HashMap<>();
        counts.forEach((id, c) -> {
            long[] v = {c.msgIn.sumThenReset(), c.bytesIn.sumThenReset(), c.msgOut.sumThenReset(), c.bytesOut.sumThenReset()};
            if (v[0] != 0 || v[1] != 0 || v[2] != 0 || v[3] != 0) {
                out.put(id, v);
            }
        });
        return out;
    }

    /** Counts what {@link #drain} returned (on the controller leader, or back where a report was not taken). */
    public void add(Map<Long, long[]> drained) {
        drained.forEach((id, v) -> {
            produced(id, v[0], v[1]);
            dispatched(id, v[2], v[3]);
        });
    }

    /** The rates since the previous sample, per segment seen; the first sample only starts the clock. */
    public synchronized Map<Long, LoadSample> sample(Iterable<Long> activeSegments, AutoScaleConfig config,
            long nowMs) {
        double seconds = lastSampleMs < 0 ? 0 : Math.max(1, nowMs - lastSampleMs) / 1000.0;
        lastSampleMs = nowMs;
        Map<Long, LoadSample> out = new HashMap<>();
        for (long id : activeSegments) {
            Counts c = counts.computeIfAbsent(id, k -> new Counts());
            Rates r = seconds == 0 ? new Rates(0, 0, 0, 0)
                    : new Rates(c.msgIn.sumThenReset() / seconds, c.bytesIn.sumThenReset() / seconds,
                            c.msgOut.sumThenReset() / seconds, c.bytesOut.sumThenReset() / seconds);
            if (r.below(config.merge())) {
                coldSince.putIfAbsent(id, nowMs);
            } else {
                coldSince.remove(id);
            }
            out.put(id, new LoadSample(r, coldSince.getOrDefault(id, -1L)));
        }
        return out;
    }
}
