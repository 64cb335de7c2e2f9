package io.verbatim.model;

import java.util.Map;
import java.util.Optional;

/** Which pairs of active segments a replicated topic may merge: the two halves of one split. */
final class Siblings {
    private Siblings() {
    }

    /** See {@link Layout#areSiblings}; {@code segments} is a layout's (or a working copy's) segment map. */
    static boolean are(Map<Long, Segment> segments, long firstId, long secondId) {
        Segment a = segments.get(firstId);
        Segment b = segments.get(secondId);
        if (a == null || b == null || a.id() == b.id() || !a.range().isAdjacentTo(b.range())) {
            return false;
        }
        HashRange union = a.range().merge(b.range());
        int boundary = Math.max(a.range().start(), b.range().start());
        if (HashRange.splitTreeRange(boundary).filter(union::equals).isPresent()) {
            // The two halves of a node of the midpoint-split tree: siblings whatever the DAG still holds
            // of their history (a pruned parent, a merge that restored a range).
            return true;
        }
        Optional<Segment> parentA = splitParent(segments, a);
        Optional<Segment> parentB = splitParent(segments, b);
        return parentA.isPresent() && parentB.isPresent() && parentA.get().id() == parentB.get().id()
                && parentA.get().range().equals(union);
    }

    /** The segment whose split created {@code s}'s range, skipping rebucket rollovers; empty if none. */
    private static Optional<Segment> splitParent(Map<Long, Segment> segments, Segment s) {
        Segment current = s;
        while (current.parentIds().size() == 1) {
            Segment parent = segments.get(current.parentIds().get(0));
            if (parent == null) {
                return Optional.empty();
            }
            if (!parent.range().equals(current.range())) {
                return Optional.of(parent);
            }
            current = parent;
        }
        return Optional.empty();
    }
}
