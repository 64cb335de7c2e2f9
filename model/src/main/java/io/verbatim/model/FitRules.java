package io.verbatim.model;

/**
 * The fit rules in the order they are tried. Beyond PIP-495's segment-and-bucket test, a single
 * message that carries its routing key in the clear is placed by that key (PIP-495 does so for
 * end-to-end encrypted entries; for a plain single message it is just as exact and spares the slow
 * path a decompression that would give back the same one message).
 */
final class FitRules {
    private FitRules() {
    }

    static Fit classify(HashRange source, EntryFacts entry, Layout destination) {
        if (entry.singleMessage() && (entry.encrypted() || entry.isStamped())) {
            // One message is one hashB, so it is in one bucket of any segment.
            int segmentHash = entry.outerKey().map(KeyHash::segmentHash).orElse(source.start());
            return new Fit.Verbatim(destination.activeSegmentFor(segmentHash));
        }
        if (!entry.isStamped()) {
            return new Fit.Rebatch(entry.encrypted() ? Fit.Reason.ENCRYPTED_BATCH : Fit.Reason.UNSTAMPED);
        }
        Segment covering = destination.activeSegmentFor(source.start());
        // Messages without a routing key may go to any segment (producers send them round-robin).
        if (!entry.unkeyed() && !covering.range().contains(source)) {
            return straddle(entry, Fit.Reason.SEGMENT_STRADDLE);
        }
        if (!covering.buckets().holdsInOneBucket(entry.stamp().orElseThrow().asRange())) {
            return straddle(entry, Fit.Reason.BUCKET_STRADDLE);
        }
        return new Fit.Verbatim(covering);
    }

    private static Fit straddle(EntryFacts entry, Fit.Reason reason) {
        return new Fit.Rebatch(entry.encrypted() ? Fit.Reason.ENCRYPTED_BATCH : reason);
    }
}
