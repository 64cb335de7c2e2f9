package io.verbatim.model;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

class AdoptionPlanTest {

    private static Layout apply(Layout layout, Mutation... mutations) {
        return layout.applyAll(List.of(mutations), layout.epoch(), 0).layoutOrThrow();
    }

    private static List<Long> ids(List<Segment> segments) {
        return segments.stream().map(Segment::id).toList();
    }

    @Test
    void planFromALayoutToItselfIsEmpty() {
        Layout layout = apply(Layout.initial(2, 4, 0), Mutation.split(0), Mutation.merge(2, 3));
        assertThat(AdoptionPlan.between(layout, layout).isEmpty()).isTrue();
        assertThat(AdoptionPlan.between(layout, layout)).isEqualTo(AdoptionPlan.EMPTY);
    }

    @Test
    void planOfANewTopicMakesEverySegmentAndSealsTheSealedOnes() {
        Layout layout = apply(Layout.initial(1, 4, 0), Mutation.split(0));
        AdoptionPlan plan = AdoptionPlan.of(layout);
        assertThat(ids(plan.create())).containsExactly(0L, 1L, 2L);
        assertThat(ids(plan.seal())).containsExactly(0L);
        assertThat(plan.prune()).isEmpty();
    }

    @Test
    void splitMakesBothChildrenThenSealsTheParent() {
        Layout current = Layout.initial(1, 4, 0);
        Layout next = apply(current, Mutation.split(0));
        AdoptionPlan plan = AdoptionPlan.between(current, next);
        assertThat(ids(plan.create())).containsExactly(1L, 2L);
        assertThat(plan.create()).allMatch(s -> s.parentIds().equals(List.of(0L)));
        assertThat(ids(plan.seal())).containsExactly(0L);
        assertThat(plan.prune()).isEmpty();
    }

    @Test
    void mergeMakesOneChildNamingBothParentsAndSealsThem() {
        Layout current = Layout.initial(2, 4, 0);
        Layout next = apply(current, Mutation.merge(0, 1));
        AdoptionPlan plan = AdoptionPlan.between(current, next);
        assertThat(ids(plan.create())).containsExactly(2L);
        assertThat(plan.create().get(0).parentIds()).containsExactlyInAnyOrder(0L, 1L);
        assertThat(ids(plan.seal())).containsExactly(0L, 1L);
    }

    @Test
    void rebucketMakesTheSuccessorAndSealsThePredecessor() {
        Layout current = Layout.initial(1, 4, 0);
        Layout next = apply(current, Mutation.rebucket(0, 8));
        AdoptionPlan plan = AdoptionPlan.between(current, next);
        assertThat(ids(plan.create())).containsExactly(1L);
        assertThat(plan.create().get(0).buckets().count()).isEqualTo(8);
        assertThat(ids(plan.seal())).containsExactly(0L);
    }

    @Test
    void pruneOnlyDeletesAndTakesTheSegmentAsTheHeldLayoutHadIt() {
        Layout current = apply(Layout.initial(1, 4, 0), Mutation.split(0));
        Layout next = apply(current, Mutation.prune(0));
        AdoptionPlan plan = AdoptionPlan.between(current, next);
        assertThat(plan.create()).isEmpty();
        assertThat(plan.seal()).isEmpty();
        assertThat(plan.prune()).containsExactly(current.segment(0).orElseThrow());
    }

    @Test
    void manyMutationsAtOnceMakeSealAndPruneTogether() {
        Layout current = apply(Layout.initial(2, 4, 0), Mutation.split(0));
        // segments 2 and 3 are 0's children, 1 the second initial segment
        Layout next = apply(current, Mutation.prune(0), Mutation.split(1), Mutation.rebucket(2, 8));
        AdoptionPlan plan = AdoptionPlan.between(current, next);
        assertThat(ids(plan.create())).containsExactly(4L, 5L, 6L);
        assertThat(ids(plan.seal())).containsExactly(1L, 2L);
        assertThat(ids(plan.prune())).containsExactly(0L);
    }

    @Test
    void aSegmentMadeAndSealedBetweenTheTwoLayoutsIsMadeThenSealed() {
        Layout current = Layout.initial(1, 4, 0);
        Layout next = apply(apply(current, Mutation.split(0)), Mutation.split(1));
        AdoptionPlan plan = AdoptionPlan.between(current, next);
        assertThat(ids(plan.create())).containsExactly(1L, 2L, 3L, 4L);
        assertThat(ids(plan.seal())).containsExactly(0L, 1L);
    }

    @Test
    void childrenOfAParentPrunedInTheSameJumpComeWithoutIt() {
        Layout current = Layout.initial(1, 4, 0);
        Layout next = apply(apply(current, Mutation.split(0)), Mutation.prune(0));
        AdoptionPlan plan = AdoptionPlan.between(current, next);
        assertThat(ids(plan.create())).containsExactly(1L, 2L);
        assertThat(plan.create()).allMatch(Segment::isRoot); // the prune took the parent from their lists
        assertThat(plan.seal()).isEmpty(); // sealed and pruned: nothing left to seal
        assertThat(ids(plan.prune())).containsExactly(0L);
    }

    @Test
    void aSegmentCreatedBeforeTheHeldLayoutAndMissingFromItIsNeverMadeAgain() {
        Layout split = apply(Layout.initial(1, 4, 0), Mutation.split(0));
        Layout pruned = apply(split, Mutation.prune(0));
        // a layout that still has segment 0, at a later epoch: not a successor of the one held
        Layout stale = Layout.of(pruned.epoch() + 1, split.nextSegmentId(), split.segments().values());
        AdoptionPlan plan = AdoptionPlan.between(pruned, stale);
        assertThat(plan.create()).isEmpty();
        assertThat(plan.seal()).isEmpty();
    }
}
