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
import java.util.List;
import java.util.NavigableSet;
import java.util.Set;
import java.util.TreeSet;

/**
 * Folds peers' latest states into the local layout (PIP-495, "Join, on receipt" and "Merge rule").
 * Pure: the same inputs give the same plan.
 *
 * <p>The target is the join of the local layout and every peer's (union of boundaries, largest bucket
 * count per range) without the boundaries every cluster agreed to merge: a boundary goes only when the
 * local policy marks it cold and every peer marks it cold or no longer has it. Additions come first
 * (midpoint splits, explicit-boundary splits, rebuckets), each skipped if it would exceed an effective
 * cap; then agreed merges of sibling pairs, unless the cluster's own changes are deferred (a new leader
 * that has not yet heard from every peer).
 */
public final class Fold {
    private Fold() {
    }

    public static FoldPlan plan(String localCluster, Layout local, Set<Integer> localColdMarks, Caps localCaps,
            Collection<PeerState> peers, boolean deferOwn) {
        List<Caps> peerCaps = new ArrayList<>();
        List<String> mismatches = new ArrayList<>();
        for (PeerState p : peers) {
            peerCaps.add(p.caps());
            if (!p.caps().equals(localCaps)) {
                mismatches.add(p.cluster() + " caps " + p.caps() + " differ from " + localCluster + " caps " + localCaps);
            }
        }
        Caps effective = Caps.min(localCaps, peerCaps);
        NavigableSet<Integer> agreed = agreedToRemove(local, localColdMarks, peers);
        Shape target = target(local, peers, agreed);

        List<Mutation> steps = new ArrayList<>();
        Layout working = local;
        boolean capLimited = false;
        for (Mutation m : Join.toReach(local, withLocalBoundaries(target, local))) {
            Layout next = ((Outcome.Applied) working.apply(m, working.epoch(), 0L)).layout();
            if (exceeds(next, effective)) {
                capLimited = true;
                continue;
            }
            steps.add(m);
            working = next;
        }
        if (!deferOwn) {
            for (int boundary : agreed) {
                Mutation merge = siblingMerge(working, boundary);
                if (merge != null) {
                    steps.add(merge);
                    working = ((Outcome.Applied) working.apply(merge, working.epoch(), 0L)).layout();
                }
            }
        }
        return new FoldPlan(steps, target, effective, mismatches, capLimited);
    }

    /**
     * Boundaries that may go: the local policy marks them cold and every peer marks them cold or no
     * longer has them. And every cluster must be able to remove it by merging siblings: wherever the
     * boundary still stands, the cells on its two sides must be the two halves of one node of the
     * midpoint-split tree. (So a boundary an explicit-boundary split made is never merged
     * automatically, and nor is one with a finer cut still standing next to it.)
     */
    static NavigableSet<Integer> agreedToRemove(Layout local, Set<Integer> coldMarks, Collection<PeerState> peers) {
        Shape mine = Shape.of(local);
        NavigableSet<Integer> agreed = new TreeSet<>();
        for (int b : coldMarks) {
            boolean everyoneAgrees = peers.stream().allMatch(p -> p.agreesToRemove(b));
            boolean mergeable = halvesOfATreeNode(mine, b)
                    && peers.stream().allMatch(p -> halvesOfATreeNode(p.shape(), b));
            if (everyoneAgrees && mergeable) {
                agreed.add(b);
            }
        }
        return agreed;
    }

    /** True when {@code shape} lacks {@code b}, or its cells on both sides of {@code b} halve a tree node. */
    static boolean halvesOfATreeNode(Shape shape, int b) {
        if (!shape.boundaries().contains(b)) {
            return true;
        }
        HashRange lower = shape.cellAt(b - 1).range();
        HashRange upper = shape.cellAt(b).range();
        return lower.merge(upper).equals(HashRange.splitTreeRange(b));
    }

    private static Shape target(Layout local, Collection<PeerState> peers, NavigableSet<Integer> agreed) {
        List<Shape> shapes = new ArrayList<>();
        shapes.add(Shape.of(local));
        peers.forEach(p -> shapes.add(p.shape()));
        return without(Join.of(shapes), agreed);
    }

    /** {@code shape} with the {@code removed} boundaries merged away; a merged cell keeps the largest count. */
    static Shape without(Shape shape, Set<Integer> removed) {
        if (removed.isEmpty()) {
            return shape;
        }
        List<Shape.Cell> cells = new ArrayList<>();
        for (Shape.Cell c : shape.cells()) {
            if (!cells.isEmpty() && removed.contains(c.range().start())) {
                Shape.Cell previous = cells.remove(cells.size() - 1);
                cells.add(new Shape.Cell(previous.range().merge(c.range()),
                        Buckets.of(Math.max(previous.buckets().count(), c.buckets().count()))));
            } else {
                cells.add(c);
            }
        }
        return new Shape(cells);
    }

    /**
     * The target with every local boundary kept: additions never remove a boundary; agreed removals
     * are merges, planned separately.
     */
    private static Shape withLocalBoundaries(Shape target, Layout local) {
        NavigableSet<Integer> cuts = new TreeSet<>(target.boundaries());
        cuts.addAll(Shape.of(local).boundaries());
        List<Shape.Cell> cells = new ArrayList<>();
        for (Shape.Cell c : Shape.ofBoundaries(cuts, Buckets.ONE).cells()) {
            int n = Math.max(target.cellAt(c.range().start()).buckets().count(),
                    local.activeSegmentFor(c.range().start()).buckets().count());
            cells.add(new Shape.Cell(c.range(), Buckets.of(n)));
        }
        return new Shape(cells);
    }

    static boolean exceeds(Layout layout, Caps caps) {
        if (layout.activeSegments().size() > caps.maxSegments()) {
            return true;
        }
        return layout.activeSegments().stream().anyMatch(s -> s.buckets().count() > caps.maxEntryBucketsPerSegment());
    }

    /** The merge that removes {@code boundary}, when the segments on both sides are siblings. */
    private static Mutation siblingMerge(Layout layout, int boundary) {
        if (boundary <= 0) {
            return null;
        }
        Segment upper = layout.activeSegmentFor(boundary);
        Segment lower = layout.activeSegmentFor(boundary - 1);
        if (upper.range().start() != boundary || !layout.areSiblings(lower.id(), upper.id())) {
            return null;
        }
        return Mutation.mergeSiblings(lower.id(), upper.id());
    }
}
