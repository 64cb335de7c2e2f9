package io.verbatim.model;

/**
 * PIP-486's entry stamp: the smallest and largest {@code hashB} actually present in an entry
 * ({@code entry_hash_min} / {@code entry_hash_max}, inclusive). A producer stamps entries that lie in
 * one bucket of the segment they were written to.
 */
public record Stamp(int hashMin, int hashMax) {
    /**
     * The stamp as an outer-metadata property, {@code <min>-<max>} in decimal, for Pulsar 4.0: its client
     * and broker know no fields 33/34 and drop them when they re-encode an entry's metadata, but they keep
     * properties. Verbatim writes both on Pulsar and reads the fields first.
     */
    public static final String PROPERTY = "__PIP486_ENTRY_HASH";

    public Stamp {
        if (hashMin < 0 || hashMin > HashRange.MAX_HASH || hashMax < 0 || hashMax > HashRange.MAX_HASH) {
            throw new IllegalArgumentException("entry stamp [" + hashMin + ", " + hashMax
                    + "] is outside the hashB ring 0..65535");
        }
        if (hashMax < hashMin) {
            throw new IllegalArgumentException("entry stamp max " + hashMax + " is below its min " + hashMin);
        }
    }

    /** The stamp of a single message. */
    public static Stamp of(int hashB) {
        return new Stamp(hashB, hashB);
    }

    /** This stamp widened to hold {@code hashB}. */
    public Stamp including(int hashB) {
        return new Stamp(Math.min(hashMin, hashB), Math.max(hashMax, hashB));
    }

    /** The {@link #PROPERTY} value. */
    public String toProperty() {
        return hashMin + "-" + hashMax;
    }

    /**
     * Parses a {@link #PROPERTY} value.
     *
     * @throws IllegalArgumentException naming the value when it is not {@code <min>-<max>} on the ring
     */
    public static Stamp parseProperty(String value) {
        int dash = value.indexOf('-');
        if (dash <= 0 || dash == value.length() - 1 || value.length() > 11) {
            throw new IllegalArgumentException(PROPERTY + " '" + value + "' is not <min>-<max>");
        }
        try {
            return new Stamp(Integer.parseInt(value, 0, dash, 10), Integer.parseInt(value, dash + 1, value.length(), 10));
        } catch (IllegalArgumentException e) { // not numbers, or not a range of the ring
            throw new IllegalArgumentException(PROPERTY + " '" + value + "' is not <min>-<max> on the ring: "
                    + e.getMessage(), e);
        }
    }

    public HashRange asRange() {
        return new HashRange(hashMin, hashMax);
    }
}
