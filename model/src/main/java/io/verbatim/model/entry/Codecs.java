package io.verbatim.model.entry;

import com.github.luben.zstd.Zstd;
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
import net.jpountz.lz4.LZ4Factory;
import net.jpountz.lz4.LZ4SafeDecompressor;
import org.jspecify.annotations.Nullable;

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

    /**
     * The bytes of a buffer as an array slice, without copying when the buffer is a writable heap buffer;
     * else copied into {@code scratch} (a read-only view, as a stored entry's payload is, hides its array).
     */
    record Slice(byte[] array, int offset, int length) {
        static Slice of(ByteBuffer b, Scratch scratch) {
            if (b.hasArray()) {
                return new Slice(b.array(), b.arrayOffset() + b.position(), b.remaining());
            }
            byte[] copy = scratch.atLeast(b.remaining());
            b.duplicate().get(copy, 0, b.remaining());
            return new Slice(copy, 0, b.remaining());
        }
    }

    private static EntryFormatException corrupt(CompressionType type, int expected, @Nullable Object detail) {
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

    /**
     * A codec over array slices: compress into a per-thread buffer of the worst-case size and copy out
     * exactly the compressed bytes, decompress into exactly the declared size. The subclasses say only how
     * to call their library.
     */
    abstract static class ArrayCodec implements Codec {
        /** A read-only input's bytes, for the call. */
        private static final Scratch INPUT = new Scratch();
        /** The worst-case output of a compression, for the call. */
        private static final Scratch OUTPUT = new Scratch();

        abstract int maxCompressedLength(int length);

        /** Compresses {@code in} into {@code out} (which may be longer than needed); returns the compressed length. */
        abstract int compress(Slice in, byte[] out);

        /** Decompresses {@code in} into at most the first {@code length} bytes of {@code out}; returns how many. */
        abstract int decompress(Slice in, byte[] out, int length) throws Exception;

        @Override
        public final ByteBuffer compress(ByteBuffer input) {
            Slice in = Slice.of(input, INPUT);
            byte[] out = OUTPUT.atLeast(maxCompressedLength(in.length()));
            return ByteBuffer.wrap(Arrays.copyOf(out, compress(in, out)));
        }

        @Override
        public final ByteBuffer decompress(ByteBuffer input, int uncompressedSize) {
            return decompress(input, uncompressedSize, new byte[uncompressedSize]);
        }

        /**
         * {@link #decompress(ByteBuffer, int)} into the start of {@code out} (at least that long, as a
         * caller's scratch is): a buffer over exactly those bytes.
         */
        final ByteBuffer decompress(ByteBuffer input, int uncompressedSize, byte[] out) {
            try {
                int produced = decompress(Slice.of(input, INPUT), out, uncompressedSize);
                if (produced != uncompressedSize) {
                    throw corrupt(type(), uncompressedSize, "got " + produced);
                }
                return ByteBuffer.wrap(out, 0, uncompressedSize).slice();
            } catch (EntryFormatException e) {
                throw e;
            } catch (Exception e) {
                // The libraries signal bad input with their own exceptions, some unchecked.
                throw corrupt(type(), uncompressedSize, e.getMessage());
            }
        }
    }

    static final class Lz4 extends ArrayCodec {
        private static final LZ4Factory FACTORY = LZ4Factory.fastestInstance();
        private final LZ4Compressor compressor = FACTORY.fastCompressor();
        private final LZ4SafeDecompressor decompressor = FACTORY.safeDecompressor();

        @Override
        public CompressionType type() {
            return CompressionType.LZ4;
        }

        @Override
        int maxCompressedLength(int length) {
            return compressor.maxCompressedLength(length);
        }

        @Override
        int compress(Slice in, byte[] out) {
            return compressor.compress(in.array(), in.offset(), in.length(), out, 0, out.length);
        }

        @Override
        int decompress(Slice in, byte[] out, int length) {
            return decompressor.decompress(in.array(), in.offset(), in.length(), out, 0, length);
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

    static final class Zstandard extends ArrayCodec {
        /** Pulsar's default ({@code pulsar.compression.zstdCompressionLevel}). */
        static final int LEVEL = 3;

        @Override
        public CompressionType type() {
            return CompressionType.ZSTD;
        }

        @Override
        int maxCompressedLength(int length) {
            return (int) Zstd.compressBound(length);
        }

        @Override
        int compress(Slice in, byte[] out) {
            return (int) Zstd.compressByteArray(out, 0, out.length, in.array(), in.offset(), in.length(), LEVEL);
        }

        @Override
        int decompress(Slice in, byte[] out, int length) {
            return (int) Zstd.decompressByteArray(out, 0, length, in.array(), in.offset(), in.length());
        }
    }

    static final class Snappy extends ArrayCodec {
        private final SnappyCompressor compressor = new SnappyCompressor();
        private final SnappyDecompressor decompressor = new SnappyDecompressor();

        @Override
        public CompressionType type() {
            return CompressionType.SNAPPY;
        }

        @Override
        int maxCompressedLength(int length) {
            return compressor.maxCompressedLength(length);
        }

        @Override
        int compress(Slice in, byte[] out) {
            return compressor.compress(in.array(), in.offset(), in.length(), out, 0, out.length);
        }

        @Override
        int decompress(Slice in, byte[] out, int length) {
            long declared = SnappyDecompressor.getUncompressedLength(in.array(), in.offset());
            if (declared != length) {
                throw corrupt(type(), length, "the Snappy preamble declares " + declared);
            }
            return decompressor.decompress(in.array(), in.offset(), in.length(), out, 0, length);
        }
    }
}
