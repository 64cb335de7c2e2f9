package io.verbatim.exchange;

import io.verbatim.model.HashRange;
import io.verbatim.model.Layout;
import io.verbatim.model.Shape;
import java.util.Set;

/**
 * What one cluster tells its peers about one topic (PIP-495's exchanged state): its layout's shape
 * (boundaries and bucket counts), what it would coarsen (cold marks), its caps, and the epoch that
 * orders its states.
 */
public record PeerState(String cluster, String topic, long epoch, Shape shape, ColdMarks marks, Caps caps) {

    public PeerState {
        if (epoch < 0) {
            throw new IllegalArgumentException("epoch " + epoch + " of " + cluster + "/" + topic + " is negative");
        }
    }

    /** A state with boundary marks only. */
    public PeerState(String cluster, String topic, long epoch, Shape shape, Set<Integer> coldMarks, Caps caps) {
        this(cluster, topic, epoch, shape, ColdMarks.ofBoundaries(coldMarks), caps);
    }

    public static PeerState of(String cluster, String topic, Layout layout, ColdMarks marks, Caps caps) {
        return new PeerState(cluster, topic, layout.epoch(), Shape.of(layout), marks, caps);
    }

    public static PeerState of(String cluster, String topic, Layout layout, Set<Integer> coldMarks, Caps caps) {
        return of(cluster, topic, layout, ColdMarks.ofBoundaries(coldMarks), caps);
    }

    /** The boundaries this state would merge. */
    public Set<Integer> coldMarks() {
        return marks.boundaries();
    }

    /** True when this state marks {@code boundary} cold or no longer has it. */
    boolean agreesToRemove(int boundary) {
        return marks.boundaries().contains(boundary) || !shape.boundaries().contains(boundary);
    }

    /**
     * How far this state agrees to lower {@code range}'s count toward {@code count}: the count it marks
     * for that range, or {@code count} itself when its own count there is no higher; -1 when it does
     * not agree.
     */
    int agreedLowering(HashRange range, int count) {
        if (shape.bucketsOver(range) <= count) {
            return count;
        }
        Integer marked = marks.buckets().get(range);
        return marked == null ? -1 : Math.max(marked, count);
    }
}
