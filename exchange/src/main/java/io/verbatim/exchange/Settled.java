package io.verbatim.exchange;

import io.verbatim.model.Layout;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * The inputs of a topic's latest fold that planned nothing. {@link Fold#plan} is a pure function of
 * them, and what a fold does around the plan (status, settled marks) gives the same result when done
 * again on the same inputs; so a fold whose inputs equal these plans nothing again and may be skipped.
 * That is every topic of an anti-entropy round once the clusters converged.
 *
 * <p>The layout is compared by identity first (a store hands out the layout it holds), the rest by
 * value: a peer state parsed afresh from every call is equal to the one held when nothing moved.
 *
 * @param states the peer states the fold read, a copy
 */
record Settled(Layout layout, ColdMarks own, Caps caps, List<PeerState> states, boolean mayCoarsen) {

    Settled {
        states = List.copyOf(states);
    }

    /**
     * Whether a fold of {@code current} with the {@code held} states ({@code candidate} in place of its
     * cluster's, when not null) reads the same inputs.
     */
    boolean matches(Layout current, ColdMarks currentOwn, Caps currentCaps, Map<String, PeerState> held,
            @Nullable PeerState candidate, boolean currentMayCoarsen) {
        if (!(current == layout || current.epoch() == layout.epoch() && current.equals(layout))
                || currentMayCoarsen != mayCoarsen || !currentOwn.equals(own) || !currentCaps.equals(caps)) {
            return false;
        }
        int count = held.size() + (candidate != null && !held.containsKey(candidate.cluster()) ? 1 : 0);
        if (count != states.size()) {
            return false;
        }
        for (PeerState s : states) {
            PeerState now = candidate != null && candidate.cluster().equals(s.cluster()) ? candidate
                    : held.get(s.cluster());
            if (s != now && !s.equals(now)) {
                return false;
            }
        }
        return true;
    }
}
