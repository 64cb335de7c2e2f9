package io.verbatim.pipeline;

import io.verbatim.model.entry.SourcePosition;
import io.verbatim.pipeline.RemoteException.Kind;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * The destination side of one (remote segment, replicator producer) pair, and its one decision:
 * {@link #admit} an arriving entry. Pure: a value in, an {@link Admission} carrying the next value out,
 * so every storage (the in-memory cluster, a Pulsar broker's adapter) applies the same rules.
 *
 * <p>Deduplication is Pulsar's V2 rule on the source position {@code (ledgerId, entryId, part)}: a
 * position at or below the highest persisted one is a duplicate; at or below the highest pushed
 * (accepted, not yet persisted) one, the answer is unknown and the sender must retry. A session is a
 * FIFO channel: each send carries its sequence number in the session, and once the destination sees a
 * gap, or refuses a send, it refuses the rest of the session, from its first send on. So an entry can
 * never be persisted behind an earlier entry of the same session that was lost, and the re-sent
 * earlier entry can never be mistaken for a duplicate (Pulsar's silent-loss hole #26113). A newer
 * session fences older ones.
 *
 * <p>A position implausibly far past the highest one taken ({@link #MAX_LEDGER_JUMP} ledgers or
 * {@link #MAX_ENTRY_JUMP} entries, counted from {@code 0:0} for a pair that has taken nothing) is refused: one such
 * entry would make every later real entry of the pair a duplicate, for good. Entries are counted by the million per
 * day at most; ledger ids by the million too, or, on the embedded storage, from its clock (2^10 per millisecond since
 * 2020, about 2^48 in 2027 and 2^52 past 2150), so a real source comes nowhere near either.
 *
 * @param pushed the highest position accepted for storing, if any
 * @param persisted the highest position stored, if any; never above {@code pushed}
 * @param session the newest session seen, -1 before the first
 * @param expectedSequence the sequence number the next send of {@code session} must carry
 * @param poisoned whether {@code session} lost an entry: the rest of it is refused
 */
public record DestinationState(Optional<SourcePosition> pushed, Optional<SourcePosition> persisted, long session,
        long expectedSequence, boolean poisoned) {

    /** How many ledgers a position may be past the highest one taken: 2^52. */
    public static final long MAX_LEDGER_JUMP = 1L << 52;
    /** How many entries of one ledger a position may be past the highest one taken: 2^40. */
    public static final long MAX_ENTRY_JUMP = 1L << 40;

    /** A pair that has seen nothing. */
    public static final DestinationState EMPTY = new DestinationState(Optional.empty(), Optional.empty(), -1, 0,
            false);

    public DestinationState {
        if (persisted.isPresent() && (pushed.isEmpty() || pushed.get().compareTo(persisted.get()) < 0)) {
            throw new IllegalArgumentException("persisted " + persisted.get() + " is above pushed "
                    + pushed.orElse(null));
        }
        if (session < -1 || expectedSequence < 0) {
            throw new IllegalArgumentException("session " + session + " and expectedSequence " + expectedSequence
                    + " cannot be negative (session -1: none yet)");
        }
    }

    /**
     * Decides one arriving send.
     *
     * @param session the id of the sender's session; a newer session has a higher id
     * @param sequence the send's number in its session, from 0
     * @param position the source position the entry is stamped with
     * @param segmentSealed whether the destination segment takes no new entries
     * @param sessionOrder whether to check sessions; without, this is Pulsar's V2 deduplication alone,
     *        with the #26113 hole (kept to show the hole in tests)
     */
    public Admission admit(long session, long sequence, SourcePosition position, boolean segmentSealed,
            boolean sessionOrder) {
        DestinationState current = this;
        if (sessionOrder) {
            if (session < this.session) {
                return refused(Kind.OUT_OF_ORDER, "session " + session + " was fenced by session " + this.session);
            }
            if (session > this.session) {
                current = new DestinationState(pushed, persisted, session, 0, false);
                if (sequence != 0) {
                    return current.poisonedBy(Kind.OUT_OF_ORDER, "session " + session + " starts at sequence "
                            + sequence + " (" + position + ")");
                }
            }
            if (current.poisoned) {
                return current.refused(Kind.OUT_OF_ORDER, "session " + session + " already lost an entry");
            }
            if (sequence != current.expectedSequence) {
                return current.poisonedBy(Kind.OUT_OF_ORDER, "session " + session + " expected sequence "
                        + current.expectedSequence + ", got " + sequence + " (" + position + ")");
            }
        }
        if (persisted.isPresent() && position.compareTo(persisted.get()) <= 0) {
            return new Admission.Duplicate(current.nextInSession());
        }
        if (pushed.isPresent() && position.compareTo(pushed.get()) <= 0) {
            return current.poisonedBy(Kind.IN_FLIGHT, position + " is pushed but not yet persisted");
        }
        String implausible = implausible(pushed.orElse(null), position);
        if (implausible != null) {
            return current.poisonedBy(Kind.IMPLAUSIBLE, implausible);
        }
        if (segmentSealed) {
            return current.poisonedBy(Kind.SEALED, "segment is sealed");
        }
        return new Admission.Append(new DestinationState(Optional.of(position), persisted, current.session,
                current.expectedSequence + 1, current.poisoned));
    }

    /**
     * Why {@code position} cannot follow {@code highest} (the highest position taken, null for none), or null
     * when it can.
     */
    static @Nullable String implausible(@Nullable SourcePosition highest, SourcePosition position) {
        SourcePosition from = highest != null ? highest : SourcePosition.of(0, 0);
        String after = highest != null ? "the highest position stored, " + highest : "0:0 (nothing stored yet)";
        if (position.ledgerId() - from.ledgerId() > MAX_LEDGER_JUMP) {
            return "source position " + position + " is implausibly far past " + after + ": more than 2^52 ledgers ahead";
        }
        long entriesAhead = position.ledgerId() == from.ledgerId() ? position.entryId() - from.entryId()
                : position.entryId();
        if (entriesAhead > MAX_ENTRY_JUMP) {
            return "source position " + position + " is implausibly far past " + after + ": more than 2^40 entries ahead"
                    + " in its ledger";
        }
        return null;
    }

    /**
     * The state after a restart that recovered {@code position} as stored from {@code session}: nothing is in
     * flight any more, and every session of before is over.
     */
    public DestinationState recovered(long session, SourcePosition position) {
        SourcePosition highest = persisted.isEmpty() || position.compareTo(persisted.get()) > 0 ? position
                : persisted.get();
        return new DestinationState(Optional.of(highest), Optional.of(highest), Math.max(this.session, session), 0,
                false);
    }

    /** {@code position} is stored. */
    public DestinationState persisted(SourcePosition position) {
        SourcePosition highest = persisted.isEmpty() || position.compareTo(persisted.get()) > 0 ? position
                : persisted.get();
        SourcePosition highestPushed = pushed.isEmpty() || highest.compareTo(pushed.get()) > 0 ? highest : pushed.get();
        return new DestinationState(Optional.of(highestPushed), Optional.of(highest), session, expectedSequence,
                poisoned);
    }

    /** Refuses the rest of {@code session} (one of its sends was rejected on arrival); no other session. */
    public DestinationState poison(long session) {
        return session != this.session ? this : new DestinationState(pushed, persisted, session, expectedSequence,
                true);
    }

    /**
     * The state a split or rebucket child starts with. Every key the child can receive went to the parent
     * before, and the parent took each entry's share in order, so every entry below the parent's
     * watermark is in the parent and must not be stored again. The watermark's own entry is inherited only
     * when whole: a part index means nothing to the child, whose buckets may group that entry's messages
     * differently. (A merge child inherits nothing: its two parents' watermarks say nothing of each other's
     * keys.)
     */
    public DestinationState inheritedByChild() {
        Optional<SourcePosition> inherited = persisted;
        if (inherited.isPresent() && !inherited.get().isWhole()) {
            inherited = beforeEntryOf(inherited.get());
        }
        return new DestinationState(inherited, inherited, -1, 0, false);
    }

    /**
     * The highest whole position below every part of {@code p}'s entry: its ledger's entry before, or past every
     * entry of the ledger before when {@code p} is its ledger's first.
     */
    private static Optional<SourcePosition> beforeEntryOf(SourcePosition p) {
        if (p.entryId() > 0) {
            return Optional.of(SourcePosition.of(p.ledgerId(), p.entryId() - 1));
        }
        return p.ledgerId() == 0 ? Optional.empty() : Optional.of(SourcePosition.of(p.ledgerId() - 1, Long.MAX_VALUE));
    }

    private DestinationState nextInSession() {
        return new DestinationState(pushed, persisted, session, expectedSequence + 1, poisoned);
    }

    private Admission refused(Kind kind, String message) {
        return new Admission.Refused(kind, message, this);
    }

    private Admission poisonedBy(Kind kind, String message) {
        return new Admission.Refused(kind, message, new DestinationState(pushed, persisted, session, expectedSequence,
                true));
    }
}
