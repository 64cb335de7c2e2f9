package io.verbatim.model;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * A segment's {@code N} entry buckets (PIP-486): equal-width over the whole {@code hashB} ring,
 * independent of the segment's routing range, so the same {@code N} gives the same boundaries on
 * every segment and every cluster. Bucket {@code i} starts at {@code floor(i * 65536 / N)}.
 *
 * <p>{@code N} is always a power of two (SPEC A2), so the boundaries of any two counts nest. Where Pulsar
 * computes a count that need not be one (the initial {@code budget / segments}, a merge's {@code N1 + N2})
 * the count is rounded down to a power of two.
 *
 * @param count {@code N}, a power of two from 1 to {@link #MAX_COUNT}
 */
public record Buckets(int count) {
    /** Pulsar's dispatcher needs bucket 0 to cover at least {@code [0, 1]}. */
    public static final int MAX_COUNT = 32768;
    public static final Buckets ONE = new Buckets(1);
    private static final long RING = 65536L;

    public Buckets {
        if (count < 1 || count > MAX_COUNT) {
            throw new IllegalArgumentException("bucket count " + count + " is outside 1.." + MAX_COUNT);
        }
        if (Integer.bitCount(count) != 1) {
            throw new IllegalArgumentException("bucket count " + count + " is not a power of two");
        }
    }

    /** True when {@code count} can be a segment's bucket count: a power of two from 1 to {@link #MAX_COUNT}. */
    public static boolean isValidCount(int count) {
        return count >= 1 && count <= MAX_COUNT && Integer.bitCount(count) == 1;
    }

    /** The largest valid count not above {@code limit} (at least 1): how a cap on {@code N} is applied. */
    public static int floorCount(int limit) {
        return limit <= 1 ? 1 : Integer.highestOneBit(Math.min(limit, MAX_COUNT));
    }

    public static Buckets of(int count) {
        return new Buckets(count);
    }

    /** Pulsar's budget share {@code max(1, floor(budget / segments))}, rounded down to a power of two. */
    public static Buckets forBudget(int budget, int segments) {
        return new Buckets(floorCount(budget / segments));
    }

    /** The buckets of each child of a split: {@code max(1, N / 2)}. */
    public Buckets forSplitChild() {
        return new Buckets(Math.max(1, count / 2));
    }

    /** The buckets of a merge: Pulsar's {@code N1 + N2}, rounded down to a power of two. */
    public Buckets mergedWith(Buckets other) {
        return new Buckets(floorCount(count + other.count));
    }

    /** The first {@code hashB} of bucket {@code i}. */
    public int start(int i) {
        checkIndex(i);
        return (int) (i * RING / count);
    }

    /** The last {@code hashB} of bucket {@code i}. */
    public int end(int i) {
        checkIndex(i);
        return i == count - 1 ? HashRange.MAX_HASH : start(i + 1) - 1;
    }

    public HashRange range(int i) {
        return new HashRange(start(i), end(i));
    }

    /** The bucket holding {@code hashB}: the number of bucket starts after 0 that are {@code <= hashB}. */
    public int bucketOf(int hashB) {
        if (hashB < 0 || hashB > HashRange.MAX_HASH) {
            throw new IllegalArgumentException("hashB " + hashB + " is outside the ring 0..65535");
        }
        // floor((h * N) / 65536) can be one below the answer when the start is rounded down; fix up.
        int i = (int) ((hashB * (long) count) / RING);
        while (i + 1 < count && start(i + 1) <= hashB) {
            i++;
        }
        return i;
    }

    /** True when every {@code hashB} in {@code range} falls into one bucket. */
    public boolean holdsInOneBucket(HashRange range) {
        return bucketOf(range.start()) == bucketOf(range.end());
    }

    /** Pulsar's {@code entryBucketSplits}: the starts of buckets {@code 1..N-1}. */
    public List<Integer> splits() {
        List<Integer> splits = new ArrayList<>(count - 1);
        for (int i = 1; i < count; i++) {
            splits.add(start(i));
        }
        return Collections.unmodifiableList(splits);
    }

    private void checkIndex(int i) {
        if (i < 0 || i >= count) {
            throw new IndexOutOfBoundsException("bucket " + i + " of " + count);
        }
    }
}
