package io.verbatim.exchange;

import io.verbatim.model.HashRange;
import io.verbatim.model.Layout;
import io.verbatim.model.Shape;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * What one cluster tells its peers about one topic (PIP-495's exchanged state): its layout's shape
 * (boundaries and bucket counts), what it would coarsen (cold marks), its caps, and the epoch that
 * orders its states, with the version of its marks ordering states of one epoch.
 *
 * @param marksVersion raised by the sender whenever its marks change (a change of marks leaves the epoch)
 */
record PeerState(String cluster, String topic, long epoch, Shape shape, ColdMarks marks, Caps caps,
        long marksVersion) {

    PeerState {
        if (epoch < 0) {
            throw new IllegalArgumentException("epoch " + epoch + " of " + cluster + "/" + topic + " is negative");
        }
    }

    PeerState(String cluster, String topic, long epoch, Shape shape, ColdMarks marks, Caps caps) {
        this(cluster, topic, epoch, shape, marks, caps, 0);
    }

    /** A state with boundary marks only. */
    PeerState(String cluster, String topic, long epoch, Shape shape, Set<Integer> coldMarks, Caps caps) {
        this(cluster, topic, epoch, shape, ColdMarks.ofBoundaries(coldMarks), caps);
    }

    /** Whether this state is newer than {@code other} of the same cluster: a higher epoch, or marks changed since. */
    boolean newerThan(PeerState other) {
        return other == null || epoch > other.epoch || epoch == other.epoch && marksVersion > other.marksVersion;
    }

    /** Whether this state is older than {@code other}: a lower epoch, or older marks of the same epoch. */
    boolean olderThan(@Nullable PeerState other) {
        return other != null && (epoch < other.epoch || epoch == other.epoch && marksVersion < other.marksVersion);
    }

    static PeerState of(String cluster, String topic, Layout layout, ColdMarks marks, Caps caps) {
        return new PeerState(cluster, topic, layout.epoch(), Shape.of(layout), marks, caps);
    }

    static PeerState of(String cluster, String topic, Layout layout, Set<Integer> coldMarks, Caps caps) {
        return of(cluster, topic, layout, ColdMarks.ofBoundaries(coldMarks), caps);
    }

    /** The boundaries this state would merge. */
    Set<Integer> coldMarks() {
        return marks.boundaries();
    }

    /** True when this state marks {@code boundary} cold or no longer has it. */
    boolean agreesToRemove(int boundary) {
        return marks.boundaries().contains(boundary) || !shape.boundaries().contains(boundary);
    }

    /**
     * How far this state lets a cluster holding {@code current} buckets over {@code range} lower them:
     * to the count it marks for that range, if it marks one; to the count it already holds there, if that
     * is lower than {@code current} (it went down before, or never came up); -1 when it holds as many or
     * more and marks nothing (it wants them).
     */
    int agreedLowering(HashRange range, int current) {
        Integer marked = marks.buckets().get(range);
        if (marked != null) {
            return marked;
        }
        int theirs = shape.bucketsOver(range);
        return theirs < current ? theirs : -1;
    }
}
