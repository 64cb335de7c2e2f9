package io.verbatim.bench;

import io.verbatim.model.entry.Entry;
import io.verbatim.model.entry.ReplicationStamp;
import io.verbatim.model.entry.SourcePosition;
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
 * The verbatim fast path on one stored entry (an LZ4 batch of 100 x 1 KiB): parse without touching the
 * payload, re-stamp with a derived checksum. Compared side by side with a checksum-verifying parse and
 * with a re-stamp that recomputes the checksum over the whole entry, the way a naive copy would.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class EntryBenchmark {
    @Param({"LZ4"})
    public CompressionType codec;

    private ByteBuffer stored;
    private ReplicationStamp stamp;
    private byte[] copyTarget;

    @Setup
    public void setUp() {
        stored = ByteBuffer.wrap(Workloads.batch(codec).toByteArray());
        stamp = new ReplicationStamp("us-east", SourcePosition.of(123, 4567));
        copyTarget = new byte[stored.remaining()];
    }

    /** The fast path: parse the outer metadata, re-stamp, derive the checksum. */
    @Benchmark
    public Entry parseAndRestamp() {
        return Entry.parseUnverified(stored).restamp(stamp);
    }

    /** The same with the stored checksum verified first (reads every payload byte). */
    @Benchmark
    public Entry parseVerifiedAndRestamp() {
        return Entry.parse(stored).restamp(stamp);
    }

    /** Re-stamp, then frame anew: the checksum recomputed over the whole payload. */
    @Benchmark
    public Entry parseAndRestampRecomputingChecksum() {
        Entry restamped = Entry.parseUnverified(stored).restamp(stamp);
        return Entry.of(restamped.metadata(), restamped.payload());
    }

    /** One copy of the entry's bytes into a reused array: the floor any byte-moving replicator pays. */
    @Benchmark
    public byte[] rawCopy() {
        stored.duplicate().get(copyTarget);
        return copyTarget;
    }
}
