package io.verbatim.model.entry;

import static org.assertj.core.api.Assertions.assertThat;

import io.verbatim.model.Property;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

class SourcePositionTest {

    @Test
    void wholeEntriesUsePulsarsFormatAndPartsAddAnIndex() {
        assertThat(SourcePosition.of(12, 34).toProperty()).isEqualTo("12:34");
        assertThat(new SourcePosition(12, 34, 0).toProperty()).isEqualTo("12:34:0");
        assertThat(SourcePosition.parse("12:34")).isEqualTo(SourcePosition.of(12, 34));
        assertThat(SourcePosition.parse("12:34:5")).isEqualTo(new SourcePosition(12, 34, 5));
    }

    @Test
    void ordersLexicographicallyWithTheWholeEntryAfterItsParts() {
        List<SourcePosition> expected = List.of(new SourcePosition(1, 9, 3), SourcePosition.of(1, 9),
                new SourcePosition(2, 0, 0), new SourcePosition(2, 0, 1), SourcePosition.of(2, 0),
                SourcePosition.of(2, 1), SourcePosition.of(10, 0));
        List<SourcePosition> shuffled = new ArrayList<>(expected);
        Collections.shuffle(shuffled, new Random(4));
        Collections.sort(shuffled);
        assertThat(shuffled).containsExactlyElementsOf(expected);
    }

    @Test
    void propertyFormRoundTrips() {
        Property.forAll("source position round trip", 0x5eed_0400L, 1000, r -> {
            SourcePosition p = new SourcePosition(r.nextLong() & Long.MAX_VALUE, r.nextLong() & Long.MAX_VALUE,
                    r.nextInt(100) - 1);
            assertThat(SourcePosition.parse(p.toProperty())).isEqualTo(p);
        });
    }
}
