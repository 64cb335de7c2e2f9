package io.verbatim.model;

import java.util.ArrayList;
import java.util.List;
import java.util.NavigableSet;
import java.util.TreeSet;

/**
 * What layouts converge on: where the ring is cut and how many buckets each piece has, without the
 * DAG history or ids. Two clusters agree when their shapes are equal.
 *
 * @param cells ranges in ring order that tile it once, each with its bucket count
 */
public record Shape(List<Cell> cells) {

    /** One range of a shape with its bucket count. */
    public record Cell(HashRange range, Buckets buckets) {
    }

    public Shape {
        cells = List.copyOf(cells);
        Tiling.requireRanges(cells.stream().map(Cell::range).toList(), "shape cells");
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

    /** The first hash of every cell but the first: the cuts of the ring. */
    public NavigableSet<Integer> boundaries() {
        NavigableSet<Integer> boundaries = new TreeSet<>();
        for (int i = 1; i < cells.size(); i++) {
            boundaries.add(cells.get(i).range().start());
        }
        return boundaries;
    }

    /** The cell that holds {@code hash}. */
    public Cell cellAt(int hash) {
        int lo = 0;
        int hi = cells.size() - 1;
        while (lo < hi) {
            int mid = (lo + hi + 1) >>> 1;
            if (cells.get(mid).range().start() <= hash) {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        return cells.get(lo);
    }

    /**
     * True when this shape is at least as fine as {@code other} everywhere: it has every boundary of
     * {@code other}, and no fewer buckets anywhere. The join of a set refines each member.
     */
    public boolean refines(Shape other) {
        if (!boundaries().containsAll(other.boundaries())) {
            return false;
        }
        for (Cell c : cells) {
            if (c.buckets().count() < other.cellAt(c.range().start()).buckets().count()) {
                return false;
            }
        }
        return true;
    }
}
