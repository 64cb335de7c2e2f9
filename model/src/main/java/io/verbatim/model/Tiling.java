package io.verbatim.model;

import java.util.List;

/** The one invariant every layout and shape keeps: ranges that cover the ring once, in order. */
final class Tiling {
    private Tiling() {
    }

    static void require(List<Segment> activeInOrder) {
        requireRanges(activeInOrder.stream().map(Segment::range).toList(), "active segments");
    }

    static void requireRanges(List<HashRange> rangesInOrder, String what) {
        int expected = HashRange.MIN_HASH;
        for (HashRange r : rangesInOrder) {
            if (r.start() != expected) {
                throw new IllegalArgumentException(what + " do not tile the ring: "
                        + (r.start() < expected ? "overlap" : "gap") + " at " + String.format("%04x", expected)
                        + " (next range is " + r + ")");
            }
            expected = r.end() + 1;
        }
        if (expected != HashRange.MAX_HASH + 1) {
            throw new IllegalArgumentException(what + " do not tile the ring: nothing covers "
                    + String.format("%04x", expected) + "..ffff");
        }
    }
}
