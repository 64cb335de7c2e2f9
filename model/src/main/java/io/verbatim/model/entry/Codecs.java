package io.verbatim.model.entry;

import com.github.luben.zstd.Zstd;
import com.github.luben.zstd.ZstdException;
import io.airlift.compress.MalformedInputException;
import io.airlift.compress.snappy.SnappyCompressor;
import io.airlift.compress.snappy.SnappyDecompressor;
import io.verbatim.model.entry.EntryFormatException.Problem;
import io.verbatim.model.proto.CompressionType;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.Map;
import java.util.zip.DataFormatException;
import java.util.zip.Deflater;
import java.util.zip.Inflater;
import net.jpountz.lz4.LZ4Compressor;
import net.jpountz.lz4.LZ4Exception;
import net.jpountz.lz4.LZ4Factory;
import net.jpountz.lz4.LZ4SafeDecompressor;

/**
 * The five codecs with Pulsar's formats: LZ4 raw block, ZLIB stream (sync-flushed, as Pulsar writes
 * it), ZSTD frame at level 3, Snappy raw block. LZ4 and ZSTD use the native bindings (faster than the
 * pure-Java aircompressor Pulsar ships, same bytes on the wire); Snappy uses aircompressor, as Pulsar.
 */
final class Codecs {
    private static final Map<CompressionType, Codec> BY_TYPE = new EnumMap<>(CompressionType.class);

    static {
        for (Codec c : new Codec[] {new None(), new Lz4(), new Zlib(), new Zstandard(), new Snappy()}) {
            BY_TYPE.put(c.type(), c);
        }
    }

    private Codecs() {
    }

    static Codec of(CompressionType type) {
        Codec codec = BY_TYPE.get(type);
        if (codec == null) {
            throw new EntryFormatException(Problem.UNKNOWN_CODEC, "no codec for compression type " + type);
        }
        return codec;
    }

    /** The bytes of a buffer as an array slice, without copying when the buffer is a heap buffer. */
    record Slice(byte[] array, int offset, int length) {
        static Slice of(ByteBuffer b) {
            if (b.hasArray()) {
                return new Slice(b.array(), b.arrayOffset() + b.position(), b.remaining());
            }
            byte[] copy = new byte[b.remaining()];
            b.duplicate().get(copy);
            return new Slice(copy, 0, copy.length);
        }
    }

    private static EntryFormatException corrupt(CompressionType type, int expected, Object detail) {
        return new EntryFormatException(Problem.CORRUPT_PAYLOAD, type + " payload does not decompress to the declared "
                + expected + " bytes: " + detail);
    }

    private static ByteBuffer exactly(CompressionType type, byte[] out, int produced, int expected) {
        if (produced != expected) {
            throw corrupt(type, expected, "got " + produced);
        }
        return ByteBuffer.wrap(out);
    }

    static final class None implements Codec {
        @Override
        public CompressionType type() {
            return CompressionType.NONE;
        }

        @Override
        public ByteBuffer compress(ByteBuffer input) {
            return input.asReadOnlyBuffer();
        }

        @Override
        public ByteBuffer decompress(ByteBuffer input, int uncompressedSize) {
            if (input.remaining() != uncompressedSize) {
                throw corrupt(type(), uncompressedSize, "an uncompressed payload of " + input.remaining() + " bytes");
            }
            return input.asReadOnlyBuffer();
        }
    }

    static final class Lz4 implements Codec {
        private static final LZ4Factory FACTORY = LZ4Factory.fastestInstance();
        private final LZ4Compressor compressor = FACTORY.fastCompressor();
        private final LZ4SafeDecompressor decompressor = FACTORY.safeDecompressor();

        @Override
        public CompressionType type() {
            return CompressionType.LZ4;
        }

        @Override
        public ByteBuffer compress(ByteBuffer input) {
            Slice in = Slice.of(input);
            byte[] out = new byte[compressor.maxCompressedLength(in.length())];
            int n = compressor.compress(in.array(), in.offset(), in.length(), out, 0, out.length);
            return ByteBuffer.wrap(out, 0, n).slice();
        }

        @Override
        public ByteBuffer decompress(ByteBuffer input, int uncompressedSize) {
            Slice in = Slice.of(input);
            byte[] out = new byte[uncompressedSize];
            try {
                int n = decompressor.decompress(in.array(), in.offset(), in.length(), out, 0, uncompressedSize);
                return exactly(type(), out, n, uncompressedSize);
            } catch (LZ4Exception e) {
                throw corrupt(type(), uncompressedSize, e.getMessage());
            }
        }
    }

