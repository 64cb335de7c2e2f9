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

    /** The table-driven shift against the plain one (one multiplication per set bit), over every length's size. */
    @Test
    void theShiftByHexDigitsIsTheShiftByBits() {
        Property.forAll("crc shift", 0x5eed_0501L, 5000, r -> {
            int crc = r.nextInt();
            long bytes = r.nextLong() >>> r.nextInt(64);
            assertThat(Crc32c.shift(crc, bytes)).as("shift by %d bytes", bytes).isEqualTo(bitwiseShift(crc, bytes));
        });
        assertThat(Crc32c.shift(0x1234_5678, 0)).isEqualTo(0x1234_5678);
    }

    private static int bitwiseShift(int crc, long bytes) {
        int x2n = 1 << 30; // x^(2^k), from k = 0
        int p = 1 << 31;
        long n = bytes;
        for (int k = 0; k < 3; k++) {
            x2n = Crc32c.multModP(x2n, x2n); // x^(2^3): one byte
        }
        while (n != 0) {
            if ((n & 1) != 0) {
                p = Crc32c.multModP(x2n, p);
            }
            x2n = Crc32c.multModP(x2n, x2n);
            n >>>= 1;
        }
        return Crc32c.multModP(p, crc);
    }
}
