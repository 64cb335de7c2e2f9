package io.verbatim.pipeline;

import io.verbatim.model.entry.SourcePosition;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;

/**
 * When one segment's replication last moved, for status: it moves when it acknowledges an entry, and when new
 * work reaches it after it had acknowledged everything it read (an entry written to an idle replicator starts
 * the clock there, not at its previous acknowledgement). Entries read again after a rewind are not new work: a
 * replicator that reconnects and re-sends without getting anything acknowledged does not move. Kept across the
 * restarts of a segment's replicator; one writer per event kind (the cursor's reads, the acknowledgements), so
 * a race costs at most a moment of the clock.
 */
final class Progress {
    private volatile @Nullable SourcePosition highestRead;
    private volatile @Nullable SourcePosition highestAcknowledged;
    private volatile long movedAtNanos;

    Progress(long nowNanos) {
        this.movedAtNanos = nowNanos;
    }

    /** An entry was read from the cursor; the clock is read only when it starts new work. */
    void read(SourcePosition position, LongSupplier nowNanos) {
        SourcePosition read = highestRead;
        if (read != null && position.compareTo(read) <= 0) {
            return; // read again after a rewind
        }
        SourcePosition acknowledged = highestAcknowledged;
        if (read == null || acknowledged != null && acknowledged.compareTo(read) >= 0) {
            movedAtNanos = nowNanos.getAsLong(); // it had nothing left to send: new work starts now
        }
        highestRead = position;
    }

    /** An entry was acknowledged: the replicator moved. */
    void acknowledged(SourcePosition position, long nowNanos) {
        highestAcknowledged = position;
        movedAtNanos = nowNanos;
    }

    /** How long it has not moved while {@code backlog} entries wait; 0 without backlog. */
    long stalledNanos(long nowNanos, long backlog) {
        return backlog > 0 ? Math.max(0, nowNanos - movedAtNanos) : 0;
    }
}
