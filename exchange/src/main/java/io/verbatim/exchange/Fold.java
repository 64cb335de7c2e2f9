package io.verbatim.exchange;

import io.verbatim.model.Buckets;
import io.verbatim.model.HashRange;
import io.verbatim.model.Join;
import io.verbatim.model.Layout;
import io.verbatim.model.Mutation;
import io.verbatim.model.Outcome;
import io.verbatim.model.Segment;
import io.verbatim.model.Shape;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.NavigableSet;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Folds peers' latest states into the local layout (PIP-495, "Join, on receipt" and "Merge rule").
 * Pure: the same inputs give the same plan; linear in the size of the layouts.
 *
 * <p>The target is the join of the local layout and every peer's (union of boundaries, largest bucket
 * count per range, carried to like ranges) without what every cluster agreed to coarsen, limited to
 * the effective caps by {@link CappedJoin} (the same choice on every cluster that holds the same
 * states). Additions come first, within the caps; then, unless the cluster may not coarsen yet (a new
 * leader that has not heard every peer), the agreed merges of sibling pairs, deepest first, and the
 * agreed lowerings of bucket counts.
 *
 * <p>A boundary goes only when the local policy marks it cold and every peer marks it cold or no
 * longer has it, and only where every cluster can remove it by merging siblings. The caps add marks of
 * their own (exchanged like the policy's): when concurrent changes pushed the join past a cap, every
 * cluster marks the boundaries the capped join leaves out, so the ones that raced are merged back and
 * the clusters meet on one shape within the caps.
 */
final class Fold {
    private Fold() {
    }

    /**
     * @param mayCoarsen whether merges and lowerings may be applied now (false while a new leader defers
     *        its own changes, or while some peer's state is not held)
     */
    static FoldPlan plan(Layout local, ColdMarks localMarks, Caps localCaps, Collection<PeerState> peers,
            boolean mayCoarsen) {
        Caps effective = Caps.min(localCaps, peers.stream().map(PeerState::caps).toList());
        Shape mine = Shape.of(local);
        if (localMarks.isEmpty() && fits(mine, effective) && allEqual(mine, peers)) {
            // Every shape is the local one, which fits the caps, and nothing is marked here: the join is the
            // local shape, nothing is agreed to coarsen, and the caps cut nothing (what follows would find
            // exactly that, at a cost of many sets and shapes; most folds of a converged fleet are this one).
            return new FoldPlan(List.of(), List.of(), mine, effective, false, ColdMarks.NONE);
        }
        return planInFull(local, localMarks, effective, mine, peers, mayCoarsen);
    }

    /** {@link #plan} without its shortcut (tests check that both plan the same). */
    static FoldPlan planInFull(Layout local, ColdMarks localMarks, Caps localCaps, Collection<PeerState> peers,
            boolean mayCoarsen) {
        Caps effective = Caps.min(localCaps, peers.stream().map(PeerState::caps).toList());
        return planInFull(local, localMarks, effective, Shape.of(local), peers, mayCoarsen);
    }

    private static FoldPlan planInFull(Layout local, ColdMarks localMarks, Caps effective, Shape mine,
            Collection<PeerState> peers, boolean mayCoarsen) {
        List<Shape> shapes = new ArrayList<>();
        shapes.add(mine);
        peers.forEach(p -> shapes.add(p.shape()));

        NavigableSet<Integer> agreed = agreedToRemove(mine, localMarks.boundaries(), peers);
        Map<HashRange, Integer> lowered = agreedLowerings(mine, localMarks.buckets(), peers);
        Set<Integer> leftOut = new TreeSet<>(agreed);
        leftOut.addAll(unwanted(mine, peers));
        Shape joined = lowered(joinWithout(shapes, leftOut), lowered);
        CappedJoin capped = CappedJoin.of(joined, shapes, effective);
        ColdMarks capMarks = capped.marksFor(mine);
        Map<Integer, String> merges = new HashMap<>();
        agreedToRemove(mine, capMarks.boundaries(), peers).forEach(b -> merges.put(b, FoldPlan.CAPS));
        agreed.forEach(b -> merges.put(b, FoldPlan.COLD));
        Map<HashRange, String> lowerings = new HashMap<>();
        agreedLowerings(mine, capMarks.buckets(), peers).forEach((r, n) -> {
            // Both are agreed: the lower count stands (the cap is not a wish).
            lowerings.put(r, lowered.containsKey(r) && lowered.get(r) <= n ? FoldPlan.COLD : FoldPlan.CAPS);
            lowered.merge(r, n, Math::min);
        });
        lowered.keySet().forEach(r -> lowerings.putIfAbsent(r, FoldPlan.COLD));

        List<Mutation> steps = new ArrayList<>(Join.toReach(local, capped.additionsTarget(mine)));
        List<String> reasons = new ArrayList<>(Collections.nCopies(steps.size(), FoldPlan.JOIN));
        Layout working = steps.isEmpty() ? local : local.applyAll(steps, local.epoch(), 0L).layoutOrThrow();
        if (mayCoarsen) {
            working = coarsen(working, merges, lowered, lowerings,
                    Buckets.floorCount(effective.maxEntryBucketsPerSegment()), steps, reasons);
        }
        return new FoldPlan(steps, reasons, Shape.of(working), effective, capped.limited(), capMarks);
    }

    /** Whether {@code shape} has no more cells than the caps allow, and no count above the bucket cap. */
    private static boolean fits(Shape shape, Caps caps) {
        if (shape.cells().size() > caps.maxSegments()) {
            return false;
        }
        int bucketCap = Buckets.floorCount(caps.maxEntryBucketsPerSegment());
        for (Shape.Cell c : shape.cells()) {
            if (c.buckets().count() > bucketCap) {
                return false;
            }
        }
        return true;
    }

    private static boolean allEqual(Shape mine, Collection<PeerState> peers) {
        for (PeerState p : peers) {
            if (!p.shape().equals(mine)) {
                return false;
            }
        }
        return true;
    }

    /** Each peer cap that differs from the local one, named, peers in name order. */
    static List<CapMismatch> mismatches(Caps local, Map<String, Caps> peers) {
        List<CapMismatch> out = new ArrayList<>();
        for (Map.Entry<String, Caps> p : new TreeMap<>(peers).entrySet()) {
            Caps theirs = p.getValue();
            if (theirs.maxSegments() != local.maxSegments()) {
                out.add(new CapMismatch(p.getKey(), "maxSegments", local.maxSegments(), theirs.maxSegments()));
            }
            if (theirs.maxEntryBucketsPerSegment() != local.maxEntryBucketsPerSegment()) {
                out.add(new CapMismatch(p.getKey(), "maxEntryBucketsPerSegment", local.maxEntryBucketsPerSegment(),
                        theirs.maxEntryBucketsPerSegment()));
            }
        }
        return out;
    }

    /**
     * Boundaries that may go: the local policy marks them cold and every peer marks them cold or no
     * longer has them. And every cluster must be able to remove it by merging siblings: wherever the
     * boundary still stands, the cells on its two sides must be the two halves of one node of the
     * midpoint-split tree, which every cluster's layout accepts as siblings whatever its history. (So a
     * boundary an explicit-boundary split made is never merged automatically, nor one of a topic whose
     * initial segments are not tree nodes, nor one with a finer cut still standing next to it.)
     */
    static NavigableSet<Integer> agreedToRemove(Shape mine, Set<Integer> coldMarks, Collection<PeerState> peers) {
        NavigableSet<Integer> agreed = new TreeSet<>();
        for (int b : coldMarks) {
            boolean everyoneAgrees = peers.stream().allMatch(p -> p.agreesToRemove(b));
            boolean mergeable = mergeableAt(mine, b) && peers.stream().allMatch(p -> mergeableAt(p.shape(), b));
            if (everyoneAgrees && mergeable) {
                agreed.add(b);
            }
        }
        return agreed;
    }

    /**
     * Boundaries this cluster lacks that every peer holding them marks cold (and could merge): the join
     * leaves them out rather than add them here only to see them merged there.
     */
    static Set<Integer> unwanted(Shape mine, Collection<PeerState> peers) {
        Set<Integer> out = new TreeSet<>();
        for (PeerState p : peers) {
            for (int b : p.marks().boundaries()) {
                if (!mine.boundaries().contains(b) && peers.stream().allMatch(q -> q.agreesToRemove(b)
                        && mergeableAt(q.shape(), b))) {
                    out.add(b);
                }
            }
        }
        return out;
    }

    /**
     * Bucket counts that may be lowered: the local policy (or an operator, or a cap) marks the range, and
     * every peer marks it too or already holds fewer there than this cluster. The count agreed is the
     * largest any of them asks for or holds: the smallest lowering every cluster accepts.
     */
    static Map<HashRange, Integer> agreedLowerings(Shape mine, Map<HashRange, Integer> marks,
            Collection<PeerState> peers) {
        Map<HashRange, Integer> agreed = new HashMap<>();
        for (Map.Entry<HashRange, Integer> mark : marks.entrySet()) {
            HashRange range = mark.getKey();
            Shape.Cell cell = mine.cellAt(range.start());
            if (!cell.range().equals(range)) {
                continue; // the range is no longer one of ours: nothing to lower
            }
            int current = cell.buckets().count();
            int level = mark.getValue();
            for (PeerState p : peers) {
                int theirs = p.agreedLowering(range, current);
                level = theirs < 0 ? -1 : Math.max(level, theirs);
                if (level < 0) {
                    break;
                }
            }
            if (level > 0) {
                agreed.put(range, level); // also when already as low: the join must not raise it back
            }
        }
        return agreed;
    }

    /**
     * True when {@code shape} lacks {@code b}, or its cells on both sides of {@code b} are the two halves
     * of one node of the midpoint-split tree (so merging them as siblings removes exactly {@code b}).
     */
    static boolean mergeableAt(Shape shape, int b) {
        Optional<HashRange> union = around(shape, b);
        return union.isEmpty() || union.equals(HashRange.splitTreeRange(b));
    }

    /** The union of {@code shape}'s two cells on both sides of {@code b}, or empty when it lacks {@code b}. */
    static Optional<HashRange> around(Shape shape, int b) {
        if (!shape.boundaries().contains(b)) {
            return Optional.empty();
        }
        return Optional.of(shape.cellAt(b - 1).range().merge(shape.cellAt(b).range()));
    }

    /**
     * The join of {@code shapes} without the {@code removed} boundaries: each count is what the shapes
     * hold over the cell ({@link Join#bucketsOver}), so a merged cell counts a shape that already holds
     * it whole as well as the halves the others still hold.
     */
    static Shape joinWithout(List<Shape> shapes, Set<Integer> removed) {
        NavigableSet<Integer> cuts = new TreeSet<>();
        shapes.forEach(s -> cuts.addAll(s.boundaries()));
        cuts.removeAll(removed);
        List<Shape.Cell> cells = new ArrayList<>();
        for (Shape.Cell c : Shape.ofBoundaries(cuts, Buckets.ONE).cells()) {
            cells.add(new Shape.Cell(c.range(), Buckets.of(Join.bucketsOver(c.range(), shapes))));
        }
        return new Shape(cells);
    }

    /** {@code shape} with the {@code removed} boundaries merged away, each merged cell counted as merging gives. */
    static Shape without(Shape shape, Set<Integer> removed) {
        return removed.isEmpty() ? shape : joinWithout(List.of(shape), removed);
    }

    /** {@code shape} with each agreed lowering applied to the cell that has exactly that range. */
    private static Shape lowered(Shape shape, Map<HashRange, Integer> lowerings) {
        if (lowerings.isEmpty()) {
            return shape;
        }
        List<Shape.Cell> cells = new ArrayList<>();
        for (Shape.Cell c : shape.cells()) {
            Integer n = lowerings.get(c.range());
            cells.add(n == null || n >= c.buckets().count() ? c : new Shape.Cell(c.range(), Buckets.of(n)));
        }
        return new Shape(cells);
    }

    static boolean exceeds(Layout layout, Caps caps) {
        if (layout.activeSegments().size() > caps.maxSegments()) {
            return true;
        }
        return layout.activeSegments().stream().anyMatch(s -> s.buckets().count() > caps.maxEntryBucketsPerSegment());
    }

    /**
     * Agreed merges, deepest boundary first (so a coarser one can follow in the same pass), then agreed
     * lowerings; each with why.
     */
    private static Layout coarsen(Layout working, Map<Integer, String> merges, Map<HashRange, Integer> lowered,
            Map<HashRange, String> lowerings, int bucketCap, List<Mutation> steps, List<String> reasons) {
        List<Integer> deepestFirst = new ArrayList<>(merges.keySet());
        Shape before = Shape.of(working);
        deepestFirst.sort(Comparator.comparingInt((Integer b) -> {
            return around(before, b).map(HashRange::size).orElse(Integer.MAX_VALUE);
        }).thenComparing(Comparator.naturalOrder()));
        for (int boundary : deepestFirst) {
            Optional<Mutation> merge = siblingMerge(working, boundary);
            if (merge.isPresent()) {
                working = apply(working, merge.get(), Objects.requireNonNull(merges.get(boundary)), steps, reasons);
                Segment merged = working.activeSegmentFor(boundary);
                if (merged.buckets().count() > bucketCap) {
                    // N1 + N2 past the bucket cap: lowered to it at once, as every cluster does.
                    working = apply(working, Mutation.rebucket(merged.id(), bucketCap), FoldPlan.CAPS, steps, reasons);
                }
            }
        }
        for (Map.Entry<HashRange, Integer> lowering : new TreeMap<>(lowered).entrySet()) {
            Segment s = working.activeSegmentFor(lowering.getKey().start());
            if (s.range().equals(lowering.getKey()) && s.buckets().count() > lowering.getValue()) {
                working = apply(working, Mutation.rebucket(s.id(), lowering.getValue()),
                        Objects.requireNonNull(lowerings.get(lowering.getKey())), steps, reasons);
            }
        }
        return working;
    }

    private static Layout apply(Layout working, Mutation m, String why, List<Mutation> steps, List<String> reasons) {
        steps.add(m);
        reasons.add(why);
        return ((Outcome.Applied) working.apply(m, working.epoch(), 0L)).layout();
    }

    /** The merge that removes {@code boundary}, when the segments on both sides are siblings. */
    private static Optional<Mutation> siblingMerge(Layout layout, int boundary) {
        if (boundary <= 0) {
            return Optional.empty();
        }
        Segment upper = layout.activeSegmentFor(boundary);
        Segment lower = layout.activeSegmentFor(boundary - 1);
        if (upper.range().start() != boundary || !layout.areSiblings(lower.id(), upper.id())) {
            return Optional.empty();
        }
        return Optional.of(Mutation.mergeSiblings(lower.id(), upper.id()));
    }
}
