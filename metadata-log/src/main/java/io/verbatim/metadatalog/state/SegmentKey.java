package io.verbatim.metadatalog.state;

import java.util.Comparator;

/** One segment of one topic: what a broker member owns. Sorted by topic, then segment id. */
public record SegmentKey(String topic, long segment) implements Comparable<SegmentKey> {
    private static final Comparator<SegmentKey> ORDER =
            Comparator.comparing(SegmentKey::topic).thenComparingLong(SegmentKey::segment);

    public SegmentKey {
        if (topic == null || topic.isEmpty()) {
            throw new IllegalArgumentException("a segment needs its topic");
        }
        if (segment < 0) {
            throw new IllegalArgumentException("segment " + segment + " of " + topic + " is negative");
        }
    }

    @Override
    public int compareTo(SegmentKey other) {
        return ORDER.compare(this, other);
    }

    @Override
    public String toString() {
        return topic + "#" + segment;
    }
}
