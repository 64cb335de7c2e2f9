package io.verbatim.metadatalog.state;

import io.verbatim.model.Layout;

/** What applying one layout command did: the same on every member. */
sealed interface LayoutOutcome {

    /** The layout is now the topic's. */
    record Stored(Layout layout) implements LayoutOutcome {
    }

    /** The topic is at {@code actualEpoch}, not at the expected one ({@code -1}: it already existed on create). */
    record Stale(long expectedEpoch, long actualEpoch) implements LayoutOutcome {
    }

    /** The command cannot apply: no such topic, an unreadable layout, an epoch that does not move forward. */
    record Invalid(String reason) implements LayoutOutcome {
    }
}
