package io.verbatim.exchange;

import io.verbatim.model.Shape;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Set;

/**
 * A peer's cells the local layout refines (converged) or not yet (diverged: it lags there), each as
 * {@code SSSS-EEEE/Nn}. A peer's shape is compared without the boundaries every cluster agreed to merge
 * ({@link #comparable}): those are about to go here too, so they are no lag.
 */
record Divergence(List<String> converged, List<String> diverged) {

    static Divergence of(Shape local, Shape theirs) {
        List<String> diverged = new ArrayList<>();
        List<String> converged = new ArrayList<>();
        for (Shape.Cell c : theirs.cells()) {
            (refines(local, c) ? converged : diverged).add(describe(c));
        }
        return new Divergence(converged, diverged);
    }

    /** How many of a peer's cells the local layout does not refine yet ({@link #of}, counted). */
    static int divergedCells(Shape local, Shape theirs) {
        int diverged = 0;
        for (Shape.Cell c : theirs.cells()) {
            diverged += refines(local, c) ? 0 : 1;
        }
        return diverged;
    }

    /** The boundaries every cluster agreed to merge: a peer's shape is compared without them. */
    static Set<Integer> agreed(Shape local, ColdMarks exchanged, Collection<PeerState> states) {
        return Fold.agreedToRemove(local, exchanged.boundaries(), states);
    }

    /** {@code theirs} as the local layout is compared with it: without the {@code agreed} boundaries. */
    static Shape comparable(Shape theirs, Set<Integer> agreed) {
        return Fold.without(theirs, agreed);
    }

    /** A cell as the status names it, e.g. {@code 0000-7fff/N2}. */
    static String describe(Shape.Cell c) {
        return c.range().toHexString() + "/N" + c.buckets().count();
    }

    /** Whether {@code local} cuts where {@code cell} starts and holds at least its buckets over it. */
    private static boolean refines(Shape local, Shape.Cell cell) {
        boolean cut = cell.range().start() == 0 || local.boundaries().contains(cell.range().start());
        return cut && local.bucketsOver(cell.range()) >= cell.buckets().count();
    }
}
