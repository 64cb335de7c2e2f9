package io.verbatim.model;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.NavigableSet;
import java.util.TreeSet;

/**
 * What layouts converge on: where the ring is cut and how many buckets each piece has, without the
 * DAG history or ids. Two clusters agree when their shapes are equal. Immutable; its boundaries are
 * computed once, so asking for them is free.
 */
public final class Shape {

    /** One range of a shape with its bucket count. */
    public record Cell(HashRange range, Buckets buckets) {
    }

    private final List<Cell> cells;
    private final int[] starts;
    private final NavigableSet<Integer> boundaries;

    /** @param cells ranges in ring order that tile it once, each with its bucket count */
    public Shape(List<Cell> cells) {
        this.cells = List.copyOf(cells);
        Tiling.requireRanges(this.cells.stream().map(Cell::range).toList(), "shape cells");
        this.starts = this.cells.stream().mapToInt(c -> c.range().start()).toArray();
        NavigableSet<Integer> cuts = new TreeSet<>();
        for (int i = 1; i < starts.length; i++) {
            cuts.add(starts[i]);
        }
        this.boundaries = Collections.unmodifiableNavigableSet(cuts);
    }

    /** The shape of a layout's active segments. */
    public static Shape of(Layout layout) {
        List<Cell> cells = new ArrayList<>();
        for (Segment s : layout.activeSegments()) {
            cells.add(new Cell(s.range(), s.buckets()));
        }
        return new Shape(cells);
    }

    /** A shape from the starts of its cells after 0, all with the same bucket count. */
    public static Shape ofBoundaries(NavigableSet<Integer> boundaries, Buckets buckets) {
        List<Cell> cells = new ArrayList<>();
        int start = HashRange.MIN_HASH;
        for (int b : boundaries) {
            cells.add(new Cell(HashRange.of(start, b - 1), buckets));
            start = b;
        }
        cells.add(new Cell(HashRange.of(start, HashRange.MAX_HASH), buckets));
        return new Shape(cells);
    }

    /** The cells in ring order. */
    public List<Cell> cells() {
        return cells;
    }

    /** The first hash of every cell but the first: the cuts of the ring. */
    public NavigableSet<Integer> boundaries() {
        return boundaries;
    }

    /** The cell that holds {@code hash}. */
    public Cell cellAt(int hash) {
        int i = Arrays.binarySearch(starts, hash);
        return cells.get(i >= 0 ? i : -i - 2);
    }

    /**
     * A bucket count carried from a range to a range inside it, as splitting does (PIP-483 gives each
     * half of a split {@code N/2}): halved once per level of {@link HashRange#depth()} between them, and
     * never below 1. Comparing counts only after carrying them to the same range is what keeps the join
     * from undoing a split's halving (SPEC J8).
     */
    public static int project(int count, HashRange from, HashRange to) {
        int levels = Math.max(0, to.depth() - from.depth());
        return levels >= 31 ? 1 : Math.max(1, count >> levels);
    }

    /**
     * This shape's bucket count for {@code range}: projected from the cell that contains it, or, where
     * this shape cuts {@code range} finer, the sum of its cells' counts inside rounded down to a power of
     * two (what merging them gives: the inverse of the projection).
     */
    public int bucketsOver(HashRange range) {
        Cell first = cellAt(range.start());
        if (first.range().contains(range)) {
            return project(first.buckets().count(), first.range(), range);
        }
        long sum = 0;
        int i = Arrays.binarySearch(starts, first.range().start());
        for (; i < cells.size() && cells.get(i).range().start() <= range.end(); i++) {
            sum += cells.get(i).buckets().count();
        }
        return Buckets.floorCount((int) Math.min(Integer.MAX_VALUE, sum));
    }

    /**
     * True when this shape is at least as fine as {@code other} everywhere: it has every boundary of
     * {@code other}, and no fewer buckets anywhere than {@code other}'s count carried to its cells. The
     * join of a set refines each member.
     */
    public boolean refines(Shape other) {
        if (!boundaries.containsAll(other.boundaries)) {
            return false;
        }
        for (Cell c : cells) {
            if (c.buckets().count() < other.bucketsOver(c.range())) {
                return false;
            }
        }
        return true;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Shape other && cells.equals(other.cells);
    }

    @Override
    public int hashCode() {
        return cells.hashCode();
    }

    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder("Shape[");
        for (Cell c : cells) {
            sb.append(sb.length() == 6 ? "" : " ").append(c.range().toHexString()).append("/N").append(c.buckets().count());
        }
        return sb.append(']').toString();
    }
}
