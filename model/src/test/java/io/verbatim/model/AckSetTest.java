package io.verbatim.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** The grow-only set of acknowledged origin ordinals: by example, and against a bitset model (seeded). */
class AckSetTest {

    @Test
    void contiguousAcknowledgementsFoldIntoThrough() {
        AckSet set = new AckSet().acknowledge(0).acknowledge(2).acknowledge(3);
        assertThat(set.through()).isZero();
        assertThat(set.rangeCount()).isEqualTo(1);
        set.acknowledge(1);
        assertThat(set.through()).isEqualTo(3);
        assertThat(set.rangeCount()).isZero();
    }

    @Test
    void outOfOrderAcknowledgementsAreKeptAsRanges() {
        AckSet set = new AckSet().acknowledge(5, 7).acknowledge(9).acknowledge(8);
        assertThat(set.through()).isEqualTo(AckSet.NONE);
        assertThat(set.ranges()).containsExactly(new long[] {5, 9});
        assertThat(set.contains(4)).isFalse();
        assertThat(set.contains(7)).isTrue();
        assertThat(set.contains(10)).isFalse();
    }

    @Test
    void boundingDropsTheHighestRangesOnly() {
        AckSet set = AckSet.of(3, List.of(new long[] {5, 5}, new long[] {7, 8}, new long[] {10, 12}));
        AckSet two = set.bounded(2);
        assertThat(two.through()).isEqualTo(3);
        assertThat(two.ranges()).containsExactly(new long[] {5, 5}, new long[] {7, 8});
        assertThat(set.rangeCount()).as("the set itself is kept whole").isEqualTo(3);
    }

    @Test
    void theLagCountsWhatOneSideHoldsAndTheOtherLacks() {
        AckSet a = AckSet.of(9, List.of(new long[] {12, 14}));
        AckSet b = AckSet.of(4, List.of(new long[] {13, 20}));
        assertThat(a.missingFrom(b, 100)).as("5..9 and 12").isEqualTo(6);
        assertThat(b.missingFrom(a, 100)).as("15..20").isEqualTo(6);
        assertThat(a.missingFrom(b, 7)).as("5..7").isEqualTo(3);
    }

    @Test
    void badRangesAreRefused() {
        assertThatThrownBy(() -> new AckSet().acknowledge(5, 4)).hasMessageContaining("5..4");
        assertThatThrownBy(() -> new AckSet().acknowledge(-1)).hasMessageContaining("-1..-1");
        assertThatThrownBy(() -> AckSet.of(0, List.of(new long[] {1}))).hasMessageContaining("[start, end]");
    }

    /**
     * Random acknowledgements (single, ranges, through) against a bitset, and unions of random sets: contains agrees
     * with the model; union is commutative, associative and idempotent; bounding never claims what was not
     * acknowledged and keeps {@code through}.
     */
    @Test
    void agreesWithABitsetAndUnitesLikeASet() {
        long seed = Long.getLong("verbatim.seed", 26_002L);
        int cases = 500 * Integer.getInteger("verbatim.scale", 1);
        Random seeds = new Random(seed);
        for (int c = 0; c < cases; c++) {
            long caseSeed = seeds.nextLong();
            Random r = new Random(caseSeed);
            try {
                List<AckSet> sets = new ArrayList<>();
                List<BitSet> models = new ArrayList<>();
                for (int k = 0; k < 3; k++) {
                    AckSet set = new AckSet();
                    BitSet model = new BitSet();
                    for (int i = 0, n = r.nextInt(40); i < n; i++) {
                        int kind = r.nextInt(10);
                        int a = r.nextInt(200);
                        if (kind == 0) {
                            set.acknowledgeThrough(a);
                            model.set(0, a + 1);
                        } else if (kind < 4) {
                            int b = a + r.nextInt(10);
                            set.acknowledge(a, b);
                            model.set(a, b + 1);
                        } else {
                            set.acknowledge(a);
                            model.set(a);
                        }
                    }
                    for (int o = 0; o < 220; o++) {
                        assertThat(set.contains(o)).as("ordinal %d of %s", o, set).isEqualTo(model.get(o));
                    }
                    assertThat(set.through()).isEqualTo(model.nextClearBit(0) - 1);
                    sets.add(set);
                    models.add(model);
                }
                AckSet ab = sets.get(0).copy().union(sets.get(1));
                AckSet ba = sets.get(1).copy().union(sets.get(0));
                assertThat(ab).isEqualTo(ba);
                assertThat(ab.copy().union(sets.get(2))).isEqualTo(sets.get(0).copy().union(
                        sets.get(1).copy().union(sets.get(2))));
                assertThat(ab.copy().union(ab)).isEqualTo(ab);
                BitSet both = (BitSet) models.get(0).clone();
                both.or(models.get(1));
                for (int o = 0; o < 220; o++) {
                    assertThat(ab.contains(o)).isEqualTo(both.get(o));
                }
                AckSet bounded = ab.bounded(r.nextInt(3));
                assertThat(bounded.through()).isEqualTo(ab.through());
                for (int o = 0; o < 220; o++) {
                    if (bounded.contains(o)) {
                        assertThat(ab.contains(o)).as("bounded claims %d", o).isTrue();
                    }
                }
                assertThat(ab.missingFrom(sets.get(0), 219)).isEqualTo(
                        both.cardinality() - models.get(0).cardinality());
            } catch (AssertionError e) {
                throw new AssertionError("case " + c + " (case seed " + caseSeed + ") failed; replay with"
                        + " -Dverbatim.seed=" + seed + ": " + e.getMessage(), e);
            }
        }
    }
}
