package io.verbatim.exchange;

import io.verbatim.model.HashRange;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * What a cluster offers to coarsen (PIP-495: merges and bucket-count lowering happen only once every
 * cluster agrees): boundaries it would merge, and ranges whose bucket count it would lower.
 *
 * @param boundaries first hashes of the upper side of boundaries it would remove
 * @param buckets a range (one of its cells) and the count it would lower that range to
 */
record ColdMarks(Set<Integer> boundaries, Map<HashRange, Integer> buckets) {
    static final ColdMarks NONE = new ColdMarks(Set.of(), Map.of());

    ColdMarks {
        // Sorted, so that whatever iterates them does so in the same order in every run (Set.copyOf's
        // order changes from one JVM to the next, which would make a seeded simulation unrepeatable).
        boundaries = Collections.unmodifiableSortedSet(new TreeSet<>(boundaries));
        buckets = Collections.unmodifiableSortedMap(new TreeMap<>(buckets));
    }

    static ColdMarks ofBoundaries(Set<Integer> boundaries) {
        return new ColdMarks(boundaries, Map.of());
    }

    /** Both sets of marks; where both lower one range, the smaller reduction (the larger count) stands. */
    ColdMarks union(ColdMarks other) {
        if (other.isEmpty()) {
            return this;
        }
        if (isEmpty()) {
            return other;
        }
        Set<Integer> b = new HashSet<>(boundaries);
        b.addAll(other.boundaries);
        Map<HashRange, Integer> n = new HashMap<>(buckets);
        other.buckets.forEach((range, count) -> n.merge(range, count, Math::max));
        return new ColdMarks(b, n);
    }

    boolean isEmpty() {
        return boundaries.isEmpty() && buckets.isEmpty();
    }
}
