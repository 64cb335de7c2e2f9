package io.verbatim.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.verbatim.model.Outcome.Refusal;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class LayoutTest {

    @Test
    void initialLayoutIsPulsarsDefault() {
        Layout layout = Layout.initial(1, 4, 1000);
        assertThat(layout.epoch()).isZero();
        assertThat(layout.nextSegmentId()).isEqualTo(1);
        Segment only = layout.activeSegments().get(0);
        assertThat(only.range()).isEqualTo(HashRange.FULL);
        assertThat(only.buckets().splits()).containsExactly(16384, 32768, 49152);
        assertThat(only.descriptor()).isEqualTo("0000-ffff-0");
        assertThat(only.sealedAtEpoch()).isEqualTo(-1);
        assertThat(only.sealedAtMs()).isEqualTo(-1);
    }

    @Test
    void initialRangesGiveTheRemainderToTheLast() {
        Layout layout = Layout.initial(3, 4, 0);
        assertThat(layout.activeSegments()).extracting(Segment::range).containsExactly(
                HashRange.of(0, 21844), HashRange.of(21845, 43689), HashRange.of(43690, 65535));
        assertThat(layout.activeSegments()).allMatch(s -> s.buckets().count() == 1);
    }

    @Test
    void splitCreatesTwoChildrenLowerHalfFirstAndSealsTheParent() {
        Layout layout = Layout.initial(1, 4, 0).apply(Mutation.split(0), 0, 77).layoutOrThrow();
        assertThat(layout.epoch()).isEqualTo(1);
        assertThat(layout.nextSegmentId()).isEqualTo(3);
        Segment parent = layout.segment(0).orElseThrow();
        assertThat(parent.isSealed()).isTrue();
        assertThat(parent.childIds()).containsExactly(1L, 2L);
        assertThat(parent.sealedAtEpoch()).isEqualTo(1);
        assertThat(parent.sealedAtMs()).isEqualTo(77);
        assertThat(layout.activeSegments()).extracting(Segment::descriptor)
                .containsExactly("0000-7fff-1", "8000-ffff-2");
        assertThat(layout.activeSegments()).allMatch(s -> s.buckets().count() == 2
                && s.parentIds().equals(List.of(0L)) && s.createdAtEpoch() == 1);
    }

    @Test
    void splitAtAnExplicitBoundary() {
        Layout layout = Layout.initial(1, 1, 0).apply(Mutation.splitAt(0, 0x1234), 0, 0).layoutOrThrow();
        assertThat(layout.activeSegments()).extracting(Segment::range)
                .containsExactly(HashRange.of(0, 0x1233), HashRange.of(0x1234, 0xffff));
    }

    @Test
    void mergeSumsBucketsAndNamesBothParents() {
        Layout layout = Layout.initial(2, 4, 0).apply(Mutation.merge(1, 0), 0, 5).layoutOrThrow();
        Segment merged = layout.activeSegments().get(0);
        assertThat(merged.id()).isEqualTo(2);
        assertThat(merged.range()).isEqualTo(HashRange.FULL);
        assertThat(merged.parentIds()).containsExactly(1L, 0L);
        assertThat(merged.buckets().count()).isEqualTo(4);
        assertThat(layout.segment(0).orElseThrow().childIds()).containsExactly(2L);
    }

    @Test
    void rebucketRollsOverToTheSameRange() {
        Layout layout = Layout.initial(1, 4, 0).apply(Mutation.rebucket(0, 8), 0, 0).layoutOrThrow();
        Segment successor = layout.activeSegments().get(0);
        assertThat(successor.id()).isEqualTo(1);
        assertThat(successor.range()).isEqualTo(HashRange.FULL);
        assertThat(successor.buckets().count()).isEqualTo(8);
        assertThat(successor.parentIds()).containsExactly(0L);
        assertThat(layout.nextSegmentId()).isEqualTo(2);
    }

    @Test
    void pruneRemovesASealedSegmentAndItsReferences() {
        Layout split = Layout.initial(1, 4, 0).apply(Mutation.split(0), 0, 0).layoutOrThrow();
        assertRefused(split.apply(Mutation.prune(1), 1, 0), Refusal.SEGMENT_ACTIVE, "0000-7fff-1");
        Layout pruned = split.apply(Mutation.prune(0), 1, 0).layoutOrThrow();
        assertThat(pruned.epoch()).isEqualTo(2);
        assertThat(pruned.nextSegmentId()).isEqualTo(3);
        assertThat(pruned.segment(0)).isEmpty();
        assertThat(pruned.activeSegments()).allMatch(s -> s.parentIds().isEmpty());
        assertThat(Layout.of(pruned.epoch(), pruned.nextSegmentId(), pruned.segments().values())).isEqualTo(pruned);
    }

    @Test
    void mutationsAreCompareAndSetOnTheEpoch() {
        Layout layout = Layout.initial(1, 4, 0);
        Outcome stale = layout.apply(Mutation.split(0), 3, 0);
        assertThat(stale).isInstanceOfSatisfying(Outcome.Refused.class, r -> {
            assertThat(r.reason()).isEqualTo(Refusal.STALE_EPOCH);
            assertThat(r.message()).contains("epoch 0", "expected 3");
        });
    }

    @Test
    void refusalsNameWhatWasWrong() {
        Layout layout = Layout.initial(2, 4, 0);
        assertRefused(layout.apply(Mutation.split(9), 0, 0), Refusal.UNKNOWN_SEGMENT, "segment 9");
        Layout split = layout.apply(Mutation.split(0), 0, 0).layoutOrThrow();
        assertRefused(split.apply(Mutation.split(0), 1, 0), Refusal.SEGMENT_SEALED, "0000-7fff-0");
        assertRefused(layout.apply(Mutation.splitAt(0, 0), 0, 0), Refusal.BOUNDARY_OUTSIDE_RANGE, "0000");
        assertRefused(layout.apply(Mutation.splitAt(0, 0x8000), 0, 0), Refusal.BOUNDARY_OUTSIDE_RANGE, "8000");
        assertRefused(split.apply(Mutation.merge(2, 1), 1, 0), Refusal.NOT_ADJACENT, "not adjacent");
        assertRefused(layout.apply(Mutation.rebucket(0, 2), 0, 0), Refusal.SAME_BUCKET_COUNT, "already has 2");
        assertRefused(layout.apply(Mutation.rebucket(0, 0), 0, 0), Refusal.INVALID_BUCKET_COUNT, "bucket count 0");
    }

    @Test
    void siblingsAreTheHalvesOfOneSplitThroughRebuckets() {
        Layout layout = Layout.initial(1, 4, 0);
        layout = layout.apply(Mutation.split(0), 0, 0).layoutOrThrow(); // 1, 2
        layout = layout.apply(Mutation.rebucket(1, 8), 1, 0).layoutOrThrow(); // 1 -> 3
        layout = layout.apply(Mutation.split(2), 2, 0).layoutOrThrow(); // 2 -> 4, 5
        assertThat(layout.areSiblings(3, 2)).isTrue(); // halves of 0, but 2 has been split since
        assertRefused(layout.apply(Mutation.mergeSiblings(3, 2), 3, 0), Refusal.SEGMENT_SEALED, "8000-ffff-2");
        assertThat(layout.areSiblings(4, 5)).isTrue();
        assertThat(layout.areSiblings(3, 4)).isFalse();
        assertRefused(layout.apply(Mutation.mergeSiblings(3, 4), 3, 0), Refusal.NOT_SIBLINGS, "two halves");
        layout = layout.apply(Mutation.mergeSiblings(4, 5), 3, 0).layoutOrThrow(); // 6
        assertThat(layout.areSiblings(3, 6)).as("6 restored 2's range: the halves of the ring again").isTrue();
        assertThat(layout.apply(Mutation.merge(3, 6), 4, 0)).isInstanceOf(Outcome.Applied.class);
    }

    @Test
    void segmentsThatAreNotTheHalvesOfOneSplitAreNotSiblings() {
        Layout three = Layout.initial(3, 4, 0); // 0000-5554, 5555-aaa9, aaaa-ffff: no split made them
        assertRefused(three.apply(Mutation.mergeSiblings(0, 1), 0, 0), Refusal.NOT_SIBLINGS, "0000-5554-0");
        Layout explicit = Layout.initial(1, 4, 0).apply(Mutation.splitAt(0, 0x1234), 0, 0).layoutOrThrow();
        assertThat(explicit.areSiblings(1, 2)).as("the two sides of an explicit split").isTrue();
        Layout two = Layout.initial(2, 4, 0);
        assertThat(two.areSiblings(0, 1)).as("initial halves of the ring are the halves of its midpoint split")
                .isTrue();
    }

    @Test
    void segmentTopicNames() {
        Segment s = Layout.initial(2, 4, 0).activeSegments().get(1);
        assertThat(s.topicName("topic://t/ns/orders")).isEqualTo("segment://t/ns/orders/8000-ffff-1");
        assertThatThrownBy(() -> s.topicName("persistent://t/ns/x")).hasMessageContaining("persistent://t/ns/x");
    }

    @Test
    void routesEveryHashToTheOneActiveSegmentHoldingIt() {
        Property.forAll("activeSegmentFor", 0x5eed_0002L, 200, r -> {
            Layout layout = Generators.evolvedLayout(r, 30);
            for (int i = 0; i < 200; i++) {
                int h = r.nextInt(65536);
                Segment s = layout.activeSegmentFor(h);
                assertThat(s.range().contains(h)).isTrue();
                assertThat(s.isActive()).isTrue();
            }
        });
    }

    @Test
    void everyMutationSequenceKeepsTheTilingAndTheDag() {
        Property.forAll("mutations keep the invariants", 0x5eed_0003L, 500, r -> {
            Layout layout = Layout.initial(1 + r.nextInt(4), 4, 0);
            for (int step = 0; step < 40; step++) {
                Outcome o = layout.apply(Generators.randomMutation(r, layout), layout.epoch(), step);
                if (o instanceof Outcome.Applied applied) {
                    assertThat(applied.layout().epoch()).isEqualTo(layout.epoch() + 1);
                    layout = applied.layout();
                }
                // Layout.of re-checks the tiling and every parent/child reference.
                assertThat(Layout.of(layout.epoch(), layout.nextSegmentId(), layout.segments().values()))
                        .isEqualTo(layout);
            }
        });
    }

    @Test
    void ofRejectsLayoutsThatDoNotTile() {
        Segment low = Segment.active(0, HashRange.of(0, 100), List.of(), 0, 0, Buckets.ONE);
        Segment high = Segment.active(1, HashRange.of(102, 0xffff), List.of(), 0, 0, Buckets.ONE);
        assertThatThrownBy(() -> Layout.of(0, 2, List.of(low, high))).hasMessageContaining("gap at 0065");
        Segment overlapping = Segment.active(1, HashRange.of(50, 0xffff), List.of(), 0, 0, Buckets.ONE);
        assertThatThrownBy(() -> Layout.of(0, 2, List.of(low, overlapping))).hasMessageContaining("overlap");
        assertThatThrownBy(() -> Layout.of(0, 1, List.of(low, high))).hasMessageContaining("nextSegmentId 1");
    }

    private static void assertRefused(Outcome outcome, Refusal reason, String mentions) {
        assertThat(outcome).isInstanceOfSatisfying(Outcome.Refused.class, r -> {
            assertThat(r.reason()).isEqualTo(reason);
            assertThat(r.message()).contains(mentions);
        });
    }

    @Test
    void applyingManyMutationsAtOnceIsApplyingThemOneByOne() {
        Property.forAll("applyAll is sequential apply", 0x5eed_0020L, 500, r -> {
            Layout start = Generators.evolvedLayout(r, r.nextInt(10));
            List<Mutation> plan = new ArrayList<>();
            Layout oneByOne = start;
            for (int i = 0; i < 1 + r.nextInt(12); i++) {
                Mutation m = Generators.randomMutation(r, oneByOne);
                Outcome o = oneByOne.apply(m, oneByOne.epoch(), 9);
                if (o instanceof Outcome.Applied applied) {
                    plan.add(m);
                    oneByOne = applied.layout();
                }
            }
            assertThat(start.applyAll(plan, start.epoch(), 9).layoutOrThrow()).isEqualTo(oneByOne);
        });
    }

    @Test
    void aBatchStopsAtItsFirstRefusalAndAppliesNothing() {
        Layout layout = Layout.initial(1, 4, 0);
        Outcome o = layout.applyAll(List.of(Mutation.split(0), Mutation.split(0)), 0, 0);
        assertRefused(o, Refusal.SEGMENT_SEALED, "0000-ffff-0");
        assertRefused(layout.applyAll(List.of(Mutation.split(0)), 3, 0), Refusal.STALE_EPOCH, "epoch 0");
    }

    @Test
    void rebucketToACountThatIsNotAPowerOfTwoIsRefused() {
        Layout layout = Layout.initial(1, 4, 0);
        assertRefused(layout.apply(Mutation.rebucket(0, 3), 0, 0), Refusal.INVALID_BUCKET_COUNT, "3 for segment");
        assertRefused(layout.apply(Mutation.rebucket(0, 5), 0, 0), Refusal.INVALID_BUCKET_COUNT, "not a power of two");
    }
}
