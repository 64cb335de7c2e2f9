package io.verbatim.exchange;

import io.verbatim.model.HashRange;
import io.verbatim.model.Outcome;

/**
 * What an operator's rebucket of a segment came to, decided by the controller on the stored layout (see {@link
 * Controller#rebucketOrMarkCold}): a higher count is the cluster's own change, applied now or refused ({@link Now}); a
 * lower count of an active segment of a replicated topic is a cold mark on the segment's range ({@link MarkedCold}),
 * lowered on every cluster once each issued it or holds no more there.
 */
public sealed interface Rebucket {

    /** A rollover to a higher count, or a refusal: what {@link Controller#rebucket} answers. */
    record Now(Outcome outcome) implements Rebucket {
    }

    /** A lower count: {@code range} is marked to be lowered to {@code bucketCount}, nothing changed yet. */
    record MarkedCold(HashRange range, int bucketCount) implements Rebucket {
    }
}
