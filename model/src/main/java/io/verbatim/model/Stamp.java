package io.verbatim.model;

/**
 * PIP-486's entry stamp: the smallest and largest {@code hashB} actually present in an entry
 * ({@code entry_hash_min} / {@code entry_hash_max}, inclusive). A producer stamps entries that lie in
 * one bucket of the segment they were written to.
 */
public record Stamp(int hashMin, int hashMax) {

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

    public HashRange asRange() {
        return new HashRange(hashMin, hashMax);
    }
}
