package io.verbatim.model;

import java.nio.charset.StandardCharsets;
import java.util.Optional;

/**
 * A key's routing hash: Pulsar's raw Murmur3_32 of the key bytes, split into two independent
 * 16-bit rings. The high half routes the key to a segment; the low half ({@code hashB}) picks the
 * entry bucket inside the segment (PIP-486). Hash once, read both halves.
 *
 * @param raw the unmasked 32-bit Murmur3 value (seed 0)
 */
public record KeyHash(int raw) {

    /** The hash of a key string: Murmur3 of its UTF-8 bytes. */
    public static KeyHash of(String key) {
        return ofBytes(key.getBytes(StandardCharsets.UTF_8));
    }

    /** The hash of raw key bytes (an ordering key, or a key already in UTF-8). */
    public static KeyHash ofBytes(byte[] key) {
        return new KeyHash(Murmur3.hash32(key));
    }

    /**
     * The hash a message's bucket is chosen by: the ordering key wins over the key where both
     * exist (Pulsar's {@code EntryBucketBatchContainer}).
     *
     * @param key the message key, if it has one
     * @param orderingKey the ordering key bytes, if it has them
     * @return the hash, or empty when the message is unkeyed (its {@code hashB} is 0)
     */
    public static Optional<KeyHash> ofMessage(Optional<String> key, Optional<byte[]> orderingKey) {
        if (orderingKey.isPresent() && orderingKey.get().length > 0) {
            return Optional.of(ofBytes(orderingKey.get()));
        }
        return key.map(KeyHash::of);
    }

    /** The segment-routing hash: the high 16 bits, {@code 0..0xFFFF}. */
    public int segmentHash() {
        return raw >>> 16;
    }

    /** The entry-bucket hash {@code hashB}: the low 16 bits, {@code 0..0xFFFF}. */
    public int hashB() {
        return raw & HashRange.MAX_HASH;
    }

    /** {@code hashB} of a message that may be unkeyed: unkeyed messages land in bucket 0. */
    public static int hashBOf(Optional<KeyHash> hash) {
        return hash.isEmpty() ? 0 : hash.get().hashB();
    }

    @Override
    public String toString() {
        return String.format("KeyHash[raw=%08x, segmentHash=%04x, hashB=%04x]", raw, segmentHash(), hashB());
    }
}
