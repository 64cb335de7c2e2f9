package io.verbatim.metadatalog.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** A stalled member's missed ticks, run back to back when it resumes, count as one. */
class TickGateTest {
    private static final long MS = 1_000_000L;

    @Test
    void ticksOnTimeCountAndTheCatchUpAfterAStallDoesNot() {
        TickGate gate = new TickGate(50 * MS);
        assertThat(gate.admit(50 * MS)).isTrue();
        assertThat(gate.admit(100 * MS)).isTrue();
        assertThat(gate.admit(149 * MS)).as("a little early: still one period").isTrue();
        // a 500 ms stall: the fixed-rate task runs the nine ticks it missed at once
        assertThat(gate.admit(650 * MS)).isTrue();
        for (int i = 0; i < 9; i++) {
            assertThat(gate.admit(650 * MS + i * 100_000)).as("catch-up tick %d", i).isFalse();
        }
        assertThat(gate.admit(700 * MS)).as("the next tick on time").isTrue();
    }

    @Test
    void aPeriodMustBePositive() {
        assertThatThrownBy(() -> new TickGate(0)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("positive");
    }
}
