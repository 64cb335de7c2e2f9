package io.verbatim.model;

import io.verbatim.model.Outcome.Refusal;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/** Applies one mutation to one layout; the epoch check is done by {@link Layout#apply}. */
final class Mutator {
    private final Layout layout;
    private final long nowMs;
    private final long newEpoch;

    Mutator(Layout layout, long nowMs) {
        this.layout = layout;
        this.nowMs = nowMs;
        this.newEpoch = layout.epoch() + 1;
    }

    Outcome apply(Mutation mutation) {
        if (mutation instanceof Mutation.Split split) {
            return activeSegment(split.segmentId(), s -> splitAt(s, s.range().midpointBoundary()));
        }
        if (mutation instanceof Mutation.SplitAt splitAt) {
            return activeSegment(splitAt.segmentId(), s -> splitAt(s, splitAt.boundary()));
        }
        if (mutation instanceof Mutation.Merge merge) {
            return merge(merge);
        }
        if (mutation instanceof Mutation.Prune prune) {
            return prune(prune.segmentId());
        }
        Mutation.Rebucket rebucket = (Mutation.Rebucket) mutation;
        return activeSegment(rebucket.segmentId(), s -> rebucket(s, rebucket.bucketCount()));
    }

    private Outcome activeSegment(long id, java.util.function.Function<Segment, Outcome> then) {
        Segment s = layout.segments().get(id);
        if (s == null) {
            return refused(Refusal.UNKNOWN_SEGMENT, "segment " + id + " is not in the layout at epoch "
                    + layout.epoch());
        }
        if (!s.isActive()) {
            return refused(Refusal.SEGMENT_SEALED, "segment " + s.descriptor() + " is sealed");
        }
        return then.apply(s);
    }

    private Outcome splitAt(Segment parent, int boundary) {
        if (!parent.range().canSplitAt(boundary)) {
            return refused(Refusal.BOUNDARY_OUTSIDE_RANGE, String.format("boundary %04x does not cut segment %s",
                    boundary, parent.descriptor()));
        }
        long lowerId = layout.nextSegmentId();
        long upperId = lowerId + 1;
        Buckets childBuckets = parent.buckets().forSplitChild();
        Segment lower = Segment.active(lowerId, parent.range().lowerPart(boundary), List.of(parent.id()), newEpoch,
                nowMs, childBuckets);
        Segment upper = Segment.active(upperId, parent.range().upperPart(boundary), List.of(parent.id()), newEpoch,
                nowMs, childBuckets);
        Map<Long, Segment> next = copy();
        next.put(parent.id(), parent.sealed(newEpoch, nowMs, List.of(lowerId, upperId)));
        next.put(lowerId, lower);
        next.put(upperId, upper);
        return applied(upperId + 1, next, List.of(lowerId, upperId));
    }

    private Outcome merge(Mutation.Merge merge) {
        return activeSegment(merge.first(), a -> activeSegment(merge.second(), b -> merge(a, b, merge.siblingsOnly())));
    }

    private Outcome merge(Segment a, Segment b, boolean siblingsOnly) {
        if (!a.range().isAdjacentTo(b.range())) {
            return refused(Refusal.NOT_ADJACENT, "segments " + a.descriptor() + " and " + b.descriptor()
                    + " are not adjacent");
        }
        if (siblingsOnly && !layout.areSiblings(a.id(), b.id())) {
            return refused(Refusal.NOT_SIBLINGS, "segments " + a.descriptor() + " and " + b.descriptor()
                    + " are not the two halves of one split");
        }
        long mergedId = layout.nextSegmentId();
        // Pulsar gives a merge N1 + N2 (its per-topic bucket budget). Merging siblings on a replicated
        // topic keeps max(N1, N2): the peers' halves already have those counts, so the join does not
        // raise them, and N stays a power of two.
        Buckets buckets = siblingsOnly ? Buckets.of(Math.max(a.buckets().count(), b.buckets().count()))
                : a.buckets().mergedWith(b.buckets());
        Segment merged = Segment.active(mergedId, a.range().merge(b.range()), List.of(a.id(), b.id()), newEpoch,
                nowMs, buckets);
        Map<Long, Segment> next = copy();
        next.put(a.id(), a.sealed(newEpoch, nowMs, List.of(mergedId)));
        next.put(b.id(), b.sealed(newEpoch, nowMs, List.of(mergedId)));
        next.put(mergedId, merged);
        return applied(mergedId + 1, next, List.of(mergedId));
    }

    private Outcome rebucket(Segment s, int bucketCount) {
        if (bucketCount < 1 || bucketCount > Buckets.MAX_COUNT) {
            return refused(Refusal.INVALID_BUCKET_COUNT, "bucket count " + bucketCount + " for segment "
                    + s.descriptor() + " is outside 1.." + Buckets.MAX_COUNT);
        }
        if (bucketCount == s.buckets().count()) {
            return refused(Refusal.SAME_BUCKET_COUNT, "segment " + s.descriptor() + " already has "
                    + bucketCount + " buckets");
        }
        long successorId = layout.nextSegmentId();
        Segment successor = Segment.active(successorId, s.range(), List.of(s.id()), newEpoch, nowMs,
                Buckets.of(bucketCount));
        Map<Long, Segment> next = copy();
        next.put(s.id(), s.sealed(newEpoch, nowMs, List.of(successorId)));
        next.put(successorId, successor);
        return applied(successorId + 1, next, List.of(successorId));
    }

    private Outcome prune(long id) {
        Segment s = layout.segments().get(id);
        if (s == null) {
            return refused(Refusal.UNKNOWN_SEGMENT, "segment " + id + " is not in the layout at epoch "
                    + layout.epoch());
        }
        if (s.isActive()) {
            return refused(Refusal.SEGMENT_ACTIVE, "segment " + s.descriptor() + " is active and cannot be pruned");
        }
        Map<Long, Segment> next = copy();
        next.remove(id);
        for (Segment other : layout.segments().values()) {
            if (other.parentIds().contains(id) || other.childIds().contains(id)) {
                next.put(other.id(), other.without(id));
            }
        }
        return applied(layout.nextSegmentId(), next, List.of());
    }

    private Map<Long, Segment> copy() {
        return new TreeMap<>(layout.segments());
    }

    private Outcome applied(long nextSegmentId, Map<Long, Segment> segments, List<Long> created) {
        return new Outcome.Applied(layout.with(newEpoch, nextSegmentId, segments), created);
    }

    private static Outcome refused(Refusal reason, String message) {
        return new Outcome.Refused(reason, message);
    }
}
