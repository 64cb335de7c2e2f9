package io.verbatim.exchange;

import io.verbatim.model.Layout;
import io.verbatim.model.Mutation;
import io.verbatim.model.Segment;
import org.jspecify.annotations.Nullable;

/**
 * One change of a topic's layout on this cluster, for the status page: what it was, why, and when.
 *
 * @param epoch the epoch the change took the layout to (the last of a batch when several went together)
 * @param what e.g. {@code split 0000-ffff-0}, {@code merge 0000-7fff-1 + 8000-ffff-2}, {@code rebucket 8000-ffff-2 to 4}
 * @param boundary the boundary a split made or a merge removed, {@code -1} for a rebucket
 * @param why {@code own} (the policy or an operator), or a {@link FoldPlan} reason
 * @param atMillis when the change was committed, on the controller's clock (its scheduler's milliseconds)
 */
public record LayoutChange(long epoch, String what, int boundary, String why, long atMillis) {

    /** Describes {@code m} against {@code before}, the layout it was applied to, committed at {@code atMillis}. */
    static LayoutChange of(long epoch, Mutation m, Layout before, String why, long atMillis) {
        if (m instanceof Mutation.Split s) {
            Segment seg = before.segments().get(s.segmentId());
            return new LayoutChange(epoch, "split " + name(seg, s.segmentId()), seg == null ? -1
                    : seg.range().midpointBoundary(), why, atMillis);
        }
        if (m instanceof Mutation.SplitAt s) {
            return new LayoutChange(epoch, "split " + name(before.segments().get(s.segmentId()), s.segmentId())
                    + String.format(" at %04x", s.boundary()), s.boundary(), why, atMillis);
        }
        if (m instanceof Mutation.Merge merge) {
            Segment upper = before.segments().get(merge.second());
            Segment lower = before.segments().get(merge.first());
            int boundary = upper == null || lower == null ? -1 : Math.max(upper.range().start(), lower.range().start());
            return new LayoutChange(epoch, "merge " + name(lower, merge.first()) + " + " + name(upper, merge.second()),
                    boundary, why, atMillis);
        }
        if (m instanceof Mutation.Rebucket r) {
            return new LayoutChange(epoch, "rebucket " + name(before.segments().get(r.segmentId()), r.segmentId())
                    + " to " + r.bucketCount(), -1, why, atMillis);
        }
        return new LayoutChange(epoch, m.toString(), -1, why, atMillis);
    }

    private static String name(@Nullable Segment s, long id) {
        return s == null ? "segment " + id : s.descriptor();
    }

    /** What the status page lists: the epoch, what and why (the time is in the rates history). */
    @Override
    public String toString() {
        return "epoch " + epoch + ": " + what + " (" + why + ")";
    }
}
