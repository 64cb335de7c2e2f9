package io.verbatim.model;

import java.util.Optional;

/**
 * Whether two segments of a replicated topic may be merged, and on which boundary: a merge of a replicated topic is
 * a cold mark on the boundary between them, merged on every cluster once each marks it cold (PIP-495), so the two
 * must be active, the two halves of one split ({@link Layout#areSiblings}), and together a node of the midpoint-split
 * tree ({@link HashRange#splitTreeRange}): only then can clusters whose layouts differ agree on the mark.
 */
public sealed interface ReplicatedMerge {
    /** The pair may merge: the cold mark goes on {@code boundary}, the first hash of the upper side. */
    record Eligible(int boundary) implements ReplicatedMerge {
    }

    /** The pair may not merge, {@code why} in words an operator reads. */
    record Refused(Reason reason, String why) implements ReplicatedMerge {
    }

    /** Why a pair may not merge. */
    enum Reason {
        /** One of them is not an active segment of the layout. */
        NOT_ACTIVE,
        /** They are not the two halves of one split. */
        NOT_SIBLINGS,
        /** They are, but their union is no node of the midpoint-split tree (a cut at an explicit boundary). */
        NOT_A_TREE_NODE
    }

    /** Whether segments {@code first} and {@code second} of {@code layout} may merge, on which boundary. */
    static ReplicatedMerge of(Layout layout, long first, long second) {
        Segment a = layout.segment(first).filter(Segment::isActive).orElse(null);
        Segment b = layout.segment(second).filter(Segment::isActive).orElse(null);
        if (a == null || b == null) {
            return new Refused(Reason.NOT_ACTIVE, "segments " + first + " and " + second + " are not both active in "
                    + "epoch " + layout.epoch());
        }
        if (!layout.areSiblings(first, second)) {
            return new Refused(Reason.NOT_SIBLINGS, "segments " + a.descriptor() + " and " + b.descriptor()
                    + " are not the two halves of one split: a replicated topic merges siblings only");
        }
        int boundary = Math.max(a.range().start(), b.range().start());
        if (!HashRange.splitTreeRange(boundary).equals(Optional.of(a.range().merge(b.range())))) {
            return new Refused(Reason.NOT_A_TREE_NODE, "segments " + a.descriptor() + " and " + b.descriptor()
                    + " are the two sides of a split whose range is not a node of the midpoint-split tree: clusters "
                    + "cannot agree to merge them (a known limit of replicated topics whose layouts were cut at "
                    + "explicit boundaries or whose initial segments are not tree nodes)");
        }
        return new Eligible(boundary);
    }

    /**
     * Whether a cold mark on {@code boundary} can ever merge anything: its split-tree node exists (every boundary of
     * the ring but 0 has one).
     */
    static boolean isMarkable(int boundary) {
        return boundary >= 1 && boundary <= HashRange.MAX_HASH && HashRange.splitTreeRange(boundary).isPresent();
    }
}
