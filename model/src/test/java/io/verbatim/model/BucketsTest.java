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
        assertThat(Buckets.of(8).splits()).allMatch(s -> s % 8192 == 0).hasSize(7);
    }

    @Test
    void bucketOfCountsTheSplitsAtOrBelowTheHashForEveryHash() {
        for (int n : new int[] {1, 2, 4, 8, 64, 128, 1024, 32768}) {
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
        assertThat(Buckets.of(2).mergedWith(Buckets.of(2))).isEqualTo(Buckets.of(4));
        assertThat(Buckets.forBudget(4, 1)).isEqualTo(Buckets.of(4));
        assertThat(Buckets.forBudget(4, 8)).isEqualTo(Buckets.of(1));
    }

    @Test
    void countsAreAlwaysPowersOfTwoWherePulsarWouldComputeAnother() {
        assertThat(Buckets.of(2).mergedWith(Buckets.of(1))).as("2 + 1 rounds down").isEqualTo(Buckets.of(2));
        assertThat(Buckets.forBudget(6, 1)).as("budget 6 rounds down").isEqualTo(Buckets.of(4));
        assertThat(Buckets.forBudget(100, 3)).isEqualTo(Buckets.of(32));
        assertThat(Buckets.of(32768).mergedWith(Buckets.of(32768))).isEqualTo(Buckets.of(32768));
        assertThat(Buckets.floorCount(1000)).isEqualTo(512);
        assertThat(Buckets.floorCount(0)).isEqualTo(1);
        for (int n : new int[] {3, 5, 6, 12, 1000}) {
            assertThat(Buckets.isValidCount(n)).isFalse();
            assertThatThrownBy(() -> Buckets.of(n)).hasMessageContaining("bucket count " + n + " is not a power of two");
        }
    }

    @Test
    void bucketRangesCoverTheRing() {
        Buckets b = Buckets.of(4);
        assertThat(b.range(0)).isEqualTo(HashRange.of(0, 16383));
        assertThat(b.range(3)).isEqualTo(HashRange.of(49152, 65535));
        assertThat(b.holdsInOneBucket(HashRange.of(0, 16383))).isTrue();
        assertThat(b.holdsInOneBucket(HashRange.of(16383, 16384))).isFalse();
    }

    @Test
    void rejectsCountsOutsideTheRange() {
        assertThatThrownBy(() -> Buckets.of(0)).hasMessageContaining("bucket count 0");
        assertThatThrownBy(() -> Buckets.of(32769)).hasMessageContaining("32769");
        assertThatThrownBy(() -> Buckets.of(4).bucketOf(65536)).hasMessageContaining("hashB 65536");
    }
}
