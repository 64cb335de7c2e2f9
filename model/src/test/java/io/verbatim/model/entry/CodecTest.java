package io.verbatim.model.entry;

import static org.assertj.core.api.Assertions.assertThat;

import io.verbatim.model.Property;
import io.verbatim.model.proto.CompressionType;
import java.nio.ByteBuffer;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

class CodecTest {

    @ParameterizedTest
    @EnumSource(CompressionType.class)
    void roundTripsHeapDirectAndEmptyBuffers(CompressionType type) {
        Codec codec = Codec.of(type);
        Property.forAll(type + " round trip", 0x5eed_0300L + type.getNumber(), 300, r -> {
            byte[] data = Sample.payload(r, r.nextInt(10) == 0 ? 0 : r.nextInt(200_000));
            ByteBuffer input = r.nextBoolean() ? ByteBuffer.wrap(data)
                    : ByteBuffer.allocateDirect(data.length).put(data).flip();
            ByteBuffer compressed = codec.compress(input);
            assertThat(input.remaining()).isEqualTo(data.length);
            ByteBuffer copy = ByteBuffer.allocateDirect(compressed.remaining()).put(compressed.duplicate()).flip();
            assertThat(codec.decompress(r.nextBoolean() ? compressed : copy, data.length))
                    .isEqualTo(ByteBuffer.wrap(data));
        });
    }

    /** The per-thread scratch never leaks into a result: earlier outputs survive later calls, of any size. */
    @ParameterizedTest
    @EnumSource(CompressionType.class)
    void resultsOwnTheirBytesAcrossCalls(CompressionType type) {
        Codec codec = Codec.of(type);
        Property.forAll(type + " scratch", 0x5eed_0400L + type.getNumber(), 50, r -> {
            byte[] first = Sample.payload(r, r.nextInt(100_000));
            byte[] second = Sample.payload(r, r.nextInt(200_000));
            ByteBuffer a = codec.compress(ByteBuffer.wrap(first).asReadOnlyBuffer());
            ByteBuffer aCopy = ByteBuffer.allocate(a.remaining()).put(a.duplicate()).flip();
            ByteBuffer b = codec.compress(ByteBuffer.wrap(second));
            ByteBuffer backA = codec.decompress(a.asReadOnlyBuffer(), first.length);
            ByteBuffer backB = codec.decompress(b.asReadOnlyBuffer(), second.length);
            assertThat(a).isEqualTo(aCopy);
            assertThat(backA).isEqualTo(ByteBuffer.wrap(first));
            assertThat(backB).isEqualTo(ByteBuffer.wrap(second));
        });
    }
}
