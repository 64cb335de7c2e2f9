package io.verbatim.exchange;

/**
 * A peer whose cap differs from this cluster's (PIP-495: reported, never silently overridden; the
 * effective cap is the smaller).
 *
 * @param peer the peer cluster
 * @param cap {@code maxSegments} or {@code maxEntryBucketsPerSegment}
 */
record CapMismatch(String peer, String cap, int local, int theirs) {

    @Override
    public String toString() {
        return peer + " " + cap + " " + theirs + " differs from the local " + local;
    }
}
