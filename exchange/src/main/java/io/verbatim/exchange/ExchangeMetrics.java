package io.verbatim.exchange;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/** Plain counters of the exchange; {@link ExchangeMetricsBinder} shows them to Micrometer. */
final class ExchangeMetrics {
    final Map<String, LongAdder> successes = new ConcurrentHashMap<>();
    final Map<String, LongAdder> failures = new ConcurrentHashMap<>();
    final Map<String, String> lastFailures = new ConcurrentHashMap<>();
    final LongAdder ignored = new LongAdder();
    /** Topic states from peers that were unusable (each named in the answer). */
    final LongAdder invalidStates = new LongAdder();
    /** Topic states of ours a peer found unusable. */
    final LongAdder refusedByPeer = new LongAdder();
    /** Topic states whose fold failed here. */
    final LongAdder foldFailures = new LongAdder();
    /** Topic states too large for a peer's body limit even alone. */
    final LongAdder oversizedStates = new LongAdder();
    /** The last measured lag from a peer change arriving to this cluster refining it, in nanoseconds. */
    final AtomicLong convergenceLagNanos = new AtomicLong();

    void success(String peer) {
        successes.computeIfAbsent(peer, p -> new LongAdder()).increment();
        lastFailures.remove(peer);
    }

    void failure(String peer, String why) {
        failures.computeIfAbsent(peer, p -> new LongAdder()).increment();
        lastFailures.put(peer, why);
    }

    long successes(String peer) {
        LongAdder a = successes.get(peer);
        return a == null ? 0 : a.sum();
    }

    long failures(String peer) {
        LongAdder a = failures.get(peer);
        return a == null ? 0 : a.sum();
    }

    /** Why the last call to {@code peer} failed, or an empty string. */
    String lastFailure(String peer) {
        return lastFailures.getOrDefault(peer, "");
    }

    long ignoredCalls() {
        return ignored.sum();
    }

    long invalidStates() {
        return invalidStates.sum();
    }

    long refusedByPeer() {
        return refusedByPeer.sum();
    }

    long foldFailures() {
        return foldFailures.sum();
    }

    long oversizedStates() {
        return oversizedStates.sum();
    }

    long convergenceLagNanos() {
        return convergenceLagNanos.get();
    }
}
