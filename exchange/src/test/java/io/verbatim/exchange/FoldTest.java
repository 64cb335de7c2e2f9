package io.verbatim.exchange;

import static org.assertj.core.api.Assertions.assertThat;

import io.verbatim.model.Layout;
import io.verbatim.model.Mutation;
import io.verbatim.model.Shape;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class FoldTest {
    private static final Caps CAPS = new Caps(64, 256);
    private static final Layout ONE = Layout.initial(1, 1, 0);

    private static Layout split(Layout l, long id) {
        return l.apply(Mutation.split(id), l.epoch(), 0).layoutOrThrow();
    }

    private static Layout applyAll(Layout l, List<Mutation> steps) {
        for (Mutation m : steps) {
            l = l.apply(m, l.epoch(), 0).layoutOrThrow();
        }
        return l;
    }

    private static PeerState peer(String name, Layout l, Set<Integer> cold, Caps caps) {
        return PeerState.of(name, "t", l, cold, caps);
    }

    @Test
    void aPeersSplitIsFoldedInAsAMidpointSplit() {
        Layout peer = split(ONE, 0);
        FoldPlan plan = Fold.plan("a", ONE, Set.of(), CAPS, List.of(peer("b", peer, Set.of(), CAPS)), false);
        assertThat(plan.mutations()).first().isEqualTo(Mutation.split(0));
        assertThat(Shape.of(applyAll(ONE, plan.mutations()))).isEqualTo(plan.target());
        assertThat(plan.target().refines(Shape.of(peer))).isTrue();
    }

    @Test
    void aBoundaryGoesOnlyWhenEveryClusterAgrees() {
        Layout both = split(ONE, 0); // a and b both have 0x8000
        PeerState hot = peer("b", both, Set.of(), CAPS);
        PeerState cold = peer("b", both, Set.of(0x8000), CAPS);
        assertThat(Fold.plan("a", both, Set.of(0x8000), CAPS, List.of(hot), false).mutations()).isEmpty();
        assertThat(Fold.plan("a", both, Set.of(), CAPS, List.of(cold), false).mutations()).isEmpty();
        assertThat(Fold.plan("a", both, Set.of(0x8000), CAPS, List.of(cold), false).mutations())
                .containsExactly(Mutation.mergeSiblings(1, 2));
        PeerState merged = peer("b", ONE, Set.of(), CAPS); // b already merged it
        assertThat(Fold.plan("a", both, Set.of(0x8000), CAPS, List.of(merged), false).mutations())
                .containsExactly(Mutation.mergeSiblings(1, 2));
    }

    @Test
    void aMergedBoundaryIsNotAddedBackWhileItsColdMarkStands() {
        PeerState stillThere = peer("b", split(ONE, 0), Set.of(0x8000), CAPS);
        assertThat(Fold.plan("a", ONE, Set.of(0x8000), CAPS, List.of(stillThere), false).mutations()).isEmpty();
        assertThat(Fold.plan("a", ONE, Set.of(), CAPS, List.of(stillThere), false).mutations())
                .as("without the cold mark the peer's boundary is the join's").containsExactly(Mutation.split(0));
    }

    @Test
    void aNewLeaderDefersItsOwnMergesButStillFoldsPeers() {
        Layout both = split(ONE, 0);
        PeerState cold = peer("b", split(both, 2), Set.of(0x8000), CAPS);
        FoldPlan plan = Fold.plan("a", both, Set.of(0x8000), CAPS, List.of(cold), true);
        assertThat(plan.mutations()).containsExactly(Mutation.split(2));
    }

    @Test
    void aBoundaryGoesOnlyWhereEveryClusterCanMergeIt() {
        Layout deep = split(split(ONE, 0), 1); // cuts 0x4000, 0x8000
        PeerState peerCold = peer("b", deep, Set.of(0x8000), CAPS);
        // 0x4000 is hot, and lies inside the range merging 0x8000 would produce: 0x8000 stays.
        assertThat(Fold.plan("a", deep, Set.of(0x8000), CAPS, List.of(peerCold), false).mutations()).isEmpty();
        // All cold: the finer cut goes first; the coarser one once no cluster has the finer one left.
        Set<Integer> bothCold = Set.of(0x4000, 0x8000);
        Layout once = applyAll(deep, Fold.plan("a", deep, bothCold, CAPS, List.of(peer("b", deep, bothCold, CAPS)),
                false).mutations());
        assertThat(Shape.of(once).boundaries()).containsExactly(0x8000);
        Layout peerOnce = split(ONE, 0);
        Layout twice = applyAll(once, Fold.plan("a", once, bothCold, CAPS, List.of(peer("b", peerOnce, bothCold,
                CAPS)), false).mutations());
        assertThat(Shape.of(twice)).isEqualTo(Shape.of(ONE));
    }

    @Test
    void capsAreTheMinimumNeverExceededAndAMismatchIsReported() {
        Layout fine = split(split(split(ONE, 0), 1), 2); // 4 segments
        Caps small = new Caps(2, 256);
        FoldPlan plan = Fold.plan("a", ONE, Set.of(), CAPS, List.of(peer("b", fine, Set.of(), small)), false);
        assertThat(plan.effectiveCaps()).isEqualTo(new Caps(2, 256));
        assertThat(plan.capMismatches()).singleElement().asString().contains("b caps", "differ");
        assertThat(plan.capLimited()).isTrue();
        assertThat(applyAll(ONE, plan.mutations()).activeSegments()).hasSizeLessThanOrEqualTo(2);
    }

    @Test
    void layoutsThatDoNotNestMeetInOnePassOfExplicitSplits() {
        Layout a = Layout.initial(3, 3, 0);
        Layout b = Layout.initial(4, 4, 0);
        FoldPlan plan = Fold.plan("a", a, Set.of(), CAPS, List.of(peer("b", b, Set.of(), CAPS)), false);
        assertThat(plan.mutations()).anyMatch(m -> m instanceof Mutation.SplitAt);
        Layout reached = applyAll(a, plan.mutations());
        assertThat(Shape.of(reached)).isEqualTo(plan.target());
        FoldPlan back = Fold.plan("b", b, Set.of(), CAPS, List.of(PeerState.of("a", "t", reached, Set.of(), CAPS)),
                false);
        assertThat(Shape.of(applyAll(b, back.mutations()))).isEqualTo(Shape.of(reached));
    }
}
