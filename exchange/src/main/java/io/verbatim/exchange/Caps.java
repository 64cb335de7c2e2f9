package io.verbatim.exchange;

import io.verbatim.model.Buckets;
import java.util.Collection;

/**
 * A cluster's layout caps. The effective cap of a topic is the minimum over the cluster and its peers
 * (PIP-495), so no cluster produces a layout a peer cannot follow.
 */
public record Caps(int maxSegments, int maxEntryBucketsPerSegment) {
    /** Pulsar's defaults: {@code scalableTopicMaxSegments} 64, {@code scalableTopicEntryBucketMaxPerSegment} 1024. */
    public static final Caps PULSAR_DEFAULTS = new Caps(64, 1024);

    public Caps {
        if (maxSegments < 1) {
            throw new IllegalArgumentException("caps.maxSegments is " + maxSegments + ": must be at least 1");
        }
        if (maxEntryBucketsPerSegment < 1 || maxEntryBucketsPerSegment > Buckets.MAX_COUNT) {
            throw new IllegalArgumentException("caps.maxEntryBucketsPerSegment is " + maxEntryBucketsPerSegment
                    + ": must be within 1.." + Buckets.MAX_COUNT);
        }
    }

    /** The field-by-field minimum of {@code caps}. */
    public static Caps min(Caps local, Collection<Caps> others) {
        int segments = local.maxSegments;
        int buckets = local.maxEntryBucketsPerSegment;
        for (Caps c : others) {
            segments = Math.min(segments, c.maxSegments);
            buckets = Math.min(buckets, c.maxEntryBucketsPerSegment);
        }
        return new Caps(segments, buckets);
    }
}
