package io.verbatim.model.entry;

import io.verbatim.model.entry.EntryFormatException.Problem;
import org.jspecify.annotations.Nullable;

/**
 * Where a replicated entry came from: the source entry's ledger and entry id, plus a part index when
 * the slow path split the entry. Destinations deduplicate per replicator producer by comparing
 * positions lexicographically as {@code (ledgerId, entryId, part)}.
 *
 * <p>A whole entry ({@link #WHOLE}) orders after every part of the same entry: once the whole entry
 * is persisted, any re-sent part of it is a duplicate.
 *
 * @param part the part index, {@code 0..}, or {@link #WHOLE}
 */
public record SourcePosition(long ledgerId, long entryId, int part) implements Comparable<SourcePosition> {
    public static final int WHOLE = -1;

    public SourcePosition {
        if (ledgerId < 0 || entryId < 0) {
            throw new IllegalArgumentException("source position " + ledgerId + ":" + entryId + " is negative");
        }
        if (part < WHOLE) {
            throw new IllegalArgumentException("part index " + part + " is negative");
        }
    }

    public static SourcePosition of(long ledgerId, long entryId) {
        return new SourcePosition(ledgerId, entryId, WHOLE);
    }

    public SourcePosition withPart(int part) {
        return new SourcePosition(ledgerId, entryId, part);
    }

    public boolean isWhole() {
        return part == WHOLE;
    }

    /**
     * The property value: {@code ledgerId:entryId} (Pulsar's format) for a whole entry,
     * {@code ledgerId:entryId:part} for a part.
     */
    public String toProperty() {
        return isWhole() ? ledgerId + ":" + entryId : ledgerId + ":" + entryId + ":" + part;
    }

    /** Parses {@link #toProperty()}. */
    public static SourcePosition parse(String value) {
        String[] parts = value.split(":", -1);
        if (parts.length < 2 || parts.length > 3) {
            throw badPosition(value, null);
        }
        try {
            long ledger = Long.parseLong(parts[0]);
            long entry = Long.parseLong(parts[1]);
            int part = parts.length == 3 ? Integer.parseInt(parts[2]) : WHOLE;
            if (parts.length == 3 && part < 0) {
                throw badPosition(value, null);
            }
            return new SourcePosition(ledger, entry, part);
        } catch (IllegalArgumentException e) {
            throw badPosition(value, e);
        }
    }

    private static EntryFormatException badPosition(String value, @Nullable Throwable cause) {
        return new EntryFormatException(Problem.BAD_SOURCE_POSITION,
                "source position '" + value + "' is not ledgerId:entryId[:part] with non-negative numbers", cause);
    }

    @Override
    public int compareTo(SourcePosition o) {
        int c = Long.compare(ledgerId, o.ledgerId);
        if (c == 0) {
            c = Long.compare(entryId, o.entryId);
        }
        return c != 0 ? c : Integer.compare(partRank(), o.partRank());
    }

    private int partRank() {
        return isWhole() ? Integer.MAX_VALUE : part;
    }

    @Override
    public String toString() {
        return toProperty();
    }
}
