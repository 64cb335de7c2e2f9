package io.verbatim.pipeline;

import io.verbatim.model.entry.Entry;
import io.verbatim.model.entry.SourcePosition;
import java.util.List;

/**
 * The work one stored entry turned into: what to send where, or why nothing is sent. The cursor moves
 * past the entry only once every send of its unit is acknowledged.
 *
 * @param position the stored entry's position
 * @param path how it travels
 * @param sends the stamped entries to send, in order; empty for a skipped entry
 * @param bytes the stored entry's size, for the metrics
 * @param epoch the remote layout epoch the sends were planned against, or -1 when nothing is sent
 */
record Unit(SourcePosition position, Path path, List<Outgoing> sends, long bytes, long epoch) {

    enum Path {
        VERBATIM,
        REBATCHED,
        /** Came from another cluster: never replicated again. */
        SKIPPED_REPLICATED,
        /** Older than the message TTL. */
        SKIPPED_EXPIRED,
        /** Cannot be read or cannot be placed: counted and logged, never silently. */
        SKIPPED_UNROUTABLE
    }

    /** One stamped entry for one remote segment. */
    record Outgoing(long segmentId, Entry entry, SourcePosition position) {
    }

    static Unit skipped(SourcePosition position, Path path, long bytes) {
        return new Unit(position, path, List.of(), bytes, -1);
    }
}
