package io.verbatim.model;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * A scalable topic's layout on one cluster: an immutable DAG of segments with a monotonic epoch, as
 * Pulsar's {@code SegmentLayout}. Its active segments tile the ring {@code 0..0xFFFF} exactly once;
 * every factory checks that, and every mutation keeps it.
 */
public final class Layout {
    private final long epoch;
    private final long nextSegmentId;
    private final Map<Long, Segment> segments;
    private final List<Segment> active;
    private final int[] activeStarts;

    private Layout(long epoch, long nextSegmentId, Map<Long, Segment> segments) {
        this.epoch = epoch;
        this.nextSegmentId = nextSegmentId;
        this.segments = Collections.unmodifiableMap(segments);
        List<Segment> activeSorted = new ArrayList<>();
        for (Segment s : segments.values()) {
            if (s.isActive()) {
                activeSorted.add(s);
            }
        }
        activeSorted.sort(Comparator.comparing(Segment::range));
        this.active = List.copyOf(activeSorted);
        this.activeStarts = activeSorted.stream().mapToInt(s -> s.range().start()).toArray();
    }

    /**
     * Pulsar's initial layout: {@code segmentCount} equal ranges (the last takes the remainder), ids
     * {@code 0..n-1}, epoch 0, each with {@code max(1, bucketBudget / n)} buckets.
     */
    public static Layout initial(int segmentCount, int bucketBudget, long nowMs) {
        if (segmentCount < 1 || segmentCount > 65536) {
            throw new IllegalArgumentException("initial segment count " + segmentCount + " is outside 1..65536");
        }
        if (bucketBudget < 1) {
            throw new IllegalArgumentException("bucket budget " + bucketBudget + " is below 1");
        }
        int rangeSize = 65536 / segmentCount;
        Buckets buckets = Buckets.forBudget(bucketBudget, segmentCount);
        Map<Long, Segment> segments = new TreeMap<>();
        for (int i = 0; i < segmentCount; i++) {
            int start = i * rangeSize;
            int end = i == segmentCount - 1 ? HashRange.MAX_HASH : start + rangeSize - 1;
            segments.put((long) i, Segment.active(i, HashRange.of(start, end), List.of(), 0, nowMs, buckets));
        }
        return new Layout(0, segmentCount, segments);
    }

    /** A layout from its parts, checked: ids below {@code nextSegmentId}, known parents and children, a tiling. */
    public static Layout of(long epoch, long nextSegmentId, Collection<Segment> segments) {
        Map<Long, Segment> byId = new TreeMap<>();
        for (Segment s : segments) {
            if (byId.put(s.id(), s) != null) {
                throw new IllegalArgumentException("segment id " + s.id() + " appears twice");
            }
        }
        return of(epoch, nextSegmentId, byId, true);
    }

    /**
     * A layout over {@code byId} (taken, not copied), checked for a tiling always and for its ids and
     * references when {@code checkReferences} (a mutator's own output keeps them by construction).
     */
    static Layout of(long epoch, long nextSegmentId, Map<Long, Segment> byId, boolean checkReferences) {
        if (epoch < 0) {
            throw new IllegalArgumentException("layout epoch " + epoch + " is negative");
        }
        if (checkReferences) {
            for (Segment s : byId.values()) {
                if (s.id() >= nextSegmentId) {
                    throw new IllegalArgumentException("segment " + s.id() + " is not below nextSegmentId "
                            + nextSegmentId);
                }
                for (long p : s.parentIds()) {
                    requireKnown(byId, p, "parent", s);
                }
                for (long c : s.childIds()) {
                    requireKnown(byId, c, "child", s);
                }
            }
        }
        Layout layout = new Layout(epoch, nextSegmentId, byId);
        Tiling.require(layout.active);
        return layout;
    }

    private static void requireKnown(Map<Long, Segment> byId, long ref, String role, Segment of) {
        if (!byId.containsKey(ref)) {
            throw new IllegalArgumentException("segment " + of.id() + " names " + role + " " + ref
                    + ", which is not in the layout");
        }
    }

    public long epoch() {
        return epoch;
    }

    public long nextSegmentId() {
        return nextSegmentId;
    }

    /** Every segment, active and sealed, by id. */
    public Map<Long, Segment> segments() {
        return segments;
    }

    public Optional<Segment> segment(long id) {
        return Optional.ofNullable(segments.get(id));
    }

    /** The active segments in ring order; together they tile {@code 0..0xFFFF}. */
    public List<Segment> activeSegments() {
        return active;
    }

    /** The active segment whose range holds {@code segmentHash} (always exactly one). */
    public Segment activeSegmentFor(int segmentHash) {
        if (segmentHash < 0 || segmentHash > HashRange.MAX_HASH) {
            throw new IllegalArgumentException("segment hash " + segmentHash + " is outside the ring 0..65535");
        }
        int i = Arrays.binarySearch(activeStarts, segmentHash);
        return active.get(i >= 0 ? i : -i - 2);
    }

    /**
     * Applies {@code mutation} if the layout is still at {@code expectedEpoch}. Never throws for a
     * mutation that does not fit the layout: that is a {@link Outcome.Refused}.
     *
     * @param nowMs the wall-clock time stamped on created and sealed segments
     */
    public Outcome apply(Mutation mutation, long expectedEpoch, long nowMs) {
        if (expectedEpoch != epoch) {
            return new Outcome.Refused(Outcome.Refusal.STALE_EPOCH,
                    "layout is at epoch " + epoch + ", not the expected " + expectedEpoch);
        }
        return new Mutator(this, nowMs).applyAll(List.of(mutation));
    }

    /**
     * Applies {@code mutations} in order if the layout is still at {@code expectedEpoch}, each one at the
     * epoch the previous one produced, as one change: the result, or the first refusal (and nothing
     * applied). Costs the layout's size once, however many mutations.
     */
    public Outcome applyAll(List<Mutation> mutations, long expectedEpoch, long nowMs) {
        if (expectedEpoch != epoch) {
            return new Outcome.Refused(Outcome.Refusal.STALE_EPOCH,
                    "layout is at epoch " + epoch + ", not the expected " + expectedEpoch);
        }
        return new Mutator(this, nowMs).applyAll(mutations);
    }

    /**
     * True when the two segments are the two halves of one split: together they are a node of the
     * midpoint-split tree, cut at its midpoint; or each traces back, through same-range rebucket
     * rollovers, to a child of the same split parent whose range they make up together (an
     * explicit-boundary split). Merging only such pairs keeps layouts that started equal nesting.
     */
    public boolean areSiblings(long firstId, long secondId) {
        return Siblings.are(segments, firstId, secondId);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Layout other && epoch == other.epoch && nextSegmentId == other.nextSegmentId
                && segments.equals(other.segments);
    }

    @Override
    public int hashCode() {
        return Long.hashCode(epoch) * 31 + segments.hashCode();
    }

    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder("Layout[epoch=").append(epoch).append(", active=");
        for (Segment s : active) {
            sb.append(' ').append(s.descriptor()).append("/N").append(s.buckets().count());
        }
        return sb.append(']').toString();
    }
}
