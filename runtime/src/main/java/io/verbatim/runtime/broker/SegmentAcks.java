package io.verbatim.runtime.broker;

import io.verbatim.model.entry.SourcePosition;
import java.util.HashSet;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import org.jspecify.annotations.Nullable;

/**
 * One segment's entries given to its subscription's consumers and not yet acknowledged on its cursor: a cursor
 * acknowledges cumulatively (its mark-delete position), while a segment's entries go to several consumers that
 * take them in their own time. An entry received out of turn waits until every entry before it is received too;
 * then the cursor is acknowledged up to the last of them. Not thread-safe: its subscription holds the lock.
 */
final class SegmentAcks {
    /** Positions dispatched and not yet covered by an acknowledgement, in dispatch (cursor) order. */
    private final TreeSet<SourcePosition> open = new TreeSet<>();
    private final Set<SourcePosition> received = new HashSet<>();
    private @Nullable SourcePosition highest;

    /**
     * Whether {@code p}, read from the cursor, is new: past every entry dispatched so far. A read again from the
     * mark-delete position (after a failed read) gives again what is still with the consumers, or acknowledged and
     * not yet confirmed by the cursor: those are not dispatched twice.
     */
    boolean fresh(SourcePosition p) {
        return highest == null || p.compareTo(highest) > 0;
    }

    /** {@code p}, a {@link #fresh} entry, went into its consumer's queue. */
    void dispatched(SourcePosition p) {
        if (!fresh(p)) {
            throw new IllegalArgumentException("entry " + p + " dispatched after " + highest + ": out of cursor order");
        }
        highest = p;
        open.add(p);
    }

    /**
     * A consumer received {@code p}: the position the cursor may now be acknowledged up to, when receiving it
     * completed a run from the oldest open entry; empty when an earlier entry is still with a consumer, or when
     * {@code p} is not open (received twice, or dispatched before the segment was given up).
     */
    Optional<SourcePosition> received(SourcePosition p) {
        if (!open.contains(p) || !received.add(p)) {
            return Optional.empty();
        }
        SourcePosition upTo = null;
        while (!open.isEmpty() && received.remove(open.first())) {
            upTo = open.pollFirst();
        }
        return Optional.ofNullable(upTo);
    }

    /** Whether {@code p} was dispatched and is not received yet. */
    boolean awaits(SourcePosition p) {
        return open.contains(p) && !received.contains(p);
    }

    /** Entries dispatched and not yet covered by an acknowledgement. */
    int outstanding() {
        return open.size();
    }
}
