package io.verbatim.pulsar;

import io.verbatim.model.entry.SourcePosition;

/**
 * Source positions as a Pulsar broker's replication dedup reads them. The broker takes
 * {@code __MSG_PROP_REPL_SOURCE_POSITION} as exactly two numbers, {@code ledgerId:entryId}, and drops
 * anything at or below the highest it persisted for the producer. The slow path sends several parts of
 * one entry, so the entry id carries the part in its low 16 bits: part {@code p} of entry {@code e} is
 * {@code e << 16 | p} and the whole entry {@code e << 16 | 0xffff}. That keeps Verbatim's order (a whole
 * entry after the parts of the same entry, as {@link SourcePosition#compareTo} has it), and it decodes.
 */
public final class WirePositions {
    static final int PART_BITS = 16;
    static final int WHOLE = (1 << PART_BITS) - 1;
    /** The largest entry id whose wire form still fits a long. */
    static final long MAX_ENTRY_ID = Long.MAX_VALUE >>> PART_BITS;

    private WirePositions() {
    }

    /** The position the broker's dedup sees for {@code position}. */
    public static SourcePosition encode(SourcePosition position) {
        if (position.entryId() > MAX_ENTRY_ID) {
            throw new IllegalArgumentException("entry id " + position.entryId() + " of " + position
                    + " is above " + MAX_ENTRY_ID + ", the largest a Pulsar dedup position can carry with a part");
        }
        int low = position.isWhole() ? WHOLE : position.part();
        if (!position.isWhole() && low >= WHOLE) {
            throw new IllegalArgumentException("part " + position.part() + " of " + position + " is above "
                    + (WHOLE - 1) + ", the most parts an entry may have on Pulsar");
        }
        return SourcePosition.of(position.ledgerId(), position.entryId() << PART_BITS | low);
    }

    /** The source position {@link #encode} made {@code wire} from. */
    public static SourcePosition decode(SourcePosition wire) {
        long low = wire.entryId() & WHOLE;
        SourcePosition whole = SourcePosition.of(wire.ledgerId(), wire.entryId() >>> PART_BITS);
        return low == WHOLE ? whole : whole.withPart((int) low);
    }
}
