package io.verbatim.examples;

import java.util.BitSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What each origin's produce calls asked for and what came of it: messages {@code origin/counter}, counters
 * from 0 per origin, each handed out once. A call answered 200 is <em>acknowledged</em>: every message of it
 * must be on every cluster. A call that failed or timed out is <em>unknown</em>: its messages may or may not
 * be stored, and are never required. A counter never handed out was never sent.
 */
final class ProduceLedger {
    private final Map<String, Origin> origins = new LinkedHashMap<>();

    private static final class Origin {
        int next;
        final BitSet acknowledged = new BitSet();
        final BitSet unknown = new BitSet();
    }

    ProduceLedger(List<String> origins) {
        origins.forEach(o -> this.origins.put(o, new Origin()));
    }

    /** Hands out {@code n} counters of {@code origin} for one call: the first of them. */
    synchronized int reserve(String origin, int n) {
        Origin o = origin(origin);
        int first = o.next;
        o.next += n;
        return first;
    }

    synchronized void acknowledged(String origin, int first, int n) {
        origin(origin).acknowledged.set(first, first + n);
    }

    synchronized void unknown(String origin, int first, int n) {
        origin(origin).unknown.set(first, first + n);
    }

    /** A copy of {@code origin}'s acknowledged counters. */
    synchronized BitSet acknowledged(String origin) {
        return (BitSet) origin(origin).acknowledged.clone();
    }

    /** A copy of the counters {@code origin}'s calls sent (acknowledged or unknown). */
    synchronized BitSet sent(String origin) {
        BitSet out = (BitSet) origin(origin).acknowledged.clone();
        out.or(origin(origin).unknown);
        return out;
    }

    synchronized long acknowledgedCount() {
        return origins.values().stream().mapToLong(o -> o.acknowledged.cardinality()).sum();
    }

    synchronized long unknownCount() {
        return origins.values().stream().mapToLong(o -> o.unknown.cardinality()).sum();
    }

    /** Every origin's acknowledged and sent counters, as the checker takes them. */
    synchronized Map<String, FaultChecker.Produced> produced() {
        Map<String, FaultChecker.Produced> out = new LinkedHashMap<>();
        origins.keySet().forEach(o -> out.put(o, new FaultChecker.Produced(acknowledged(o), sent(o))));
        return out;
    }

    private Origin origin(String name) {
        Origin o = origins.get(name);
        if (o == null) {
            throw new IllegalArgumentException("origin '" + name + "' is not one of " + origins.keySet());
        }
        return o;
    }
}
