package io.verbatim.bench;

import io.verbatim.model.KeyHash;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/** Routing hash of a typical key (UTF-8 encode + Murmur3_32). */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class HashBenchmark {
    private String[] keys;
    private int next;

    @Setup
    public void setUp() {
        Random r = new Random(1);
        keys = new String[1024];
        for (int i = 0; i < keys.length; i++) {
            keys[i] = "customer-" + r.nextInt(1_000_000);
        }
    }

    @Benchmark
    public int keyHash() {
        KeyHash h = KeyHash.of(keys[next++ & 1023]);
        return h.segmentHash() ^ h.hashB();
    }
}
