package io.verbatim.model.entry;

import static org.assertj.core.api.Assertions.assertThat;

import io.verbatim.model.Property;
import java.nio.ByteBuffer;
import org.junit.jupiter.api.Test;

class Crc32cTest {

    @Test
    void replacingTheHeadMatchesAFullRecomputation() {
        Property.forAll("crc head replacement", 0x5eed_0500L, 2000, r -> {
            byte[] oldHead = new byte[r.nextInt(300)];
            byte[] newHead = new byte[r.nextInt(300)];
            byte[] tail = new byte[r.nextInt(10) == 0 ? 0 : r.nextInt(100_000)];
            r.nextBytes(oldHead);
            r.nextBytes(newHead);
            r.nextBytes(tail);
            int whole = Crc32c.of(ByteBuffer.wrap(oldHead), ByteBuffer.wrap(tail));
            int derived = Crc32c.replaceHead(whole, Crc32c.of(ByteBuffer.wrap(oldHead)),
                    Crc32c.of(ByteBuffer.wrap(newHead)), tail.length);
            assertThat(derived).isEqualTo(Crc32c.of(ByteBuffer.wrap(newHead), ByteBuffer.wrap(tail)));
        });
    }
}
