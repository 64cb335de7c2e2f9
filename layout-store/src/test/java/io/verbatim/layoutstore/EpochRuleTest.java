package io.verbatim.layoutstore;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.OptionalLong;
import org.junit.jupiter.api.Test;

/** The compare-and-set rule every layout store asks: its verdicts, their order and their words. */
class EpochRuleTest {

    @Test
    void aCompareAndSetMovesFromTheStoredEpochToAHigherOne() {
        assertThat(EpochRule.compareAndSet("t", OptionalLong.of(3), 3, 4)).isInstanceOf(EpochRule.Verdict.Allowed.class);
        assertThat(EpochRule.compareAndSet("t", OptionalLong.of(3), 3, 9)).isInstanceOf(EpochRule.Verdict.Allowed.class);
    }

    @Test
    void eachRefusalInTheOrderTheStoresCheckIt() {
        // no topic before anything else
        assertThat(EpochRule.compareAndSet("t", OptionalLong.empty(), 3, 2))
                .isEqualTo(new EpochRule.Verdict.Invalid("topic t does not exist in this store"));
        // a stale expectation before a next epoch that does not move forward
        assertThat(EpochRule.compareAndSet("t", OptionalLong.of(5), 3, 2))
                .isEqualTo(new EpochRule.Verdict.Stale("t", 3, 5));
        assertThat(EpochRule.compareAndSet("t", OptionalLong.of(3), 3, 3))
                .isEqualTo(new EpochRule.Verdict.Invalid("the new layout of t has epoch 3, not above 3"));
        assertThat(EpochRule.notForward("t", 3, 2)).contains(
                new EpochRule.Verdict.Invalid("the new layout of t has epoch 2, not above 3"));
        assertThat(EpochRule.notForward("t", 3, 4)).isEmpty();
    }

    @Test
    void aTopicIsCreatedOnce() {
        assertThat(EpochRule.create("t", OptionalLong.empty())).isInstanceOf(EpochRule.Verdict.Allowed.class);
        assertThat(EpochRule.create("t", OptionalLong.of(2))).isEqualTo(new EpochRule.Verdict.Stale("t", -1, 2));
    }

    @Test
    void aRefusalThrowsWhatAStoresCallerCatches() {
        assertThatThrownBy(() -> EpochRule.compareAndSet("t", OptionalLong.of(5), 3, 4).throwIfRefused())
                .isInstanceOf(StaleEpochException.class).hasMessage("topic t is at epoch 5, not the expected 3");
        assertThatThrownBy(() -> EpochRule.compareAndSet("t", OptionalLong.of(3), 3, 1).throwIfRefused())
                .isExactlyInstanceOf(IllegalArgumentException.class)
                .hasMessage("the new layout of t has epoch 1, not above 3");
        EpochRule.compareAndSet("t", OptionalLong.of(3), 3, 4).throwIfRefused(); // allowed: nothing thrown
    }
}
