package io.verbatim.model;

/**
 * MurmurHash3 x86_32 with seed 0, unmasked: the value Pulsar's {@code Murmur3_32Hash.makeRawHash}
 * returns and scalable topics route by. (Pulsar's {@code makeHash} clears bit 31; routing must
 * not, or the high half could never reach {@code 0x8000..0xFFFF}.)
 */
final class Murmur3 {
    private static final int C1 = 0xcc9e2d51;
    private static final int C2 = 0x1b873593;

    private Murmur3() {
    }

    static int hash32(byte[] data) {
        return hash32(data, 0, data.length);
    }

    @SuppressWarnings("fallthrough") // the tail bytes accumulate, as in the reference implementation
    static int hash32(byte[] data, int offset, int length) {
        int h = 0;
        int blockEnd = offset + (length & ~3);
        for (int i = offset; i < blockEnd; i += 4) {
            int k = (data[i] & 0xff)
                    | (data[i + 1] & 0xff) << 8
                    | (data[i + 2] & 0xff) << 16
                    | (data[i + 3] & 0xff) << 24;
            h ^= mixK(k);
            h = Integer.rotateLeft(h, 13) * 5 + 0xe6546b64;
        }
        int k = 0;
        switch (length & 3) {
            case 3:
                k ^= (data[blockEnd + 2] & 0xff) << 16;
                // fall through
            case 2:
                k ^= (data[blockEnd + 1] & 0xff) << 8;
                // fall through
            case 1:
                k ^= data[blockEnd] & 0xff;
                h ^= mixK(k);
                break;
            default:
                break;
        }
        return fmix32(h ^ length);
    }

    private static int mixK(int k) {
        return Integer.rotateLeft(k * C1, 15) * C2;
    }

    private static int fmix32(int h) {
        h ^= h >>> 16;
        h *= 0x85ebca6b;
        h ^= h >>> 13;
        h *= 0xc2b2ae35;
        h ^= h >>> 16;
        return h;
    }
}
