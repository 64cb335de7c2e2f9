package io.verbatim.model;

import io.verbatim.model.Outcome.Refusal;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Function;

/**
 * A working copy of a layout that mutations are applied to one after the other, each advancing the
 * epoch by one, at a cost of its own size only: the segment map is copied once, not once per mutation
 * (planning hundreds of steps stays linear). The epoch check is done by {@link Layout#apply}.
 */
final class Mutator {
    private final TreeMap<Long, Segment> segments;
    private final long nowMs;
    private long epoch;
    private long nextSegmentId;

    Mutator(Layout layout, long nowMs) {
        this.segments = new TreeMap<>(layout.segments());
        this.nowMs = nowMs;
        this.epoch = layout.epoch();
        this.nextSegmentId = layout.nextSegmentId();
    }

    /** The layout as it stands now; the mutator must not be used afterwards. */
    Layout layout() {
        return Layout.of(epoch, nextSegmentId, segments, false);
    }

    /** A read-only view of the working segments (for planners that look before they step). */
    Map<Long, Segment> segments() {
        return Collections.unmodifiableMap(segments);
    }

    /**
     * Applies one mutation and answers the ids it created, lowest range first.
     *
     * @throws Rejected when the mutation does not fit; the copy is untouched then
     */
    List<Long> step(Mutation mutation) {
        if (mutation instanceof Mutation.Split split) {
            return activeSegment(split.segmentId(), s -> splitAt(s, s.range().midpointBoundary()));
        }
        if (mutation instanceof Mutation.SplitAt splitAt) {
            return activeSegment(splitAt.segmentId(), s -> splitAt(s, splitAt.boundary()));
        }
        if (mutation instanceof Mutation.Merge merge) {
            return activeSegment(merge.first(), a -> activeSegment(merge.second(), b -> merge(a, b,
                    merge.siblingsOnly())));
        }
        if (mutation instanceof Mutation.Prune prune) {
            return prune(prune.segmentId());
        }
        Mutation.Rebucket rebucket = (Mutation.Rebucket) mutation;
        return activeSegment(rebucket.segmentId(), s -> rebucket(s, rebucket.bucketCount()));
    }

    /** Applies every mutation in order; the first refusal stops it. */
    Outcome applyAll(List<Mutation> mutations) {
        List<Long> created = new ArrayList<>();
        try {
            for (Mutation m : mutations) {
                created.addAll(step(m));
            }
        } catch (Rejected r) {
            return r.refused;
        }
        return new Outcome.Applied(layout(), created);
    }

    private List<Long> activeSegment(long id, Function<Segment, List<Long>> then) {
        Segment s = segments.get(id);
        if (s == null) {
            return refused(Refusal.UNKNOWN_SEGMENT, "segment " + id + " is not in the layout at epoch " + epoch);
        }
        if (!s.isActive()) {
            return refused(Refusal.SEGMENT_SEALED, "segment " + s.descriptor() + " is sealed");
        }
        return then.apply(s);
    }

    private List<Long> splitAt(Segment parent, int boundary) {
        if (!parent.range().canSplitAt(boundary)) {
            return refused(Refusal.BOUNDARY_OUTSIDE_RANGE, String.format("boundary %04x does not cut segment %s",
                    boundary, parent.descriptor()));
        }
        long newEpoch = epoch + 1;
        long lowerId = nextSegmentId;
        long upperId = lowerId + 1;
        HashRange lower = parent.range().lowerPart(boundary);
        HashRange upper = parent.range().upperPart(boundary);
        segments.put(parent.id(), parent.sealed(newEpoch, nowMs, List.of(lowerId, upperId)));
        segments.put(lowerId, Segment.active(lowerId, lower, List.of(parent.id()), newEpoch, nowMs,
                childBuckets(parent, lower)));
        segments.put(upperId, Segment.active(upperId, upper, List.of(parent.id()), newEpoch, nowMs,
                childBuckets(parent, upper)));
        return advanced(upperId + 1, List.of(lowerId, upperId));
    }

