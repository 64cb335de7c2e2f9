package io.verbatim.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.verbatim.model.proto.LayoutProto;
import org.junit.jupiter.api.Test;

class LayoutCodecTest {

    @Test
    void everyEvolvedLayoutSurvivesTheRoundTripThroughBytes() {
        Property.forAll("layout codec round trip", 0x5eed_0c0dL, 300, r -> {
            Layout layout = Generators.evolvedLayout(r, r.nextInt(12));
            LayoutProto bytes = LayoutProto.parseFrom(LayoutCodec.toProto(layout).toByteArray());
            assertThat(LayoutCodec.fromProto(bytes)).isEqualTo(layout);
        });
    }

    @Test
    void aRecordThatIsNoLayoutIsRefusedWithTheProblemNamed() {
        LayoutProto holes = LayoutCodec.toProto(Layout.initial(2, 1, 0)).toBuilder().removeSegments(1).build();
        assertThatThrownBy(() -> LayoutCodec.fromProto(holes)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("ring");
    }
}
