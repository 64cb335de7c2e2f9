package io.verbatim.bench;

import io.verbatim.budget.SlowPathBudget;
import io.verbatim.model.Layout;
import io.verbatim.pipeline.ReplicatorConfig;
import io.verbatim.pipeline.ReplicatorMetrics;
import io.verbatim.pipeline.SegmentReplicator;
import io.verbatim.pipeline.StartAt;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

/**
 * Replicators running in real time until closed, each from its own source log to its own remote: the
 * {@link Synthetic} ones, which make each entry as it is read and drop what they are sent, so a hundred
 * replicators with endless backlogs hold almost nothing on the heap. Their counters are read while they
 * run: a benchmark measures a window of a longer run (P5), not a run to completion.
 */
final class ReplicatorGroup implements AutoCloseable {
    /** The source's layout: one segment of four buckets; the stored entries hold one bucket's keys. */
    static final Layout ONE = Layout.initial(1, 4, 0);
    /** Every replicator's backlog, in entries: more than any window gets through. */
    private static final long BACKLOG = Long.MAX_VALUE / 2;

    private final List<ReplicatorMetrics> metrics = new ArrayList<>();
    private final List<Disposable> runs = new ArrayList<>();
    private final AtomicReference<Throwable> failure = new AtomicReference<>();
    private final AtomicInteger completed = new AtomicInteger();

    /**
     * Starts {@code count} replicators of the topics {@code name-0 ...} on {@code start}, to remotes of
     * {@code remoteLayout} ({@link #ONE}: every entry fits, verbatim; more buckets: every entry re-batches),
     * drawing on {@code budget} for their slow path.
     */
    ReplicatorGroup(String name, int count, Layout remoteLayout, byte[] template, SlowPathBudget budget,
            Scheduler timer, Scheduler cpu, Scheduler start) {
        for (int i = 0; i < count; i++) {
            ReplicatorMetrics m = new ReplicatorMetrics();
            SegmentReplicator replicator = SegmentReplicator.builder()
                    .config(ReplicatorConfig.defaults("source").withStartAt(StartAt.EARLIEST))
                    .topic("persistent://public/default/" + name + "-" + i)
                    .source(ONE.segment(0).orElseThrow(), Synthetic.log(template, BACKLOG))
                    .drainGate((segment, cursor) -> Mono.empty())
                    .remote(new Synthetic.CountingRemote(remoteLayout))
                    .budget(budget).timer(timer).cpu(cpu).metrics(m).build();
            metrics.add(m);
            runs.add(replicator.run().subscribeOn(start).subscribe(v -> { }, e -> failure.compareAndSet(null, e),
                    completed::incrementAndGet));
        }
    }

    int size() {
        return metrics.size();
    }

    /** Each replicator's re-batched bytes (compressed, as stored) so far, in start order. */
    long[] rebatchedBytes() {
        long[] out = new long[metrics.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = metrics.get(i).rebatchedBytes();
        }
        return out;
    }

    long rebatchedBytesTotal() {
        return metrics.stream().mapToLong(ReplicatorMetrics::rebatchedBytes).sum();
    }

    long verbatimEntries() {
        return metrics.stream().mapToLong(ReplicatorMetrics::verbatimEntries).sum();
    }

    long rebatchedEntries() {
        return metrics.stream().mapToLong(ReplicatorMetrics::rebatchedEntries).sum();
    }

    /** Throws if a replicator failed or ended: a window of this group would then not be what it claims. */
    void check() {
        Throwable e = failure.get();
        if (e != null) {
            throw new IllegalStateException("a replicator failed: " + e, e);
        }
        if (completed.get() > 0) {
            throw new IllegalStateException(completed.get() + " replicator(s) ran out of backlog");
        }
    }

    @Override
    public void close() {
        runs.forEach(Disposable::dispose);
    }
}
