package io.verbatim.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class HashRangeTest {

    @Test
    void midpointSplitOfTheFullRingIsPulsars() {
        HashRange full = HashRange.FULL;
        assertThat(full.midpoint()).isEqualTo(32767);
        assertThat(full.lowerPart(full.midpointBoundary())).isEqualTo(HashRange.of(0, 32767));
        assertThat(full.upperPart(full.midpointBoundary())).isEqualTo(HashRange.of(32768, 65535));
    }

    @Test
    void midpointUsesIntegerDivision() {
        HashRange r = HashRange.of(10, 13);
        assertThat(r.midpoint()).isEqualTo(11);
        assertThat(HashRange.of(5, 5).canSplitAt(HashRange.of(5, 5).midpointBoundary())).isFalse();
    }

    @Test
    void rejectsValuesOffTheRingWithTheValueInTheMessage() {
        assertThatThrownBy(() -> HashRange.of(-1, 3)).hasMessageContaining("start -1");
        assertThatThrownBy(() -> HashRange.of(0, 65536)).hasMessageContaining("end 65536");
        assertThatThrownBy(() -> HashRange.of(9, 3)).hasMessageContaining("below its start 9");
    }

    @Test
    void containmentAdjacencyAndMerge() {
        HashRange a = HashRange.of(0, 99);
        HashRange b = HashRange.of(100, 200);
        assertThat(a.isAdjacentTo(b)).isTrue();
        assertThat(b.isAdjacentTo(a)).isTrue();
        assertThat(a.merge(b)).isEqualTo(HashRange.of(0, 200));
        assertThat(HashRange.of(0, 200).contains(b)).isTrue();
        assertThat(a.contains(b)).isFalse();
        assertThatThrownBy(() -> a.merge(HashRange.of(101, 200))).hasMessageContaining("not adjacent");
    }

    @Test
    void hexFormsRoundTrip() {
        HashRange r = HashRange.of(0, 0x7fff);
        assertThat(r.toHexString()).isEqualTo("0000-7fff");
        assertThat(r).hasToString("[0000, 7fff]");
        assertThat(HashRange.fromHexString("8000-ffff")).isEqualTo(HashRange.of(0x8000, 0xffff));
        assertThatThrownBy(() -> HashRange.fromHexString("80-ffff")).hasMessageContaining("'80-ffff'");
        assertThatThrownBy(() -> HashRange.fromHexString("zzzz-ffff")).hasMessageContaining("not hexadecimal");
    }
}