    /**
     * Pulsar deflates at the default level with {@code SYNC_FLUSH} and never finishes the stream; it
     * inflates exactly the declared size. Both finished and sync-flushed streams are read here.
     */
    static final class Zlib implements Codec {
        private static final ThreadLocal<Deflater> DEFLATER = ThreadLocal.withInitial(Deflater::new);
        private static final ThreadLocal<Inflater> INFLATER = ThreadLocal.withInitial(Inflater::new);

        @Override
        public CompressionType type() {
            return CompressionType.ZLIB;
        }

        @Override
        public ByteBuffer compress(ByteBuffer input) {
            Deflater deflater = DEFLATER.get();
            deflater.reset();
            deflater.setInput(input.duplicate());
            byte[] out = new byte[Math.max(64, input.remaining() + input.remaining() / 1000 + 64)];
            int length = 0;
            while (true) {
                length += deflater.deflate(out, length, out.length - length, Deflater.SYNC_FLUSH);
                if (length < out.length && deflater.needsInput()) {
                    break;
                }
                out = Arrays.copyOf(out, out.length * 2);
            }
            return ByteBuffer.wrap(out, 0, length).slice();
        }

        @Override
        public ByteBuffer decompress(ByteBuffer input, int uncompressedSize) {
            Inflater inflater = INFLATER.get();
            inflater.reset();
            inflater.setInput(input.duplicate());
            byte[] out = new byte[uncompressedSize];
            try {
                int n = 0;
                while (n < uncompressedSize) {
                    int step = inflater.inflate(out, n, uncompressedSize - n);
                    if (step == 0 && (inflater.finished() || inflater.needsInput() || inflater.needsDictionary())) {
                        break;
                    }
                    n += step;
                }
                if (n == uncompressedSize && inflater.inflate(new byte[1]) > 0) {
                    throw corrupt(type(), uncompressedSize, "the stream holds more");
                }
                return exactly(type(), out, n, uncompressedSize);
            } catch (DataFormatException e) {
                throw corrupt(type(), uncompressedSize, e.getMessage());
            }
        }
    }

    static final class Zstandard implements Codec {
        /** Pulsar's default ({@code pulsar.compression.zstdCompressionLevel}). */
        static final int LEVEL = 3;

        @Override
        public CompressionType type() {
            return CompressionType.ZSTD;
        }

        @Override
        public ByteBuffer compress(ByteBuffer input) {
            Slice in = Slice.of(input);
            byte[] out = new byte[(int) Zstd.compressBound(in.length())];
            long n = Zstd.compressByteArray(out, 0, out.length, in.array(), in.offset(), in.length(), LEVEL);
            return ByteBuffer.wrap(out, 0, (int) n).slice();
        }

        @Override
        public ByteBuffer decompress(ByteBuffer input, int uncompressedSize) {
            Slice in = Slice.of(input);
            byte[] out = new byte[uncompressedSize];
            try {
                long n = Zstd.decompressByteArray(out, 0, uncompressedSize, in.array(), in.offset(), in.length());
                return exactly(type(), out, (int) n, uncompressedSize);
            } catch (ZstdException e) {
                throw corrupt(type(), uncompressedSize, e.getMessage());
            }
        }
    }

    static final class Snappy implements Codec {
        private final SnappyCompressor compressor = new SnappyCompressor();
        private final SnappyDecompressor decompressor = new SnappyDecompressor();

        @Override
        public CompressionType type() {
            return CompressionType.SNAPPY;
        }

        @Override
        public ByteBuffer compress(ByteBuffer input) {
            Slice in = Slice.of(input);
            byte[] out = new byte[compressor.maxCompressedLength(in.length())];
            int n = compressor.compress(in.array(), in.offset(), in.length(), out, 0, out.length);
            return ByteBuffer.wrap(out, 0, n).slice();
        }

        @Override
        public ByteBuffer decompress(ByteBuffer input, int uncompressedSize) {
            Slice in = Slice.of(input);
            try {
                long declared = SnappyDecompressor.getUncompressedLength(in.array(), in.offset());
                if (declared != uncompressedSize) {
                    throw corrupt(type(), uncompressedSize, "the Snappy preamble declares " + declared);
                }
                byte[] out = new byte[uncompressedSize];
                int n = decompressor.decompress(in.array(), in.offset(), in.length(), out, 0, uncompressedSize);
                return exactly(type(), out, n, uncompressedSize);
            } catch (MalformedInputException | IllegalArgumentException | ArrayIndexOutOfBoundsException e) {
                throw corrupt(type(), uncompressedSize, e.getMessage());
            }
        }
    }
}
