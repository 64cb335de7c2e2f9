package io.verbatim.exchange;

import io.verbatim.model.Buckets;
import io.verbatim.model.HashRange;
import io.verbatim.model.Shape;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.NavigableSet;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;

/**
 * The part of a join that the effective caps allow, chosen the same way on every cluster that holds
 * the same states, so that clusters whose concurrent changes raced past a cap still meet on one shape.
 *
 * <p>When the join has more cells than {@code maxSegments}, it keeps its boundaries in this order until
 * the cap is reached: first those some cluster could not merge away (explicit-boundary cuts of layouts
 * that evolved apart), then the coarsest (the boundary whose split cut the largest range), lowest hash
 * first. Kept that way the boundaries stay closed under the splits that led to them, so whatever a
 * cluster holds beyond them can be merged back as siblings, deepest first. Bucket counts are capped at
 * the largest power of two within {@code maxEntryBucketsPerSegment}.
 */
final class CappedJoin {
    private final Shape joined;
    private final List<Integer> kept;
    private final Set<Integer> keptSet;
    private final int maxSegments;
    private final int bucketCap;
    private final boolean limited;

    private CappedJoin(Shape joined, List<Integer> kept, int maxSegments, int bucketCap, boolean limited) {
        this.joined = joined;
        this.kept = kept;
        this.keptSet = new HashSet<>(kept);
        this.maxSegments = maxSegments;
        this.bucketCap = bucketCap;
        this.limited = limited;
    }

    /** @param shapes every cluster's shape the join was made of (whether a boundary can be merged away) */
    static CappedJoin of(Shape joined, List<Shape> shapes, Caps caps) {
        int bucketCap = Buckets.floorCount(caps.maxEntryBucketsPerSegment());
        boolean bucketsCut = joined.cells().stream().anyMatch(c -> c.buckets().count() > bucketCap);
        Map<Integer, Boolean> removable = new HashMap<>();
        Map<Integer, Integer> cut = new HashMap<>();
        for (int b : joined.boundaries()) {
            removable.put(b, shapes.stream().allMatch(s -> Fold.mergeableAt(s, b)));
            cut.put(b, cutRange(b, joined, shapes));
        }
        List<Integer> ordered = new ArrayList<>(joined.boundaries());
        ordered.sort(Comparator.comparing((Integer b) -> Objects.requireNonNull(removable.get(b)))
                .thenComparing((Integer b) -> cut.get(b), Comparator.reverseOrder())
                .thenComparing(Comparator.naturalOrder()));
        if (ordered.size() + 1 <= caps.maxSegments()) {
            return new CappedJoin(joined, ordered, caps.maxSegments(), bucketCap, bucketsCut);
        }
        List<Integer> kept = new ArrayList<>();
        for (int b : ordered) {
            if (kept.size() + 1 < caps.maxSegments() || !Objects.requireNonNull(removable.get(b))) {
                kept.add(b);
            }
        }
        return new CappedJoin(joined, kept, caps.maxSegments(), bucketCap, true);
    }

    /**
     * The size of the range whose split made {@code b}: its node of the midpoint-split tree when the
     * node's ends are cuts of the join too (always so for layouts grown by midpoint splits); otherwise the
     * widest range any shape has around it.
     */
    private static int cutRange(int b, Shape joined, List<Shape> shapes) {
        HashRange node = HashRange.splitTreeRange(b).orElseThrow(); // b > 0: a boundary
        boolean startIsCut = node.start() == HashRange.MIN_HASH || joined.boundaries().contains(node.start());
        boolean endIsCut = node.end() == HashRange.MAX_HASH || joined.boundaries().contains(node.end() + 1);
        if (startIsCut && endIsCut) {
            return node.size();
        }
        int widest = 0;
        for (Shape s : shapes) {
            widest = Math.max(widest, Fold.around(s, b).map(HashRange::size).orElse(0));
        }
        return widest;
    }

    /** True when the caps left part of the join out. */
    boolean limited() {
        return limited;
    }

    /**
     * What the caps make this cluster offer to coarsen: its boundaries the capped join leaves out, and
     * its counts above the bucket cap (lowered to it). Empty when the join fits the caps.
     */
    ColdMarks marksFor(Shape mine) {
        if (!limited) {
            return ColdMarks.NONE;
        }
        Set<Integer> boundaries = new HashSet<>();
        for (int b : mine.boundaries()) {
            if (joined.boundaries().contains(b) && !keptSet.contains(b)) {
                boundaries.add(b);
            }
        }
        Map<HashRange, Integer> buckets = new HashMap<>();
        for (Shape.Cell c : mine.cells()) {
            if (c.buckets().count() > bucketCap) {
                buckets.put(c.range(), bucketCap);
            }
        }
        return new ColdMarks(boundaries, buckets);
    }

    /**
     * What additions alone reach from {@code mine}: every local boundary, then the capped join's others
     * in their order for as long as {@code maxSegments} allows; each cell's count the join's (capped),
     * never below what the local layout already has there.
     */
    Shape additionsTarget(Shape mine) {
        NavigableSet<Integer> cuts = new TreeSet<>(mine.boundaries());
        for (int b : kept) {
            if (!cuts.contains(b) && cuts.size() + 2 <= maxSegments) {
                cuts.add(b);
            }
        }
        List<Shape.Cell> cells = new ArrayList<>();
        for (Shape.Cell c : Shape.ofBoundaries(cuts, Buckets.ONE).cells()) {
            int wanted = Math.min(joined.bucketsOver(c.range()), bucketCap);
            cells.add(new Shape.Cell(c.range(), Buckets.of(Math.max(wanted, mine.bucketsOver(c.range())))));
        }
        return new Shape(cells);
    }
}
