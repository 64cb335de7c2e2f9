package io.verbatim.runtime.storage;

import static org.assertj.core.api.Assertions.assertThat;

import io.verbatim.model.Layout;
import io.verbatim.model.Mutation;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** {@link PulsarGc}: which sealed segments the broker's answers let garbage collection delete. */
class PulsarGcDecisionTest {
    private static final long AGE = 2500;

    /** Segment 0 split into 2 and 3, then 2 split into 4 and 5: 0 and 2 sealed, 0 the only sealed root. */
    private static Layout twoSplits() {
        Layout l = Layout.initial(2, 4, 0);
        l = l.apply(Mutation.split(0), l.epoch(), 1).layoutOrThrow();
        return l.apply(Mutation.split(2), l.epoch(), 2).layoutOrThrow();
    }

    @Test
    void aSealedRootAnsweredDrainedAfterItsSealIsPrunable() {
        Layout l = twoSplits();
        assertThat(l.segment(0).orElseThrow().isSealed()).isTrue();
        assertThat(PulsarGc.prunable(l, Map.of(0L, new PulsarGc.Answer(1000, true, true)), Map.of(), 1500, AGE))
                .containsExactly(0L);
    }

    @Test
    void aSealedSegmentWithParentsLeftIsNotPrunableEvenDrained() {
        Layout l = twoSplits();
        assertThat(l.segment(2).orElseThrow().parentIds()).containsExactly(0L);
        assertThat(PulsarGc.prunable(l, Map.of(2L, new PulsarGc.Answer(1000, true, true)), Map.of(), 1500, AGE)).isEmpty();
    }

    @Test
    void backlogAnAnswerAskedBeforeTheSealOrAStaleOneKeepIt() {
        Layout l = twoSplits();
        assertThat(PulsarGc.prunable(l, Map.of(0L, new PulsarGc.Answer(1000, true, false)), Map.of(), 1500, AGE))
                .as("a subscription holds backlog").isEmpty();
        assertThat(PulsarGc.prunable(l, Map.of(0L, new PulsarGc.Answer(1000, false, true)), Map.of(), 1500, AGE))
                .as("asked before its topic was terminated").isEmpty();
        assertThat(PulsarGc.prunable(l, Map.of(0L, new PulsarGc.Answer(1000, true, true)), Map.of(), 1000 + AGE + 1, AGE))
                .as("too old: the broker may have been away since").isEmpty();
        assertThat(PulsarGc.prunable(l, Map.of(), Map.of(), 1500, AGE)).as("never answered").isEmpty();
    }

    @Test
    void anActiveSegmentOrOneNoLongerInTheLayoutIsNeverPrunable() {
        Layout l = twoSplits();
        assertThat(PulsarGc.prunable(l, Map.of(1L, new PulsarGc.Answer(1000, true, true),
                7L, new PulsarGc.Answer(1000, true, true)), Map.of(), 1500, AGE)).isEmpty();
        Layout pruned = l.apply(Mutation.prune(0), l.epoch(), 3).layoutOrThrow();
        assertThat(pruned.segment(2).orElseThrow().isRoot()).isTrue();
        assertThat(PulsarGc.prunable(pruned, Map.of(0L, new PulsarGc.Answer(1000, true, true),
                2L, new PulsarGc.Answer(1000, true, true)), Map.of(), 1500, AGE)).containsExactly(2L);
    }

    @Test
    void anAnswerAskedBeforeACursorOpeningFinishedDecidesNothing() {
        Layout l = twoSplits();
        Map<Long, PulsarGc.Answer> drained = Map.of(0L, new PulsarGc.Answer(1000, true, true));
        PulsarGc.Opens underWay = PulsarGc.Opens.NONE.started();
        assertThat(PulsarGc.prunable(l, drained, Map.of(0L, underWay), 1500, AGE)).as("an opening under way").isEmpty();
        assertThat(PulsarGc.prunable(l, drained, Map.of(0L, underWay.done(1000)), 1500, AGE))
                .as("finished as the answer was asked").isEmpty();
        assertThat(PulsarGc.prunable(l, drained, Map.of(0L, underWay.done(999)), 1500, AGE))
                .as("finished before the answer").containsExactly(0L);
        assertThat(PulsarGc.prunable(l, drained, Map.of(0L, underWay.started().done(900)), 1500, AGE))
                .as("one of two still under way").isEmpty();
    }
}
