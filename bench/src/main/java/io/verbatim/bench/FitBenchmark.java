package io.verbatim.bench;

import io.verbatim.model.EntryFacts;
import io.verbatim.model.Fit;
import io.verbatim.model.HashRange;
import io.verbatim.model.Layout;
import io.verbatim.model.Mutation;
import io.verbatim.model.Segment;
import io.verbatim.model.Stamp;
import java.util.Comparator;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/** Fit classification of stamped batches against a 64-segment destination (N=4 each). */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class FitBenchmark {
    private Layout destination;
    private HashRange[] sources;
    private EntryFacts[] entries;
    private int next;

    @Setup
    public void setUp() {
        Layout layout = Layout.initial(1, 4, 0);
        while (layout.activeSegments().size() < 64) {
            Segment widest = layout.activeSegments().stream()
                    .max(Comparator.comparingInt(s -> s.range().size())).orElseThrow();
            layout = layout.apply(Mutation.split(widest.id()), layout.epoch(), 0).layoutOrThrow();
            for (Segment s : layout.activeSegments()) {
                if (s.buckets().count() < 4) {
                    layout = layout.apply(Mutation.rebucket(s.id(), 4), layout.epoch(), 0).layoutOrThrow();
                }
            }
        }
        destination = layout;
        Random r = new Random(3);
        sources = new HashRange[1024];
        entries = new EntryFacts[1024];
        for (int i = 0; i < 1024; i++) {
            Segment s = layout.activeSegments().get(r.nextInt(64));
            sources[i] = s.range();
            int lo = r.nextInt(65536);
            int hi = Math.min(65535, lo + r.nextInt(4096)); // some straddle a bucket boundary
            entries[i] = EntryFacts.stamped(new Stamp(lo, hi));
        }
    }

    @Benchmark
    public Fit classify() {
        int i = next++ & 1023;
        return Fit.classify(sources[i], entries[i], destination);
    }
}
