package io.verbatim.exchange;

import io.verbatim.model.Mutation;
import io.verbatim.model.Shape;
import java.util.List;

/**
 * What folding peers' states into the local layout asks for.
 *
 * @param mutations to apply in order ({@link io.verbatim.model.Layout#applyAll})
 * @param reasons why each mutation is there, in the same order ({@link #JOIN}, {@link #COLD}, {@link #CAPS})
 * @param target the shape the local layout has once they are applied
 * @param effectiveCaps the minimum caps over the cluster and its peers
 * @param capLimited true when the effective caps left part of the join out
 * @param capMarks what the caps make this cluster offer to coarsen (exchanged with its cold marks)
 */
record FoldPlan(List<Mutation> mutations, List<String> reasons, Shape target, Caps effectiveCaps,
        boolean capLimited, ColdMarks capMarks) {
    /** A peer's boundary or bucket count the local layout lacked. */
    static final String JOIN = "join";
    /** A merge or lowering every cluster marked (the merge rule). */
    static final String COLD = "cold everywhere";
    /** A merge or lowering the effective caps made every cluster offer. */
    static final String CAPS = "past the caps";

    FoldPlan {
        mutations = List.copyOf(mutations);
        reasons = List.copyOf(reasons);
        if (reasons.size() != mutations.size()) {
            throw new IllegalArgumentException(reasons.size() + " reasons for " + mutations.size() + " mutations");
        }
    }
}
