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
            // Deepest first: merging two halves can make their parent's halves siblings.
            List<Integer> order = new ArrayList<>(agreed);
            order.sort(java.util.Comparator.comparingInt(b -> HashRange.splitTreeRange(b).size()));
            for (int boundary : order) {
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
     * longer has them. Two more conditions keep every cluster able to reach the result by merging
     * siblings: the boundary must be a midpoint of the split tree (one an explicit-boundary split made
     * is never merged automatically), and nothing inside the range its merge would produce may stay.
     */
    static NavigableSet<Integer> agreedToRemove(Layout local, Set<Integer> coldMarks, Collection<PeerState> peers) {
        NavigableSet<Integer> all = new TreeSet<>(Shape.of(local).boundaries());
        peers.forEach(p -> all.addAll(p.shape().boundaries()));
        NavigableSet<Integer> agreed = new TreeSet<>();
        for (int b : coldMarks) {
            if (HashRange.splitTreeRange(b) != null && peers.stream().allMatch(p -> p.agreesToRemove(b))) {
                agreed.add(b);
            }
        }
        boolean changed = true;
        while (changed) {
            changed = false;
            for (Integer b : List.copyOf(agreed)) {
                HashRange merged = HashRange.splitTreeRange(b);
                boolean keepsInside = all.subSet(merged.start(), false, merged.end(), true).stream()
                        .anyMatch(c -> c != b && !agreed.contains(c));
                if (keepsInside) {
                    agreed.remove(b);
                    changed = true;
                }
            }
        }
        return agreed;
    }

    private static Shape target(Layout local, Collection<PeerState> peers, NavigableSet<Integer> agreed) {
        List<Shape> shapes = new ArrayList<>();
        shapes.add(Shape.of(local));
        peers.forEach(p -> shapes.add(p.shape()));
        Shape join = Join.of(shapes);
        if (agreed.isEmpty()) {
            return join;
        }
        List<Shape.Cell> cells = new ArrayList<>();
        for (Shape.Cell c : join.cells()) {
            if (!cells.isEmpty() && agreed.contains(c.range().start())) {
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
