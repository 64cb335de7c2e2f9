package io.verbatim.model;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * The acknowledged entries of one origin segment for one subscription, by origin ordinal (an entry's index in its
 * origin segment: 0, 1, 2, … without gaps): every ordinal up to {@link #through()}, and ranges above it (individual
 * acknowledgements out of order). Grow-only: acknowledging and {@link #union uniting} only add, so sets synced
 * between clusters commute, and a sync dropped, repeated or reordered loses freshness, never correctness
 * (issue 26's design, {@code docs/design/replicated-subscriptions.md}).
 *
 * <p>Mutable and not thread-safe: its owner guards it. {@link #copy()} for a snapshot.
 */
public final class AckSet {
    /** Nothing acknowledged. */
    public static final long NONE = -1;

    private long through = NONE;
    /** Disjoint ranges above {@code through + 1}, none adjacent to another: start → end, inclusive. */
    private final TreeMap<Long, Long> above = new TreeMap<>();

    /** An empty set. */
    public AckSet() {
    }

    /** A set acknowledged through {@code through} with the ranges {@code ranges} ({@code [start, end]} pairs). */
    public static AckSet of(long through, List<long[]> ranges) {
        AckSet set = new AckSet();
        set.acknowledgeThrough(through);
        for (long[] r : ranges) {
            if (r.length != 2) {
                throw new IllegalArgumentException("a range is [start, end], got " + r.length + " numbers");
            }
            set.acknowledge(r[0], r[1]);
        }
        return set;
    }

    /** Every ordinal up to this one is acknowledged ({@link #NONE}: not even ordinal 0). */
    public long through() {
        return through;
    }

    /** The ranges above {@link #through()}, lowest first, as {@code [start, end]} pairs. */
    public List<long[]> ranges() {
        List<long[]> out = new ArrayList<>(above.size());
        for (Map.Entry<Long, Long> e : above.entrySet()) {
            out.add(new long[] {e.getKey(), e.getValue()});
        }
        return out;
    }

    /** The number of ranges above {@link #through()}. */
    public int rangeCount() {
        return above.size();
    }

    /** Whether {@code ordinal} is acknowledged. */
    public boolean contains(long ordinal) {
        if (ordinal <= through) {
            return true;
        }
        Map.Entry<Long, Long> floor = above.floorEntry(ordinal);
        return floor != null && floor.getValue() >= ordinal;
    }

    /** Acknowledges {@code ordinal}. */
    public AckSet acknowledge(long ordinal) {
        return acknowledge(ordinal, ordinal);
    }

    /** Acknowledges every ordinal up to {@code ordinal}. */
    public AckSet acknowledgeThrough(long ordinal) {
        if (ordinal < NONE) {
            throw new IllegalArgumentException("ordinal " + ordinal + " is below " + NONE);
        }
        return ordinal <= through ? this : acknowledge(0, ordinal);
    }

    /** Acknowledges the ordinals {@code start..end}. */
    public AckSet acknowledge(long start, long end) {
        if (start < 0 || end < start) {
            throw new IllegalArgumentException("ordinals " + start + ".." + end + " are not a range of ordinals ≥ 0");
        }
        if (end <= through) {
            return this;
        }
        long lo = Math.max(start, through + 1);
        long hi = end;
        // merge with every range it touches or is adjacent to
        Map.Entry<Long, Long> before = above.floorEntry(lo);
        if (before != null && before.getValue() >= lo - 1) {
            lo = before.getKey();
            hi = Math.max(hi, before.getValue());
            above.remove(before.getKey());
        }
        for (Map.Entry<Long, Long> next = above.ceilingEntry(lo); next != null && next.getKey() <= hi + 1;
                next = above.ceilingEntry(lo)) {
            hi = Math.max(hi, next.getValue());
            above.remove(next.getKey());
        }
        if (lo <= through + 1) {
            through = hi;
        } else {
            above.put(lo, hi);
        }
        return this;
    }

    /** Adds everything {@code other} holds. */
    public AckSet union(AckSet other) {
        acknowledgeThrough(other.through);
        for (Map.Entry<Long, Long> e : other.above.entrySet()) {
            acknowledge(e.getKey(), e.getValue());
        }
        return this;
    }

    /**
     * This set with at most {@code maxRanges} ranges above {@link #through()}: the highest go. What is left claims
     * less than was acknowledged, never more, so a peer applying it delivers again what it lacks, and skips nothing
     * that was not acknowledged.
     */
    public AckSet bounded(int maxRanges) {
        if (maxRanges < 0) {
            throw new IllegalArgumentException("maxRanges " + maxRanges + " is negative");
        }
        AckSet out = new AckSet();
        out.through = through;
        for (Map.Entry<Long, Long> e : above.entrySet()) {
            if (out.above.size() == maxRanges) {
                break;
            }
            out.above.put(e.getKey(), e.getValue());
        }
        return out;
    }

    /** How many ordinals up to {@code upTo} this set holds and {@code other} does not (a sync's lag, in entries). */
    public long missingFrom(AckSet other, long upTo) {
        List<long[]> mine = ranges(upTo);
        List<long[]> theirs = other.ranges(upTo);
        long total = 0;
        for (long[] r : mine) {
            total += r[1] - r[0] + 1;
        }
        long common = 0;
        for (int i = 0, j = 0; i < mine.size() && j < theirs.size(); ) {
            long[] a = mine.get(i);
            long[] b = theirs.get(j);
            long lo = Math.max(a[0], b[0]);
            long hi = Math.min(a[1], b[1]);
            common += lo <= hi ? hi - lo + 1 : 0;
            if (a[1] < b[1]) {
                i++;
            } else {
                j++;
            }
        }
        return total - common;
    }

    /** The acknowledged ranges up to {@code upTo}, {@code through} as the first ({@code [0, through]}). */
    private List<long[]> ranges(long upTo) {
        List<long[]> out = new ArrayList<>();
        if (through >= 0) {
            out.add(new long[] {0, Math.min(through, upTo)});
        }
        for (Map.Entry<Long, Long> e : above.entrySet()) {
            if (e.getKey() > upTo) {
                break;
            }
            out.add(new long[] {e.getKey(), Math.min(e.getValue(), upTo)});
        }
        return out;
    }

    /** An independent copy. */
    public AckSet copy() {
        AckSet out = new AckSet();
        out.through = through;
        out.above.putAll(above);
        return out;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof AckSet other && through == other.through && above.equals(other.above);
    }

    @Override
    public int hashCode() {
        return Objects.hash(through, above);
    }

    @Override
    public String toString() {
        StringBuilder out = new StringBuilder("AckSet[through ").append(through);
        above.forEach((s, e) -> out.append(", ").append(s).append("..").append(e));
        return out.append(']').toString();
    }
}
