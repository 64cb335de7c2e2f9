package io.verbatim.exchange;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/** Plain counters of the exchange; {@link ExchangeMetricsBinder} shows them to Micrometer. */
public final class ExchangeMetrics {
    final Map<String, LongAdder> successes = new ConcurrentHashMap<>();
    final Map<String, LongAdder> failures = new ConcurrentHashMap<>();
    final LongAdder ignored = new LongAdder();
    /** The last measured lag from a peer change arriving to this cluster refining it, in nanoseconds. */
    final AtomicLong convergenceLagNanos = new AtomicLong();

    void success(String peer) {
        successes.computeIfAbsent(peer, p -> new LongAdder()).increment();
    }

    void failure(String peer) {
        failures.computeIfAbsent(peer, p -> new LongAdder()).increment();
    }

    public long successes(String peer) {
        LongAdder a = successes.get(peer);
        return a == null ? 0 : a.sum();
    }

    public long failures(String peer) {
        LongAdder a = failures.get(peer);
        return a == null ? 0 : a.sum();
    }

    public long ignoredCalls() {
        return ignored.sum();
    }

    public long convergenceLagNanos() {
        return convergenceLagNanos.get();
    }
}
