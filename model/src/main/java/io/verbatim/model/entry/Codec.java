package io.verbatim.model.entry;

import io.verbatim.model.proto.CompressionType;
import java.nio.ByteBuffer;

/**
 * One of Pulsar's payload codecs. Bytes a codec writes decode with Pulsar's own codec of the same
 * type, and the other way round. Implementations are thread-safe and keep no state between calls
 * that a caller can see.
 */
public interface Codec {

    CompressionType type();

    /** Compresses the remaining bytes of {@code input} (its position is not moved). */
    ByteBuffer compress(ByteBuffer input);

    /**
     * Decompresses the remaining bytes of {@code input}, which must produce exactly
     * {@code uncompressedSize} bytes.
     *
     * @throws EntryFormatException {@code CORRUPT_PAYLOAD} when the bytes do not decode to that size
     */
    ByteBuffer decompress(ByteBuffer input, int uncompressedSize);

    /** The codec for {@code type}. */
    static Codec of(CompressionType type) {
        return Codecs.of(type);
    }
}
