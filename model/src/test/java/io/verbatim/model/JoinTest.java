package io.verbatim.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

class JoinTest {

    private static Shape randomShape(Random r) {
        return Shape.of(Generators.evolvedLayout(r, r.nextInt(25)));
    }

    @Test
    void joinIsCommutativeAssociativeAndIdempotent() {
        Property.forAll("join algebra", 0x5eed_0010L, 1000, r -> {
            Shape a = randomShape(r);
            Shape b = randomShape(r);
            Shape c = randomShape(r);
            assertThat(Join.of(a, b)).isEqualTo(Join.of(b, a));
            assertThat(Join.of(Join.of(a, b), c)).isEqualTo(Join.of(a, Join.of(b, c)));
            assertThat(Join.of(a, a)).isEqualTo(a);
            assertThat(Join.of(a)).isEqualTo(a);
            Shape ab = Join.of(a, b);
            assertThat(ab.refines(a)).isTrue();
            assertThat(ab.refines(b)).isTrue();
        });
    }

    @Test
    void joinIsTheUnionOfBoundariesAndTheMaximumBucketCountCarriedToEachRange() {
        Layout a = Layout.initial(1, 4, 0).apply(Mutation.split(0), 0, 0).layoutOrThrow(); // 2 x N=2
        Layout b = Layout.initial(1, 16, 0); // 1 x N=16: each half of it counts as 8
        Shape join = Join.of(Shape.of(a), Shape.of(b));
        assertThat(join.cells()).extracting(Shape.Cell::range)
                .containsExactly(HashRange.of(0, 0x7fff), HashRange.of(0x8000, 0xffff));
        assertThat(join.cells()).allMatch(c -> c.buckets().count() == 8);
    }

    @Test
    void aSplitIsNotUndoneByAPeerThatStillHoldsItsParent() {
        Layout parent = Layout.initial(1, 8, 0);
        Layout split = parent.apply(Mutation.split(0), 0, 0).layoutOrThrow(); // 2 x N=4, as a lone cluster
        assertThat(Join.of(Shape.of(split), Shape.of(parent))).isEqualTo(Shape.of(split));
        assertThat(Join.toReach(split, Join.of(Shape.of(split), Shape.of(parent)))).isEmpty();
        // The peer that still holds the parent reaches exactly the lone cluster's layout.
        Shape join = Join.of(Shape.of(parent), Shape.of(split));
        assertThat(Shape.of(applyAll(parent, Join.toReach(parent, join)))).isEqualTo(Shape.of(split));
    }

    @Test
    void splittingNeverMakesTheJoinWithTheOldLayoutRaiseACount() {
        Property.forAll("a split's halving survives the join", 0x5eed_0013L, 1000, r -> {
            Layout before = Generators.evolvedLayout(r, r.nextInt(15));
            Layout after = before;
            for (int i = 0, n = 1 + r.nextInt(6); i < n; i++) {
                List<Segment> active = after.activeSegments();
                Segment s = active.get(r.nextInt(active.size()));
                Mutation split = r.nextBoolean() || s.range().size() < 2 ? Mutation.split(s.id())
                        : Mutation.splitAt(s.id(), s.range().start() + 1 + r.nextInt(s.range().size() - 1));
                Outcome o = after.apply(split, after.epoch(), 0);
                if (o instanceof Outcome.Applied applied) {
                    after = applied.layout();
                }
            }
            // What the cluster that split holds is the join: a peer still at the old layout changes nothing.
            assertThat(Join.of(Shape.of(after), Shape.of(before))).isEqualTo(Shape.of(after));
            // And the peer, folding it in, reaches exactly the same counts.
            Layout peer = applyAll(before, Join.toReach(before, Join.of(Shape.of(before), Shape.of(after))));
            assertThat(Shape.of(peer)).isEqualTo(Shape.of(after));
        });
    }

    @Test
    void applyingThePlanReachesExactlyTheJoin() {
        Property.forAll("plan reaches the join", 0x5eed_0011L, 1000, r -> {
            Layout local = Generators.evolvedLayout(r, r.nextInt(25));
            Shape target = Join.of(Shape.of(local), randomShape(r), randomShape(r));
            Layout reached = applyAll(local, Join.toReach(local, target));
            assertThat(Shape.of(reached)).isEqualTo(target);
            assertThat(Join.toReach(reached, target)).isEmpty();
        });
    }

    @Test
    void nestingLayoutsConvergeByMidpointSplitsAndRebucketsOnly() {
        Property.forAll("nesting layouts need no explicit boundary", 0x5eed_0012L, 1000, r -> {
            Layout initial = Layout.initial(1, 4, 0);
            Layout local = Generators.nestingLayout(r, initial, r.nextInt(20));
            Layout peer = Generators.nestingLayout(r, initial, r.nextInt(20));
            Shape target = Join.of(Shape.of(local), Shape.of(peer));
            List<Mutation> plan = Join.toReach(local, target);
            assertThat(plan).noneMatch(m -> m instanceof Mutation.SplitAt || m instanceof Mutation.Merge);
            assertThat(Shape.of(applyAll(local, plan))).isEqualTo(target);
        });
    }

    @Test
    void layoutsThatEvolvedApartConvergeInOnePassOfExplicitSplits() {
        Layout local = Layout.initial(3, 3, 0); // cuts at 21845 and 43690, N=1
        Layout peer = Layout.initial(4, 8, 0); // cuts at 16384, 32768, 49152, N=2
        Shape target = Join.of(Shape.of(local), Shape.of(peer));
        assertThat(target.boundaries()).containsExactly(16384, 21845, 32768, 43690, 49152);
        List<Mutation> plan = Join.toReach(local, target);
        // 32768 is the midpoint of [21845, 43689]; 16384 and 49152 are midpoints of nothing local.
        assertThat(plan).contains(Mutation.splitAt(0, 16384), Mutation.split(1), Mutation.splitAt(2, 49152));
        Layout reached = applyAll(local, plan);
        assertThat(Shape.of(reached)).isEqualTo(target);
        // Each count is the largest of the two carried to the piece: a piece of a peer's N=2 segment
        // that is a quarter of its size or less counts 1, as it would after splitting that segment.
        assertThat(reached.activeSegments()).extracting(s -> s.buckets().count()).containsExactly(2, 1, 1, 1, 1, 2);
        assertThat(plan).hasSize(3 + 2);
    }

    @Test
    void planRefusesATargetThatWouldRemoveBoundaries() {
        Layout split = Layout.initial(1, 4, 0).apply(Mutation.split(0), 0, 0).layoutOrThrow();
        assertThatThrownBy(() -> Join.toReach(split, Shape.of(Layout.initial(1, 4, 0))))
                .hasMessageContaining("does not refine");
    }

    static Layout applyAll(Layout layout, List<Mutation> plan) {
        for (Mutation m : plan) {
            layout = layout.apply(m, layout.epoch(), 0).layoutOrThrow();
        }
        return layout;
    }
}
