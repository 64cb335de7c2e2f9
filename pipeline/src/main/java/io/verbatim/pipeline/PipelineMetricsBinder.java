package io.verbatim.pipeline;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.util.Collection;
import java.util.List;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import java.util.function.ToDoubleFunction;
import org.jspecify.annotations.Nullable;

/**
 * Shows a replicator's counters to Micrometer (R-F): replicated entries and bytes by path, parts,
 * skipped entries, send failures, rewinds and restarts, the replicators failing, the replicators stalled
 * and for how long, and the cursor backlog. Names are dotted constants; tags name the local cluster, the topic, the remote and the
 * source segment.
 */
public final class PipelineMetricsBinder implements MeterBinder {
    public static final String ENTRIES = "verbatim.replication.entries";
    public static final String BYTES = "verbatim.replication.bytes";
    public static final String PARTS = "verbatim.replication.rebatched.parts";
    public static final String SKIPPED = "verbatim.replication.skipped";
    public static final String SEND_FAILURES = "verbatim.replication.send.failures";
    public static final String REWINDS = "verbatim.replication.rewinds";
    public static final String BACKLOG = "verbatim.replication.backlog";
    /** Restarts of replicators that failed (by a {@link ReplicationLink}). */
    public static final String RESTARTS = "verbatim.replication.restarts";
    /** Replicators that failed and have not made progress since. */
    public static final String FAILING = "verbatim.replication.failing";
    /** Replicators with backlog that acknowledged nothing for the stall threshold ({@link ReplicatorStatus#stalled()}). */
    public static final String STALLED = "verbatim.replication.stalled";
    /** How long the longest-stalled of them has not moved, in seconds; 0 when none is stalled. */
    public static final String STALLED_SECONDS = "verbatim.replication.stalled.seconds";
    /** Per source cluster and topic: sealed segments that replication backlog keeps from deletion. */
    public static final String SEALED_PINNED = "verbatim.replication.sealed.pinned";

    private final ReplicatorMetrics metrics;
    private final Tags tags;
    private final LongSupplier backlog;
    private final Supplier<? extends Collection<ReplicatorStatus>> replicators;

    /**
     * @param backlog the replication cursor's backlog in entries (read when scraped)
     */
    public PipelineMetricsBinder(ReplicatorMetrics metrics, String localCluster, String topic, String remoteCluster,
            String segment, LongSupplier backlog) {
        this(metrics, Tags.of("cluster", localCluster, "topic", topic, "remote_cluster", remoteCluster, "segment",
                segment), backlog);
    }

    /**
     * Counters summed over whatever {@code metrics} counts (a runtime sums every segment of a topic, tagged
     * {@code topic} instead of {@code segment}).
     */
    public PipelineMetricsBinder(ReplicatorMetrics metrics, Tags tags, LongSupplier backlog) {
        this(metrics, tags, backlog, List::of);
    }

    /**
     * @param replicators the status of the replicators {@code metrics} counts (read when scraped): which are
     *        stalled, and for how long
     */
    public PipelineMetricsBinder(ReplicatorMetrics metrics, Tags tags, LongSupplier backlog,
            Supplier<? extends Collection<ReplicatorStatus>> replicators) {
        this.metrics = metrics;
        this.tags = tags;
        this.backlog = backlog;
        this.replicators = replicators;
    }

    @Override
    public void bindTo(MeterRegistry registry) {
        counter(registry, ENTRIES, "path", "verbatim", ReplicatorMetrics::verbatimEntries);
        counter(registry, ENTRIES, "path", "rebatched", ReplicatorMetrics::rebatchedEntries);
        counter(registry, BYTES, "path", "verbatim", ReplicatorMetrics::verbatimBytes);
        counter(registry, BYTES, "path", "rebatched", ReplicatorMetrics::rebatchedBytes);
        counter(registry, PARTS, null, null, ReplicatorMetrics::rebatchedParts);
        counter(registry, SKIPPED, "reason", "replicated", ReplicatorMetrics::skippedReplicated);
        counter(registry, SKIPPED, "reason", "expired", ReplicatorMetrics::expired);
        counter(registry, SKIPPED, "reason", "unroutable", ReplicatorMetrics::unroutable);
        counter(registry, SEND_FAILURES, null, null, ReplicatorMetrics::sendFailures);
        counter(registry, REWINDS, null, null, ReplicatorMetrics::rewinds);
        counter(registry, RESTARTS, null, null, ReplicatorMetrics::restarts);
        Gauge.builder(FAILING, metrics::failing).tags(tags)
                .description("replicators that failed and have not made progress since").register(registry);
        Gauge.builder(STALLED, () -> replicators.get().stream().filter(ReplicatorStatus::stalled).count()).tags(tags)
                .description("replicators with backlog that acknowledged nothing for replication.stallAfter")
                .register(registry);
        Gauge.builder(STALLED_SECONDS, () -> replicators.get().stream().flatMap(r -> r.stalledFor().stream())
                .mapToDouble(d -> d.toNanos() / 1e9).max().orElse(0)).tags(tags).baseUnit("seconds")
                .description("how long the longest-stalled replicator has acknowledged nothing").register(registry);
        // A supplier gauge holds its function strongly (the object form keeps only a weak reference).
        Gauge.builder(BACKLOG, backlog::getAsLong).tags(tags).baseUnit("entries")
                .description("entries of the source segment not yet replicated to the remote").register(registry);
    }

    private void counter(MeterRegistry registry, String name, @Nullable String tagKey, @Nullable String tagValue,
            ToDoubleFunction<ReplicatorMetrics> value) {
        Tags all = tagKey == null || tagValue == null ? tags : tags.and(tagKey, tagValue);
        FunctionCounter.builder(name, metrics, value).tags(all).register(registry);
    }
}
