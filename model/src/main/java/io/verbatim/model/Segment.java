package io.verbatim.model;

import java.util.List;

/**
 * One segment of a scalable topic's layout DAG, as Pulsar's {@code SegmentInfo}.
 *
 * @param id unique within the topic, assigned from the layout's {@code nextSegmentId}
 * @param range the inclusive {@code hashB}-independent routing range (high 16 bits of the key hash)
 * @param state active or sealed
 * @param parentIds empty for roots; one parent for a split or rebucket child, two for a merge
 * @param childIds empty while active
 * @param createdAtEpoch the layout epoch that created it (0 for initial segments)
 * @param sealedAtEpoch the epoch that sealed it, {@code -1} while active
 * @param createdAtMs wall-clock creation time, passed in by whoever mutated the layout
 * @param sealedAtMs wall-clock seal time, {@code -1} while active
 * @param buckets the entry buckets, immutable for the segment's life
 */
public record Segment(
        long id,
        HashRange range,
        SegmentState state,
        List<Long> parentIds,
        List<Long> childIds,
        long createdAtEpoch,
        long sealedAtEpoch,
        long createdAtMs,
        long sealedAtMs,
        Buckets buckets) {

    public Segment {
        if (id < 0) {
            throw new IllegalArgumentException("segment id " + id + " is negative");
        }
        if (range == null || state == null || buckets == null) {
            throw new IllegalArgumentException("segment " + id + " needs a range, a state and buckets");
        }
        parentIds = List.copyOf(parentIds);
        childIds = List.copyOf(childIds);
        if (state == SegmentState.ACTIVE && (sealedAtEpoch != -1 || !childIds.isEmpty())) {
            throw new IllegalArgumentException("active segment " + id + " has a seal epoch or children");
        }
        if (state == SegmentState.SEALED && sealedAtEpoch < createdAtEpoch) {
            throw new IllegalArgumentException("segment " + id + " sealed at epoch " + sealedAtEpoch
                    + " before its creation at " + createdAtEpoch);
        }
    }

    /** A new active segment. */
    public static Segment active(long id, HashRange range, List<Long> parentIds, long epoch, long nowMs,
            Buckets buckets) {
        return new Segment(id, range, SegmentState.ACTIVE, parentIds, List.of(), epoch, -1, nowMs, -1, buckets);
    }

    /** This segment sealed at {@code epoch} with its successors. */
    public Segment sealed(long epoch, long nowMs, List<Long> children) {
        if (!isActive()) {
            throw new IllegalStateException("segment " + id + " is already sealed");
        }
        return new Segment(id, range, SegmentState.SEALED, parentIds, children, createdAtEpoch, epoch, createdAtMs,
                nowMs, buckets);
    }

    /** This segment with {@code neighbour} dropped from its parents and children (after a prune). */
    Segment without(long neighbour) {
        return new Segment(id, range, state,
                parentIds.stream().filter(p -> p != neighbour).toList(),
                childIds.stream().filter(c -> c != neighbour).toList(),
                createdAtEpoch, sealedAtEpoch, createdAtMs, sealedAtMs, buckets);
    }

    public boolean isActive() {
        return state == SegmentState.ACTIVE;
    }

    public boolean isSealed() {
        return state == SegmentState.SEALED;
    }

    public boolean isRoot() {
        return parentIds.isEmpty();
    }

    /** Pulsar's segment descriptor {@code %04x-%04x-%d}, e.g. {@code 0000-7fff-1}. */
    public String descriptor() {
        return range.toHexString() + "-" + id;
    }

    /**
     * The segment's topic name for a parent {@code topic://tenant/ns/name}:
     * {@code segment://tenant/ns/name/<descriptor>}.
     */
    public String topicName(String parentTopic) {
        String prefix = "topic://";
        if (!parentTopic.startsWith(prefix) || parentTopic.length() == prefix.length()) {
            throw new IllegalArgumentException("parent topic '" + parentTopic + "' is not a topic:// name");
        }
        return "segment://" + parentTopic.substring(prefix.length()) + "/" + descriptor();
    }
}
