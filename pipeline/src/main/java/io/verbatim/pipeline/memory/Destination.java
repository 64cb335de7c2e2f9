package io.verbatim.pipeline.memory;

import io.verbatim.model.entry.SourcePosition;
import io.verbatim.pipeline.ProducerSession.Receipt;
import io.verbatim.pipeline.RemoteException;
import io.verbatim.pipeline.RemoteException.Kind;

/**
 * The destination side of one (remote segment, replicator producer) pair: deduplication on the source
 * position and the session discipline that closes Pulsar's silent-loss hole (#26113).
 *
 * <p>Deduplication is Pulsar's V2 rule: a position at or below the highest persisted one is a
 * duplicate; at or below the highest pushed (accepted, not yet persisted) one, the answer is unknown and
 * the sender must retry. A session is a FIFO channel: each send carries its sequence number in the
 * session, and once the destination sees a gap, or refuses a send, it refuses the rest of the session.
 * So an entry can never be persisted behind an earlier entry of the same session that was lost, and the
 * re-sent earlier entry can never be mistaken for a duplicate. A newer session fences older ones.
 */
final class Destination {
    private final long segmentId;
    private SourcePosition pushed;
    private SourcePosition persisted;
    private long sessionId = -1;
    private long expectedSequence;
    private boolean poisoned;

    Destination(long segmentId) {
        this.segmentId = segmentId;
    }

    /**
     * Decides one arriving send; on {@code null} the caller must push it (append) and then call
     * {@link #persisted(SourcePosition)}. Without {@code sessionOrder} this is Pulsar's V2 dedup alone,
     * which has the #26113 hole (kept to show the hole in tests).
     */
    synchronized Receipt admit(long session, long sequence, SourcePosition position, boolean segmentSealed,
            boolean sessionOrder) {
        if (sessionOrder) {
            checkSession(session, sequence, position);
        }
        if (persisted != null && position.compareTo(persisted) <= 0) {
            expectedSequence++;
            return Receipt.DUPLICATE;
        }
        if (pushed != null && position.compareTo(pushed) <= 0) {
            poisoned = true;
            throw refuse(Kind.IN_FLIGHT, position + " is pushed but not yet persisted");
        }
        if (segmentSealed) {
            poisoned = true;
            throw refuse(Kind.SEALED, "segment is sealed");
        }
        expectedSequence++;
        pushed = position;
        return null;
    }

    private void checkSession(long session, long sequence, SourcePosition position) {
        if (session < sessionId) {
            throw refuse(Kind.OUT_OF_ORDER, "session " + session + " was fenced by session " + sessionId);
        }
        if (session > sessionId) {
            if (sequence != 0) {
                throw refuse(Kind.OUT_OF_ORDER, "session " + session + " starts at sequence " + sequence);
            }
            sessionId = session;
            expectedSequence = 0;
            poisoned = false;
        }
        if (poisoned) {
            throw refuse(Kind.OUT_OF_ORDER, "session " + session + " already lost an entry");
        }
        if (sequence != expectedSequence) {
            poisoned = true;
            throw refuse(Kind.OUT_OF_ORDER, "session " + session + " expected sequence " + expectedSequence + ", got "
                    + sequence + " (" + position + ")");
        }
    }

    /**
     * The deduplication state a split or rebucket child starts with. Every key the child can receive
     * went to the parent before, and the parent took each entry's share in order, so every entry below
     * the parent's watermark is in the parent and must not be stored again. The watermark's own entry
     * is inherited only when whole: a part index means nothing to the child, whose buckets may group
     * that entry's messages differently. (A merge child inherits nothing: its two parents' watermarks
     * say nothing of each other's keys.)
     */
    synchronized Destination inheritedBy(long childSegmentId) {
        Destination child = new Destination(childSegmentId);
        SourcePosition inherited = persisted;
        if (inherited != null && !inherited.isWhole()) {
            inherited = inherited.entryId() == 0 ? null
                    : SourcePosition.of(inherited.ledgerId(), inherited.entryId() - 1);
        }
        child.pushed = inherited;
        child.persisted = inherited;
        return child;
    }

    synchronized void persisted(SourcePosition position) {
        if (persisted == null || position.compareTo(persisted) > 0) {
            persisted = position;
        }
    }

    /** Refuses the rest of {@code session} (one of its sends was rejected on arrival). */
    synchronized void poison(long session) {
        if (session == sessionId) {
            poisoned = true;
        }
    }

    private RemoteException refuse(Kind kind, String why) {
        return new RemoteException(kind, segmentId, why);
    }
}
