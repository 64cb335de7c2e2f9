package io.verbatim.model;

import java.util.Optional;


/**
 * An inclusive range {@code [start, end]} of one 16-bit hash ring ({@code 0..0xFFFF}), as Pulsar's
 * {@code HashRange}. Ordered by start, then end.
 */
public record HashRange(int start, int end) implements Comparable<HashRange> {
    public static final int MIN_HASH = 0;
    public static final int MAX_HASH = 0xFFFF;
    /** The whole ring. */
    public static final HashRange FULL = new HashRange(MIN_HASH, MAX_HASH);

    public HashRange {
        if (start < MIN_HASH || start > MAX_HASH) {
            throw new IllegalArgumentException("hash range start " + start + " is outside the ring 0..65535");
        }
        if (end < MIN_HASH || end > MAX_HASH) {
            throw new IllegalArgumentException("hash range end " + end + " is outside the ring 0..65535");
        }
        if (end < start) {
            throw new IllegalArgumentException("hash range end " + end + " is below its start " + start);
        }
    }

    public static HashRange of(int start, int end) {
        return new HashRange(start, end);
    }

    public boolean contains(int hash) {
        return hash >= start && hash <= end;
    }

    /** True when {@code other} lies wholly inside this range: PIP-495's segment-fit test. */
    public boolean contains(HashRange other) {
        return start <= other.start && end >= other.end;
    }

    public boolean overlaps(HashRange other) {
        return start <= other.end && other.start <= end;
    }

    /** True when the two ranges touch end to start, in either order. */
    public boolean isAdjacentTo(HashRange other) {
        return end + 1 == other.start || other.end + 1 == start;
    }

    public int size() {
        return end - start + 1;
    }

    /** Pulsar's midpoint: {@code start + (end - start) / 2}, the last hash of the lower half. */
    public int midpoint() {
        return start + (end - start) / 2;
    }

    /**
     * How many halvings of the ring this range is as small as: the least {@code d} with
     * {@code size · 2^d >= 65536}. The depth in the midpoint-split tree for the tree's own ranges (the
     * ring 0, its halves 1, ...), and a monotone extension of it for any other range: a range inside
     * another is never shallower.
     */
    public int depth() {
        int d = 0;
        for (long covered = size(); covered < 65536; covered <<= 1) {
            d++;
        }
        return d;
    }

    /** The boundary a midpoint split creates: the first hash of the upper half. */
    public int midpointBoundary() {
        return midpoint() + 1;
    }

    /** True when {@code boundary} can cut this range: the upper part starts there, both parts non-empty. */
    public boolean canSplitAt(int boundary) {
        return boundary > start && boundary <= end;
    }

    /**
     * The node of the midpoint-split tree (grown from the whole ring) whose midpoint split creates
     * {@code boundary}, or empty for 0. Every hash is some node's midpoint; what matters is
     * whether the two segments around a boundary make up exactly that node.
     */
    public static Optional<HashRange> splitTreeRange(int boundary) {
        HashRange r = FULL;
        while (r.size() >= 2) {
            int mid = r.midpointBoundary();
            if (mid == boundary) {
                return Optional.of(r);
            }
            r = boundary < mid ? r.lowerPart(mid) : r.upperPart(mid);
        }
        return Optional.empty();
    }

    /** The part below {@code boundary}. */
    public HashRange lowerPart(int boundary) {
        requireSplittable(boundary);
        return new HashRange(start, boundary - 1);
    }

    /** The part from {@code boundary} up. */
    public HashRange upperPart(int boundary) {
        requireSplittable(boundary);
        return new HashRange(boundary, end);
    }

    /** The union of two adjacent ranges. */
    public HashRange merge(HashRange other) {
        if (!isAdjacentTo(other)) {
            throw new IllegalArgumentException("cannot merge " + this + " with " + other + ": not adjacent");
        }
        return new HashRange(Math.min(start, other.start), Math.max(end, other.end));
    }

    /** {@code ssss-eeee}, lowercase, as in segment names. */
    public String toHexString() {
        return String.format("%04x-%04x", start, end);
    }

    /** Parses {@link #toHexString()}. */
    public static HashRange fromHexString(String hex) {
        String[] parts = hex.split("-", -1);
        if (parts.length != 2 || parts[0].length() != 4 || parts[1].length() != 4) {
            throw new IllegalArgumentException("hash range '" + hex + "' is not of the form ssss-eeee");
        }
        try {
            return new HashRange(Integer.parseInt(parts[0], 16), Integer.parseInt(parts[1], 16));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("hash range '" + hex + "' is not hexadecimal", e);
        }
    }

    @Override
    public int compareTo(HashRange o) {
        int c = Integer.compare(start, o.start);
        return c != 0 ? c : Integer.compare(end, o.end);
    }

    @Override
    public String toString() {
        return String.format("[%04x, %04x]", start, end);
    }

    private void requireSplittable(int boundary) {
        if (!canSplitAt(boundary)) {
            throw new IllegalArgumentException("boundary " + boundary + " does not cut " + this);
        }
    }
}
