package io.verbatim.bench;

import io.verbatim.model.entry.Batch;
import io.verbatim.model.entry.Codec;
import io.verbatim.model.proto.CompressionType;
import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * The slow path's codec cost per batch: decompress then re-compress a 100 x 1 KiB batch with the same
 * codec (PIP-495's default for re-batched parts).
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class CodecBenchmark {
    @Param({"NONE", "LZ4", "ZLIB", "ZSTD", "SNAPPY"})
    public CompressionType codec;

    private Codec impl;
    private ByteBuffer compressed;
    private int uncompressedSize;

    @Setup
    public void setUp() {
        ByteBuffer uncompressed = Batch.encode(Workloads.messages(42, 100, 1024));
        uncompressedSize = uncompressed.remaining();
        impl = Codec.of(codec);
        compressed = impl.compress(uncompressed);
    }

    @Benchmark
    public ByteBuffer decompressAndCompress() {
        return impl.compress(impl.decompress(compressed, uncompressedSize));
    }

    @Benchmark
    public ByteBuffer decompress() {
        return impl.decompress(compressed, uncompressedSize);
    }
}
