package io.verbatim.metadatalog.state;

/** One change to segments' ownership, proposed through the metadata log and checked when it applies. */
public sealed interface OwnershipCommand {

    /** An unowned segment to {@code to}, an active member. */
    record Assign(SegmentKey segment, String to) implements OwnershipCommand {
    }

    /**
     * A segment owned at {@code expectedEpoch} towards {@code to}: its owner stops acting at once and
     * releases it, which gives it to {@code to}.
     */
    record Move(SegmentKey segment, long expectedEpoch, String to) implements OwnershipCommand {
    }

    /** {@code by}, owning the segment at {@code epoch}, gives it up: to the member a move named, or to nobody. */
    record Release(SegmentKey segment, long epoch, String by) implements OwnershipCommand {
    }

    /**
     * {@code member}'s lease ran out: every segment it owns becomes unowned (remembering it as the preferred
     * next owner, or the member a move named), and every segment being moved to it returns to its owner.
     */
    record Expire(String member) implements OwnershipCommand {
    }
}
