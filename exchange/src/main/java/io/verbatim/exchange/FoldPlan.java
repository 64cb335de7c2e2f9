package io.verbatim.exchange;

import io.verbatim.model.Mutation;
import io.verbatim.model.Shape;
import java.util.List;

/**
 * What folding peers' states into the local layout asks for.
 *
 * @param mutations to apply in order, each at the epoch the previous one produced
 * @param target the shape the local layout converges on: the join, less agreed merges
 * @param effectiveCaps the minimum caps over the cluster and its peers
 * @param capMismatches one line per peer whose caps differ from the local ones (reported, never overridden)
 * @param capLimited true when reaching {@code target} would exceed an effective cap, so part of it was left out
 */
public record FoldPlan(List<Mutation> mutations, Shape target, Caps effectiveCaps, List<String> capMismatches,
        boolean capLimited) {
    public FoldPlan {
        mutations = List.copyOf(mutations);
        capMismatches = List.copyOf(capMismatches);
    }
}
