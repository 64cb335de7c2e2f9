package io.verbatim.pulsar;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.verbatim.model.entry.SourcePosition;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** The wire form of source positions keeps Verbatim's order, decodes, and refuses what it cannot carry. */
class WirePositionsTest {

    @Test
    void keepsTheOrderAndDecodes() {
        long seed = 0x5eedL;
        SplittableRandom random = new SplittableRandom(seed);
        List<SourcePosition> positions = new ArrayList<>();
        for (int i = 0; i < 5_000; i++) {
            SourcePosition p = SourcePosition.of(random.nextLong(0, 4), random.nextLong(0, 1 << 20));
            positions.add(random.nextBoolean() ? p : p.withPart(random.nextInt(0, WirePositions.WHOLE)));
        }
        for (int i = 1; i < positions.size(); i++) {
            SourcePosition a = positions.get(i - 1);
            SourcePosition b = positions.get(i);
            assertThat(WirePositions.decode(WirePositions.encode(a))).as("seed %d: %s", seed, a).isEqualTo(a);
            assertThat(Integer.signum(WirePositions.encode(a).compareTo(WirePositions.encode(b))))
                    .as("seed %d: %s vs %s", seed, a, b).isEqualTo(Integer.signum(a.compareTo(b)));
            assertThat(WirePositions.encode(a).isWhole()).isTrue(); // two numbers, as the broker reads them
        }
    }

    @Test
    void aWholeEntryComesAfterItsPartsAndBeforeTheNextEntry() {
        SourcePosition whole = WirePositions.encode(SourcePosition.of(3, 7));
        assertThat(WirePositions.encode(SourcePosition.of(3, 7).withPart(0))).isLessThan(whole);
        assertThat(WirePositions.encode(SourcePosition.of(3, 7).withPart(WirePositions.WHOLE - 1))).isLessThan(whole);
        assertThat(WirePositions.encode(SourcePosition.of(3, 8).withPart(0))).isGreaterThan(whole);
        assertThat(whole.toProperty()).isEqualTo("3:" + (7L << 16 | 0xffff));
    }

    @Test
    void refusesWhatItCannotCarry() {
        assertThatThrownBy(() -> WirePositions.encode(SourcePosition.of(1, WirePositions.MAX_ENTRY_ID + 1)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("entry id");
        assertThatThrownBy(() -> WirePositions.encode(SourcePosition.of(1, 1).withPart(WirePositions.WHOLE)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("part 65535");
    }
}
