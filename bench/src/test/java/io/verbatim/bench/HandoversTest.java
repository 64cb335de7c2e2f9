package io.verbatim.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class HandoversTest {
    @Test
    void percentilesAreNearestRank() {
        Handovers h = new Handovers("broker-1", "kill", 4, 10);
        for (double ms : new double[] {400, 100, 300, 200}) {
            h.add(ms);
        }
        assertThat(h.percentile(50)).isEqualTo(200);
        assertThat(h.percentile(99)).isEqualTo(400);
        assertThat(h.max()).isEqualTo(400);
        assertThat(h.note()).isEqualTo("kill of broker-1: 4 of 10 segments, p50 200 p99 400 max 400 ms");
        h.closedAfter(12);
        assertThat(h.note()).endsWith("(its close took 12 ms)");
    }

    @Test
    void noSegmentNoFigure() {
        assertThatThrownBy(() -> new Handovers("broker-2", "drain", 0, 10).percentile(50))
                .hasMessageContaining("no segment");
    }
}
