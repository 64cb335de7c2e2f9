package io.verbatim.model;

import static org.assertj.core.api.Assertions.assertThat;

import io.verbatim.model.proto.CompressionType;
import org.junit.jupiter.api.Test;

class CompressionTest {

    @Test
    void everyCodecRoundTripsThroughTheWireEnumUnderItsOwnName() {
        assertThat(Compression.values()).hasSameSizeAs(CompressionType.values());
        for (CompressionType proto : CompressionType.values()) {
            Compression codec = Compression.of(proto);
            assertThat(codec.name()).isEqualTo(proto.name());
            assertThat(codec.proto()).isEqualTo(proto);
        }
    }
}
