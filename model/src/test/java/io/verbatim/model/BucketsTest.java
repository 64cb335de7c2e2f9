package io.verbatim.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;

class BucketsTest {

    @Test
    void equalWidthSplitsAreFloorOfIRingOverN() {
        assertThat(Buckets.of(1).splits()).isEmpty();
        assertThat(Buckets.of(2).splits()).containsExactly(32768);
        assertThat(Buckets.of(4).splits()).containsExactly(16384, 32768, 49152);
        assertThat(Buckets.of(3).splits()).containsExactly(21845, 43690);
        assertThat(Buckets.of(8).splits()).allMatch(s -> s % 8192 == 0).hasSize(7);
    }

    @Test
    void bucketOfCountsTheSplitsAtOrBelowTheHashForEveryHash() {
        for (int n : new int[] {1, 2, 3, 5, 7, 12, 64, 100, 1000, 1024, 32768}) {
            Buckets buckets = Buckets.of(n);
            List<Integer> splits = buckets.splits();
            int expected = 0;
            for (int h = 0; h <= HashRange.MAX_HASH; h++) {
                while (expected < splits.size() && splits.get(expected) <= h) {
                    expected++;
                }
                assertThat(buckets.bucketOf(h)).as("bucketOf(%d) with N=%d", h, n).isEqualTo(expected);
            }
        }
    }

    @Test
    void powerOfTwoBoundariesNest() {
        for (int n = 1; n <= 512; n *= 2) {
            assertThat(Buckets.of(2 * n).splits()).containsAll(Buckets.of(n).splits());
        }
    }

    @Test
    void splitAndMergeCountsAreAsPulsars() {
        assertThat(Buckets.of(4).forSplitChild()).isEqualTo(Buckets.of(2));
        assertThat(Buckets.of(1).forSplitChild()).isEqualTo(Buckets.of(1));
        assertThat(Buckets.of(2).mergedWith(Buckets.of(1))).isEqualTo(Buckets.of(3));
        assertThat(Buckets.forBudget(4, 1)).isEqualTo(Buckets.of(4));
        assertThat(Buckets.forBudget(4, 8)).isEqualTo(Buckets.of(1));
    }

    @Test
    void bucketRangesCoverTheRing() {
        Buckets b = Buckets.of(3);
        assertThat(b.range(0)).isEqualTo(HashRange.of(0, 21844));
        assertThat(b.range(2)).isEqualTo(HashRange.of(43690, 65535));
        assertThat(b.holdsInOneBucket(HashRange.of(0, 21844))).isTrue();
        assertThat(b.holdsInOneBucket(HashRange.of(21844, 21845))).isFalse();
    }

    @Test
    void rejectsCountsOutsideTheRange() {
        assertThatThrownBy(() -> Buckets.of(0)).hasMessageContaining("bucket count 0");
        assertThatThrownBy(() -> Buckets.of(32769)).hasMessageContaining("32769");
        assertThatThrownBy(() -> Buckets.of(4).bucketOf(65536)).hasMessageContaining("hashB 65536");
    }
}
