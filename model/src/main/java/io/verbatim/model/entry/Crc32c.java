package io.verbatim.model.entry;

import java.nio.ByteBuffer;
import java.util.zip.CRC32C;

/**
 * CRC32C and the algebra that lets a re-stamp keep the payload untouched. CRC is linear over GF(2):
 * {@code crc(A || B) = shift(crc(A), |B|) ^ crc(B)}, where {@code shift} multiplies by
 * {@code x^(8|B|)} modulo the polynomial (zlib's {@code crc32_combine}). So replacing the header
 * {@code A} by {@code A'} in front of an unchanged payload {@code B} gives
 * {@code crc(A' || B) = crc(A || B) ^ shift(crc(A) ^ crc(A'), |B|)}: O(log |B|), and a corrupt
 * payload stays detectably corrupt.
 */
final class Crc32c {
    /** Castagnoli, reflected. */
    private static final int POLY = 0x82F63B78;
    /** {@code X2N[k] = x^(2^k) mod P}, as far as a shift by any {@code long} count of bytes needs. */
    private static final int[] X2N = new int[3 + 64];
    /**
     * {@code X8N[j][v] = x^(8 * v * 16^j) mod P}: the shift for {@code v} bytes in the {@code j}-th hex digit of
     * a length, so a shift by n bytes takes one multiplication per non-zero hex digit of n (five for 100 KB)
     * rather than one per set bit.
     */
    private static final int[][] X8N = new int[16][16];

    static {
        int p = 1 << 30; // x^1
        X2N[0] = p;
        for (int k = 1; k < X2N.length; k++) {
            p = multModP(p, p);
            X2N[k] = p;
        }
        for (int j = 0; j < 16; j++) {
            for (int v = 0; v < 16; v++) {
                int q = 1 << 31; // x^0
                for (int b = 0; b < 4; b++) {
                    if ((v & (1 << b)) != 0) {
                        q = multModP(X2N[3 + 4 * j + b], q);
                    }
                }
                X8N[j][v] = q;
            }
        }
    }

    private Crc32c() {
    }

    /** The CRC32C of the remaining bytes; the buffer's position is not moved. */
    static int of(ByteBuffer... buffers) {
        CRC32C crc = new CRC32C();
        for (ByteBuffer b : buffers) {
            crc.update(b.duplicate());
        }
        return (int) crc.getValue();
    }

    /** The CRC of {@code newHead || tail} from the CRC of {@code oldHead || tail}, without reading the tail. */
    static int replaceHead(int crcOfWhole, int crcOfOldHead, int crcOfNewHead, long tailLength) {
        return crcOfWhole ^ shift(crcOfOldHead ^ crcOfNewHead, tailLength);
    }

    /** {@code crc * x^(8 * bytes) mod P}. */
    static int shift(int crc, long bytes) {
        int p = 1 << 31; // x^0
        for (int j = 0; bytes != 0; j++, bytes >>>= 4) {
            int digit = (int) (bytes & 15);
            if (digit != 0) {
                p = multModP(X8N[j][digit], p);
            }
        }
        return multModP(p, crc);
    }

    /** {@code a * b mod P}, bit-reflected; without branches on the data (they mispredict half the time). */
    static int multModP(int a, int b) {
        int p = 0;
        for (int i = 0; i < 32; i++) {
            p ^= b & (a >> 31); // the coefficient of x^i in a, spread to a mask
            a <<= 1;
            b = (b >>> 1) ^ (POLY & -(b & 1)); // b * x
        }
        return p;
    }
}
