package io.verbatim.exchange;

import java.util.Collections;
import java.util.Map;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * One topic's cold marks on this cluster by source, as the admin API's {@code GET …/coldmarks} answer and
 * the status show them: boundaries as four hex digits ({@code 8000}), ranges as {@code SSSS-EEEE}.
 *
 * @param manual boundaries an operator marked (a manual merge), until withdrawn or settled
 * @param policy boundaries the local policy marked at its latest evaluation
 * @param caps boundaries the caps make this cluster offer to merge
 * @param bucketLowerings a range and the count it is to be lowered to (an operator's or the caps'; where
 *        both lower one range, the larger count)
 */
public record MarksBySource(Set<String> manual, Set<String> policy, Set<String> caps,
        Map<String, Integer> bucketLowerings) {
    public static final MarksBySource NONE = new MarksBySource(Set.of(), Set.of(), Set.of(), Map.of());

    public MarksBySource {
        manual = sorted(manual);
        policy = sorted(policy);
        caps = sorted(caps);
        bucketLowerings = Collections.unmodifiableSortedMap(new TreeMap<>(bucketLowerings));
    }

    private static SortedSet<String> sorted(Set<String> values) {
        return Collections.unmodifiableSortedSet(new TreeSet<>(values));
    }
}
