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
    /** {@code X2N[k] = x^(2^k) mod P}. */
    private static final int[] X2N = new int[32];

    static {
        int p = 1 << 30; // x^1
        X2N[0] = p;
        for (int k = 1; k < 32; k++) {
            p = multModP(p, p);
            X2N[k] = p;
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
        return multModP(x2nModP(bytes, 3), crc);
    }

    private static int x2nModP(long n, int k) {
        int p = 1 << 31; // x^0
        while (n != 0) {
            if ((n & 1) != 0) {
                p = multModP(X2N[k & 31], p);
            }
            n >>>= 1;
            k++;
        }
        return p;
    }

    private static int multModP(int a, int b) {
        int m = 1 << 31;
        int p = 0;
        while (true) {
            if ((a & m) != 0) {
                p ^= b;
                if ((a & (m - 1)) == 0) {
                    break;
                }
            }
            m >>>= 1;
            b = (b & 1) != 0 ? (b >>> 1) ^ POLY : b >>> 1;
        }
        return p;
    }
}
