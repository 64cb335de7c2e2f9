package io.verbatim.model;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.NavigableSet;
import java.util.Objects;
import java.util.TreeSet;
import org.jspecify.annotations.Nullable;

/**
 * PIP-495's convergence rule, "the finer layout wins": the join of layouts is the union of their
 * boundaries with, per resulting range, the largest bucket count any of them has there, each count
 * first carried to that range the way a split carries it ({@link Shape#project}: a cluster that still
 * holds a split's parent with {@code N} counts as {@code N/2} on each half, which is what the halves
 * got). It is commutative, associative and idempotent, so every cluster computes the same target in
 * any order, and a converged split leaves every cluster with the counts a lone cluster would have.
 */
public final class Join {
    private Join() {
    }

    /** The join of one or more shapes. */
    public static Shape of(Collection<Shape> shapes) {
        if (shapes.isEmpty()) {
            throw new IllegalArgumentException("the join needs at least one shape");
        }
        NavigableSet<Integer> boundaries = new TreeSet<>();
        for (Shape s : shapes) {
            boundaries.addAll(s.boundaries());
        }
        List<Shape.Cell> cells = new ArrayList<>();
        for (Shape.Cell cell : Shape.ofBoundaries(boundaries, Buckets.ONE).cells()) {
            cells.add(new Shape.Cell(cell.range(), Buckets.of(bucketsOver(cell.range(), shapes))));
        }
        return new Shape(cells);
    }

    /** The largest of the shapes' counts for {@code range} ({@link Shape#bucketsOver}), at least 1. */
    public static int bucketsOver(HashRange range, Collection<Shape> shapes) {
        int n = 1;
        for (Shape s : shapes) {
            n = Math.max(n, s.bucketsOver(range));
        }
        return n;
    }

    public static Shape of(Shape first, Shape... more) {
        List<Shape> all = new ArrayList<>(List.of(more));
        all.add(0, first);
        return of(all);
    }

    /**
     * The mutations that take {@code local} to {@code target}, in order: a midpoint split wherever
     * the midpoint is a target boundary (layouts that nest), an explicit-boundary split otherwise
     * (layouts that evolved apart), then a rebucket rollover wherever the target has more buckets than
     * the split left. Apply them in order ({@link Layout#applyAll}). Linear in the layout's size and the
     * number of steps.
     *
     * @throws IllegalArgumentException when {@code target} does not refine {@code local}: the join
     *         only ever adds boundaries and buckets, and removing them is the merge rule's business
     */
    public static List<Mutation> toReach(Layout local, Shape target) {
        Shape from = Shape.of(local);
        if (!target.refines(from)) {
            throw new IllegalArgumentException("target shape does not refine the local layout at epoch "
                    + local.epoch() + ": it lacks a boundary or has fewer buckets somewhere");
        }
        NavigableSet<Integer> cuts = target.boundaries();
        List<Mutation> steps = new ArrayList<>();
        Mutator working = new Mutator(local, 0L);
        List<Long> pending = new ArrayList<>();
        for (Segment s : local.activeSegments()) {
            pending.add(s.id());
        }
        while (!pending.isEmpty()) {
            Segment s = Objects.requireNonNull(working.segments().get(pending.remove(pending.size() - 1)));
            Mutation step = nextStep(s, target, cuts);
            if (step != null) {
                pending.addAll(working.step(step));
                steps.add(step);
            }
        }
        return steps;
    }

    private static @Nullable Mutation nextStep(Segment s, Shape target, NavigableSet<Integer> allCuts) {
        HashRange r = s.range();
        NavigableSet<Integer> inside = allCuts.subSet(r.start(), false, r.end(), true);
        if (!inside.isEmpty()) {
            int cut = chooseCut(r, inside);
            return cut == r.midpointBoundary() ? Mutation.split(s.id()) : Mutation.splitAt(s.id(), cut);
        }
        int wanted = target.cellAt(r.start()).buckets().count();
        return wanted > s.buckets().count() ? Mutation.rebucket(s.id(), wanted) : null;
    }

    /** The midpoint when the target cuts there; otherwise the target cut nearest to it. */
    private static int chooseCut(HashRange r, NavigableSet<Integer> cuts) {
        int mid = r.midpointBoundary();
        if (cuts.contains(mid)) {
            return mid;
        }
        Integer below = cuts.lower(mid);
        Integer above = cuts.higher(mid);
        if (below == null) {
            return above;
        }
        if (above == null) {
            return below;
        }
        return mid - below <= above - mid ? below : above;
    }
}
