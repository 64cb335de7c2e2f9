package io.verbatim.pipeline.memory;

import io.verbatim.budget.SlowPathBudget;
import io.verbatim.model.Layout;
import io.verbatim.model.Segment;
import io.verbatim.pipeline.ExchangeGate;
import io.verbatim.pipeline.RemoteCluster;
import io.verbatim.pipeline.ReplicatorConfig;
import io.verbatim.pipeline.ReplicatorMetrics;
import io.verbatim.pipeline.SegmentReplicator;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Predicate;
import reactor.core.Disposable;
import reactor.core.scheduler.Scheduler;
import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * Replication from one in-memory cluster to another: a {@link SegmentReplicator} for every segment of
 * the source, started as segments appear, finished when a sealed segment is drained. {@link #crash()}
 * drops every replicator at once, keeping only the durable cursors, as a broker crash would.
 */
public final class MemoryReplicationLink {
    private static final Logger LOG = Loggers.getLogger(MemoryReplicationLink.class);

    private final MemoryCluster local;
    private final RemoteCluster remote;
    private final Predicate<Segment> owned;
    private final ReplicatorConfig config;
    private final SlowPathBudget budget;
    private final ExchangeGate exchangeGate;
    private final Scheduler timer;
    private final Scheduler cpu;
    private final ReplicatorMetrics metrics;
    private final Map<Long, Disposable> running = new ConcurrentHashMap<>();
    private final Map<Long, Boolean> done = new ConcurrentHashMap<>();
    private final Map<Long, Throwable> failed = new ConcurrentHashMap<>();
    private Disposable layoutWatch;
    private boolean started;

    public MemoryReplicationLink(MemoryCluster local, MemoryCluster remote, ReplicatorConfig config,
            SlowPathBudget budget, ExchangeGate exchangeGate, Scheduler timer, Scheduler cpu) {
        this(local, remote.asRemote(), s -> true, config, budget, exchangeGate, timer, cpu, new ReplicatorMetrics());
    }

    /**
     * Replication toward any {@link RemoteCluster} (one across a network, say) of the local segments
     * {@code owned} selects: a broker runs the replicators of the segments it owns. Its replicators count
     * into {@code metrics}, which several links may share.
     */
    public MemoryReplicationLink(MemoryCluster local, RemoteCluster remote, Predicate<Segment> owned,
            ReplicatorConfig config, SlowPathBudget budget, ExchangeGate exchangeGate, Scheduler timer,
            Scheduler cpu, ReplicatorMetrics metrics) {
        this.metrics = metrics;
        this.local = local;
        this.remote = remote;
        this.owned = owned;
        this.config = config;
        this.budget = budget;
        this.exchangeGate = exchangeGate;
        this.timer = timer;
        this.cpu = cpu;
    }

    /** Counters summed over every replicator of this link, across crashes. */
    public ReplicatorMetrics metrics() {
        return metrics;
    }

    /** Replicator failures that stopped a replicator for good (a broken invariant, an unsupported remote). */
    public Map<Long, Throwable> failures() {
        return Map.copyOf(failed);
    }

    public synchronized MemoryReplicationLink start() {
        if (!started) {
            started = true;
            layoutWatch = local.layouts().subscribe(this::startMissing);
        }
        return this;
    }

    /** Stops every replicator at once; the cursors keep what was acknowledged. */
    public synchronized void crash() {
        started = false;
        if (layoutWatch != null) {
            layoutWatch.dispose();
            layoutWatch = null;
        }
        running.values().forEach(Disposable::dispose);
        running.clear();
    }

    /** True when every segment's replicator finished or is idle with no backlog. */
    public boolean caughtUp() {
        for (Segment s : local.layout().segments().values()) {
            if (!owned.test(s)) {
                continue;
            }
            MemoryCursor cursor = local.log(s.id()).existingCursor(ReplicatorConfig.cursorName(remote.name()));
            if (cursor != null && cursor.backlog() > 0) {
                return false;
            }
        }
        return true;
    }

    private synchronized void startMissing(Layout layout) {
        if (!started) {
            return;
        }
        for (Segment s : layout.segments().values()) {
            if (!owned.test(s) || running.containsKey(s.id()) || done.containsKey(s.id())
                    || failed.containsKey(s.id())) {
                continue;
            }
            SegmentReplicator replicator = SegmentReplicator.builder()
                    .config(config)
                    .topic(local.topic())
                    .source(s, local.log(s.id()))
                    .drainGate(local.drainGate())
                    .remote(remote)
                    .exchangeGate(exchangeGate)
                    .budget(budget)
                    .timer(timer)
                    .cpu(cpu)
                    .metrics(metrics)
                    .build();
            Disposable run = replicator.run().subscribe(
                    v -> { },
                    e -> {
                        LOG.warn("{} stopped: {}", replicator.id(), e.toString());
                        failed.put(s.id(), e);
                        running.remove(s.id());
                    },
                    () -> {
                        done.put(s.id(), true);
                        running.remove(s.id());
                    });
            if (!done.containsKey(s.id()) && !failed.containsKey(s.id())) {
                running.put(s.id(), run);
            }
        }
    }
}