    /**
     * A split child's buckets: the parent's count carried to the child's range as the join carries it
     * ({@link Shape#project}). For a midpoint split that is Pulsar's {@code max(1, N/2)}; a small part of
     * an explicit-boundary split gets fewer, so a cluster still holding the parent never raises it.
     */
    private static Buckets childBuckets(Segment parent, HashRange child) {
        return Buckets.of(Shape.project(parent.buckets().count(), parent.range(), child));
    }

    private List<Long> merge(Segment a, Segment b, boolean siblingsOnly) {
        if (!a.range().isAdjacentTo(b.range())) {
            return refused(Refusal.NOT_ADJACENT, "segments " + a.descriptor() + " and " + b.descriptor()
                    + " are not adjacent");
        }
        if (siblingsOnly && !Siblings.are(segments, a.id(), b.id())) {
            return refused(Refusal.NOT_SIBLINGS, "segments " + a.descriptor() + " and " + b.descriptor()
                    + " are not the two halves of one split");
        }
        long newEpoch = epoch + 1;
        long mergedId = nextSegmentId;
        // Pulsar's N1 + N2 (the topic's bucket budget is kept), rounded down to a power of two: the inverse
        // of a split's halving, so merging two halves of an N gives N back, and what every cluster's fold
        // computes for the merged range.
        Buckets buckets = a.buckets().mergedWith(b.buckets());
        segments.put(a.id(), a.sealed(newEpoch, nowMs, List.of(mergedId)));
        segments.put(b.id(), b.sealed(newEpoch, nowMs, List.of(mergedId)));
        segments.put(mergedId, Segment.active(mergedId, a.range().merge(b.range()), List.of(a.id(), b.id()), newEpoch,
                nowMs, buckets));
        return advanced(mergedId + 1, List.of(mergedId));
    }

    private List<Long> rebucket(Segment s, int bucketCount) {
        if (!Buckets.isValidCount(bucketCount)) {
            return refused(Refusal.INVALID_BUCKET_COUNT, "bucket count " + bucketCount + " for segment "
                    + s.descriptor() + " is not a power of two within 1.." + Buckets.MAX_COUNT);
        }
        if (bucketCount == s.buckets().count()) {
            return refused(Refusal.SAME_BUCKET_COUNT, "segment " + s.descriptor() + " already has "
                    + bucketCount + " buckets");
        }
        long newEpoch = epoch + 1;
        long successorId = nextSegmentId;
        segments.put(s.id(), s.sealed(newEpoch, nowMs, List.of(successorId)));
        segments.put(successorId, Segment.active(successorId, s.range(), List.of(s.id()), newEpoch, nowMs,
                Buckets.of(bucketCount)));
        return advanced(successorId + 1, List.of(successorId));
    }

    private List<Long> prune(long id) {
        Segment s = segments.get(id);
        if (s == null) {
            return refused(Refusal.UNKNOWN_SEGMENT, "segment " + id + " is not in the layout at epoch " + epoch);
        }
        if (s.isActive()) {
            return refused(Refusal.SEGMENT_ACTIVE, "segment " + s.descriptor() + " is active and cannot be pruned");
        }
        segments.remove(id);
        for (long neighbour : s.parentIds()) {
            dropReference(neighbour, id);
        }
        for (long neighbour : s.childIds()) {
            dropReference(neighbour, id);
        }
        return advanced(nextSegmentId, List.of());
    }

    private void dropReference(long from, long pruned) {
        Segment other = segments.get(from);
        if (other != null) {
            segments.put(from, other.without(pruned));
        }
    }

    private List<Long> advanced(long newNextSegmentId, List<Long> created) {
        epoch++;
        nextSegmentId = newNextSegmentId;
        return created;
    }

    private static List<Long> refused(Refusal reason, String message) {
        throw new Rejected(new Outcome.Refused(reason, message));
    }

    /** A mutation that does not fit the working copy (carries the refusal; no stack trace). */
    static final class Rejected extends RuntimeException {
        private static final long serialVersionUID = 1L;
        final transient Outcome.Refused refused;

        Rejected(Outcome.Refused refused) {
            super(refused.message(), null, false, false);
            this.refused = refused;
        }
    }
}
