package io.verbatim.model;

import io.verbatim.model.proto.CompressionType;

/**
 * The codec of an entry's payload, as the modules and their users name it: Pulsar's five codecs. The
 * generated {@link CompressionType} stays the wire format, inside the entry format; this enum is what
 * crosses module boundaries (a producer's codec, the slow-path budget's codec weights, the configuration).
 */
public enum Compression {
    NONE(CompressionType.NONE),
    LZ4(CompressionType.LZ4),
    ZLIB(CompressionType.ZLIB),
    ZSTD(CompressionType.ZSTD),
    SNAPPY(CompressionType.SNAPPY);

    private final CompressionType proto;

    Compression(CompressionType proto) {
        this.proto = proto;
    }

    /** The wire value written into an entry's {@code MessageMetadata}. */
    public CompressionType proto() {
        return proto;
    }

    /** The codec an entry's metadata names. */
    public static Compression of(CompressionType proto) {
        return switch (proto) {
            case NONE -> NONE;
            case LZ4 -> LZ4;
            case ZLIB -> ZLIB;
            case ZSTD -> ZSTD;
            case SNAPPY -> SNAPPY;
        };
    }
}
