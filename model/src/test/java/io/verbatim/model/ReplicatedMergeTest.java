package io.verbatim.model;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class ReplicatedMergeTest {
    private static Layout apply(Layout l, Mutation m) {
        return l.apply(m, l.epoch(), 0).layoutOrThrow();
    }

    @Test
    void theTwoHalvesOfAMidpointSplitMergeOnTheirBoundary() {
        Layout split = apply(Layout.initial(1, 4, 0), Mutation.split(0));
        long low = split.activeSegments().get(0).id();
        long high = split.activeSegments().get(1).id();
        ReplicatedMerge merge = ReplicatedMerge.of(split, low, high);
        assertThat(merge).isEqualTo(new ReplicatedMerge.Eligible(0x8000));
        assertThat(ReplicatedMerge.of(split, high, low)).as("either order").isEqualTo(merge);
    }

    @Test
    void aSealedOrUnknownSegmentIsNotActive() {
        Layout split = apply(Layout.initial(1, 4, 0), Mutation.split(0));
        long high = split.activeSegments().get(1).id();
        assertThat(ReplicatedMerge.of(split, 0, high)).isInstanceOfSatisfying(ReplicatedMerge.Refused.class,
                r -> assertThat(r.reason()).isEqualTo(ReplicatedMerge.Reason.NOT_ACTIVE));
        assertThat(ReplicatedMerge.of(split, 99, high)).isInstanceOfSatisfying(ReplicatedMerge.Refused.class,
                r -> assertThat(r.why()).contains("99"));
    }

    @Test
    void neighboursFromDifferentSplitsAreNotSiblings() {
        Layout l = apply(Layout.initial(1, 4, 0), Mutation.split(0));
        long high = l.activeSegments().get(1).id();
        l = apply(l, Mutation.split(l.activeSegments().get(0).id()));
        // [0000-3fff] [4000-7fff] [8000-ffff]: the middle one and the upper half touch, but are no split's halves
        long middle = l.activeSegments().get(1).id();
        assertThat(ReplicatedMerge.of(l, middle, high)).isInstanceOfSatisfying(ReplicatedMerge.Refused.class,
                r -> assertThat(r.reason()).isEqualTo(ReplicatedMerge.Reason.NOT_SIBLINGS));
    }

    @Test
    void theHalvesOfASplitAtAnExplicitBoundaryAreNoTreeNode() {
        Layout l = apply(Layout.initial(1, 4, 0), Mutation.splitAt(0, 0x1234));
        long low = l.activeSegments().get(0).id();
        long high = l.activeSegments().get(1).id();
        assertThat(ReplicatedMerge.of(l, low, high)).isInstanceOfSatisfying(ReplicatedMerge.Refused.class,
                r -> assertThat(r.reason()).isEqualTo(ReplicatedMerge.Reason.NOT_A_TREE_NODE));
    }

    @Test
    void everyBoundaryOfTheRingButZeroIsMarkable() {
        assertThat(ReplicatedMerge.isMarkable(0)).isFalse();
        assertThat(ReplicatedMerge.isMarkable(1)).isTrue();
        assertThat(ReplicatedMerge.isMarkable(0x8000)).isTrue();
        assertThat(ReplicatedMerge.isMarkable(HashRange.MAX_HASH)).isTrue();
        assertThat(ReplicatedMerge.isMarkable(HashRange.MAX_HASH + 1)).isFalse();
    }
}
