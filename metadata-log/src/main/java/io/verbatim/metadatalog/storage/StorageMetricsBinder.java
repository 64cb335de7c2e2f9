package io.verbatim.metadatalog.storage;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.FunctionTimer;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.util.concurrent.TimeUnit;
import java.util.function.ToDoubleFunction;

/**
 * A {@link SegmentedRaftStorage}'s counters as meters: bytes written, syncs (a timer: count and total
 * time), fsyncs, segments created and open, and what recovery cut from a torn tail.
 */
public final class StorageMetricsBinder implements MeterBinder {
    public static final String BYTES_WRITTEN = "verbatim.raft.storage.bytes.written";
    public static final String SYNCS = "verbatim.raft.storage.syncs";
    public static final String FSYNCS = "verbatim.raft.storage.fsyncs";
    /** Not "segments.created": Prometheus reads a "_created" suffix as a counter's creation time, which clashed with the gauge. */
    public static final String SEGMENTS_CREATED = "verbatim.raft.storage.segment.files.rolled";
    public static final String SEGMENTS = "verbatim.raft.storage.segment.files";
    public static final String RECORDS_TRUNCATED = "verbatim.raft.storage.recovery.records.truncated";
    public static final String BYTES_TRUNCATED = "verbatim.raft.storage.recovery.bytes.truncated";

    private final SegmentedRaftStorage storage;

    StorageMetricsBinder(SegmentedRaftStorage storage) {
        this.storage = storage;
    }

    /** {@code storage}'s meters: a log on disk's counters ({@link RaftStorage#open}); none for one in memory. */
    public static MeterBinder of(RaftStorage storage) {
        return storage instanceof SegmentedRaftStorage segmented ? new StorageMetricsBinder(segmented) : registry -> { };
    }

    @Override
    public void bindTo(MeterRegistry registry) {
        counter(registry, BYTES_WRITTEN, m -> m.bytesWritten(), "bytes written to segment, hard-state and snapshot files");
        FunctionTimer.builder(SYNCS, storage, s -> s.metrics().syncs(), s -> s.metrics().syncNanos(), TimeUnit.NANOSECONDS)
                .description("syncs that made something durable, and the time they took").register(registry);
        counter(registry, FSYNCS, m -> m.fsyncs(), "fsyncs of files and the directory, structural ones included");
        counter(registry, SEGMENTS_CREATED, m -> m.segmentsCreated(), "segment files created");
        Gauge.builder(SEGMENTS, storage, s -> s.metrics().segments()).description("segment files in the log")
                .register(registry);
        counter(registry, RECORDS_TRUNCATED, m -> m.recordsTruncatedAtRecovery(), "records cut from a torn tail at open");
        counter(registry, BYTES_TRUNCATED, m -> m.bytesTruncatedAtRecovery(), "bytes cut from a torn tail at open");
    }

    private void counter(MeterRegistry registry, String name, ToDoubleFunction<StorageMetrics> value, String description) {
        FunctionCounter.builder(name, storage, s -> value.applyAsDouble(s.metrics())).description(description)
                .register(registry);
    }
}
