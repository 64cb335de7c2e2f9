package io.verbatim.model;

/**
 * A change to a layout. Every mutation seals its predecessors, creates successors with fresh ids and
 * advances the epoch by one; {@link Layout#apply} runs it as a compare-and-set on the epoch.
 */
public sealed interface Mutation {

    /** Split at the midpoint: Pulsar's ordinary split. */
    static Mutation split(long segmentId) {
        return new Split(segmentId);
    }

    /** Split so that the upper child starts at {@code boundary} (PIP-495's explicit-boundary split). */
    static Mutation splitAt(long segmentId, int boundary) {
        return new SplitAt(segmentId, boundary);
    }

    /** Merge two adjacent active segments, any two; buckets {@code N1 + N2} (Pulsar), rounded down to a power of two. */
    static Mutation merge(long first, long second) {
        return new Merge(first, second, false);
    }

    /**
     * Merge two adjacent active segments only if they are the two halves of one earlier split (the rule
     * for replicated topics); buckets {@code N1 + N2} rounded down to a power of two, as {@link #merge}.
     */
    static Mutation mergeSiblings(long first, long second) {
        return new Merge(first, second, true);
    }

    /** Roll a segment over to a successor with the same range and {@code bucketCount} buckets. */
    static Mutation rebucket(long segmentId, int bucketCount) {
        return new Rebucket(segmentId, bucketCount);
    }

    /**
     * Remove a sealed segment from the DAG (garbage collection, as Pulsar's {@code pruneSegment}): it
     * disappears from its neighbours' parent and child lists; the epoch advances.
     */
    static Mutation prune(long segmentId) {
        return new Prune(segmentId);
    }

    record Prune(long segmentId) implements Mutation {
    }

    record Split(long segmentId) implements Mutation {
    }

    /** @param boundary the first hash of the upper child, {@code start < boundary <= end} */
    record SplitAt(long segmentId, int boundary) implements Mutation {
    }

    /** @param siblingsOnly refuse unless the two are the halves of one split (replicated topics) */
    record Merge(long first, long second, boolean siblingsOnly) implements Mutation {
    }

    record Rebucket(long segmentId, int bucketCount) implements Mutation {
    }
}
