package io.verbatim.metadatalog.state;

/**
 * Who owns one segment, as the metadata log committed it. A member acts on a segment (replicates it,
 * dispatches it) only while it is {@link Phase#OWNED} by that member and the member's lease holds; in
 * {@link Phase#RELEASING} nobody acts, so at most one member acts on a segment at any instant.
 *
 * @param segment the segment
 * @param phase where it stands
 * @param owner the owning member; empty when {@link Phase#UNOWNED}
 * @param epoch the index of the log entry that last moved it: every transition raises it
 * @param to the member a move releases it to ({@link Phase#RELEASING} only; else empty)
 * @param preferred the member an expiry remembers as its next owner ({@link Phase#UNOWNED} only; may be empty)
 */
public record SegmentOwner(SegmentKey segment, Phase phase, String owner, long epoch, String to, String preferred) {

    /** Where a segment's ownership stands. */
    public enum Phase {
        /** No member owns it: the leader assigns it. */
        UNOWNED,
        /** {@link #owner} owns it and acts on it. */
        OWNED,
        /** {@link #owner} was asked to stop and release it to {@link #to}: nobody acts on it. */
        RELEASING
    }

    public SegmentOwner {
        if (segment == null || phase == null || owner == null || to == null || preferred == null) {
            throw new IllegalArgumentException("a segment's ownership has no null parts");
        }
        if ((phase == Phase.UNOWNED) != owner.isEmpty()) {
            throw new IllegalArgumentException(segment + " is " + phase + " with owner '" + owner + "'");
        }
        if ((phase == Phase.RELEASING) != !to.isEmpty()) {
            throw new IllegalArgumentException(segment + " is " + phase + " towards '" + to + "'");
        }
    }

    static SegmentOwner owned(SegmentKey segment, String owner, long epoch) {
        return new SegmentOwner(segment, Phase.OWNED, owner, epoch, "", "");
    }

    static SegmentOwner releasing(SegmentKey segment, String owner, long epoch, String to) {
        return new SegmentOwner(segment, Phase.RELEASING, owner, epoch, to, "");
    }

    static SegmentOwner unowned(SegmentKey segment, long epoch, String preferred) {
        return new SegmentOwner(segment, Phase.UNOWNED, "", epoch, "", preferred);
    }

    /** Whether {@code member} owns it and may act on it (its lease holding). */
    public boolean ownedBy(String member) {
        return phase == Phase.OWNED && owner.equals(member);
    }

    @Override
    public String toString() {
        return switch (phase) {
            case UNOWNED -> segment + " unowned@" + epoch + (preferred.isEmpty() ? "" : " (prefers " + preferred + ")");
            case OWNED -> segment + " " + owner + "@" + epoch;
            case RELEASING -> segment + " " + owner + "->" + to + "@" + epoch;
        };
    }
}
