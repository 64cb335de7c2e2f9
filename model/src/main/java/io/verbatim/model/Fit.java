package io.verbatim.model;

/**
 * Where a replicated entry can go: verbatim to one destination segment, or through the slow path.
 * PIP-495's rule: verbatim to {@code D} iff {@code D} is active, {@code D.range} covers the source
 * segment's range, and the entry's stamp lies in one bucket of {@code D}.
 */
public sealed interface Fit {

    /** Forward the raw entry, stamped, to {@code destination}. */
    record Verbatim(Segment destination) implements Fit {
    }

    /** Decompress, regroup by destination segment and bucket, and re-serialize. */
    record Rebatch(Reason reason) implements Fit {
    }

    /** Why an entry cannot go verbatim. */
    enum Reason {
        /** A legacy entry without {@code entry_hash_min/max}. */
        UNSTAMPED,
        /** No active destination segment covers the whole source range (the destination is finer). */
        SEGMENT_STRADDLE,
        /** The stamp crosses a bucket boundary of the covering destination segment. */
        BUCKET_STRADDLE,
        /**
         * An end-to-end encrypted batch that does not fit. It cannot be split either: PIP-486 forbids
         * encrypted batches on scalable topics, so this only comes from a non-conforming producer and
         * the slow path must report it rather than decrypt.
         */
        ENCRYPTED_BATCH
    }

    /**
     * Classifies one entry read from a segment with range {@code source} against the destination's
     * latest layout. Pure: the same inputs give the same answer.
     */
    static Fit classify(HashRange source, EntryFacts entry, Layout destination) {
        return FitRules.classify(source, entry, destination);
    }
}
