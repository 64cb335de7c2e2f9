package io.verbatim.model;

import java.util.List;

/** What applying a {@link Mutation} gave: a new layout, or a typed refusal with the old one unchanged. */
public sealed interface Outcome {

    /** @param createdIds the ids of the segments the mutation created, lowest range first */
    record Applied(Layout layout, List<Long> createdIds) implements Outcome {
        public Applied {
            createdIds = List.copyOf(createdIds);
        }
    }

    /** @param message names the segment, epoch or value that was wrong */
    record Refused(Refusal reason, String message) implements Outcome {
    }

    /** Why a mutation was refused. */
    enum Refusal {
        /** The layout moved on since the caller read it (compare-and-set failed). */
        STALE_EPOCH,
        UNKNOWN_SEGMENT,
        SEGMENT_SEALED,
        /** Only a sealed segment can be pruned. */
        SEGMENT_ACTIVE,
        /** The boundary does not cut the segment's range (or the range is a single hash). */
        BOUNDARY_OUTSIDE_RANGE,
        NOT_ADJACENT,
        NOT_SIBLINGS,
        SAME_BUCKET_COUNT,
        INVALID_BUCKET_COUNT,
        /** The change would take the layout (or its join with the peers') past an effective cap. */
        EXCEEDS_CAPS,
        /** A new controller leader defers its own changes until it holds every peer's state (PIP-495). */
        DEFERRED,
        /** A replicated topic lowers a bucket count only as a cold mark, once every cluster issued it. */
        LOWERS_BUCKETS
    }

    /** The new layout, or an {@link IllegalStateException} carrying the refusal's message. */
    default Layout layoutOrThrow() {
        if (this instanceof Applied applied) {
            return applied.layout();
        }
        Refused refused = (Refused) this;
        throw new IllegalStateException(refused.reason() + ": " + refused.message());
    }
}
