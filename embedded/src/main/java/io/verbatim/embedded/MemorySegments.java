package io.verbatim.embedded;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.verbatim.model.AdoptionPlan;
import io.verbatim.model.Compression;
import io.verbatim.model.Layout;
import io.verbatim.model.Mutation;
import io.verbatim.model.Outcome;
import io.verbatim.model.Segment;
import io.verbatim.model.entry.Entry;
import io.verbatim.model.entry.Message;
import io.verbatim.model.entry.SourcePosition;
import io.verbatim.pipeline.DestinationState;
import io.verbatim.pipeline.DrainGate;
import io.verbatim.pipeline.LocalSegments;
import io.verbatim.pipeline.PipelineMetricsBinder;
import io.verbatim.pipeline.ProducerSession;
import io.verbatim.pipeline.RemoteCluster;
import io.verbatim.pipeline.RemoteException;
import io.verbatim.pipeline.StartAt;
import io.verbatim.pipeline.StoredEntry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Scheduler;

/**
 * One topic of a whole cluster in memory: its layout, a log per segment, the replication cursors toward
 * its peers, a producer that routes like a PIP-486 client, and the destination side replicators from
 * other clusters write to (deduplication and session order per {@link DestinationState}). Faults on the
 * way in are injected with {@link #faults(SendFaults)}. As {@link LocalSegments}, a
 * {@link io.verbatim.pipeline.ReplicationLink} replicates it.
 */
public final class MemorySegments implements LocalSegments {
    /** The topic of a cluster built without one (tests, benchmarks). */
    public static final String DEFAULT_TOPIC = "persistent://public/default/test";

    private final String name;
    private final String topic;
    private final Scheduler scheduler;
    private final SegmentLogs logs;
    private final Destinations destinations = new Destinations();
    private final Sinks.Many<Layout> layouts = Sinks.many().replay().latest();
    private final RemoteSessions sessions = new RemoteSessions();
    private volatile Layout layout;
    private volatile SendFaults faults = SendFaults.NONE;
    private volatile boolean sessionOrder = true;
    private volatile boolean stopped;
    private final Journaling journaling;
    private final LedgerIds ledgerIds;
    private final Appender appender;

    /** Told of every entry this cluster stores, as it is stored (checks that must not keep the data). */
    @FunctionalInterface
    public interface AppendListener {
        void appended(MemorySegments cluster, Segment segment, StoredEntry stored);
    }

    /** One topic, {@link #DEFAULT_TOPIC}, of cluster {@code name}. */
    public MemorySegments(String name, Layout initial, Scheduler scheduler) {
        this(name, DEFAULT_TOPIC, initial, scheduler);
    }

    /**
     * The segments of {@code topic} on cluster {@code name}, starting with the layout {@code initial}, in memory
     * only; each segment's one ledger is numbered as the segment.
     */
    public MemorySegments(String name, String topic, Layout initial, Scheduler scheduler) {
        this(name, topic, initial, scheduler, Journal.NONE, LedgerIds.segmentIds(), true);
    }

    /**
     * The segments of {@code topic} on cluster {@code name}, starting with the layout {@code initial}: every
     * change written to {@code journal} (what is acknowledged is what it made durable), ledgers numbered by
     * {@code ledgerIds}.
     */
    public MemorySegments(String name, String topic, Layout initial, Scheduler scheduler, Journal journal,
            LedgerIds ledgerIds) {
        this(name, topic, initial, scheduler, journal, ledgerIds, true);
    }

    /** @param fresh whether the topic starts empty here (else its logs are restored from an image) */
    private MemorySegments(String name, String topic, Layout initial, Scheduler scheduler, Journal journal,
            LedgerIds ledgerIds, boolean fresh) {
        this.name = name;
        this.topic = topic;
        this.scheduler = scheduler;
        this.layout = initial;
        this.journaling = new Journaling(journal, topic);
        this.ledgerIds = ledgerIds;
        this.logs = new SegmentLogs(journaling);
        this.appender = new Appender(this, scheduler, journaling, logs, destinations);
        AdoptionPlan plan = AdoptionPlan.of(initial);
        Map<Long, Long> ledgers = new TreeMap<>();
        for (Segment s : plan.create()) {
            long ledger = fresh ? ledgerIds.next(s.id()) : s.id(); // a restored log takes its image's ledgers
            ledgers.put(s.id(), ledger);
            logs.open(s.id(), ledger);
        }
        for (Segment s : plan.seal()) {
            Objects.requireNonNull(logs.get(s.id())).seal();
        }
        if (fresh) {
            journaling.write(new Journal.Record.TopicCreated(topic, initial, ledgers));
        }
        layouts.tryEmitNext(initial);
    }

    /**
     * Everything this cluster holds of its topic, as values, taken under its lock (nothing is stored or
     * admitted meanwhile).
     */
    public synchronized ClusterImage image() {
        List<ClusterImage.SegmentImage> segments = new ArrayList<>();
        for (Segment s : layout.segments().values()) {
            MemorySegmentLog log = logs.get(s.id());
            if (log != null) {
                segments.add(log.image());
            }
        }
        return new ClusterImage(layout, segments, destinations.snapshot(), sessions.lastId(), appender.sequence());
    }

    /**
     * This cluster's image and the journal's last sequence number, read just before it, under its lock: the image
     * holds every record of this topic up to that number (what a checkpoint writes down). Every record but a
     * cursor's is written under this lock, so none of those after the number is in the image; a cursor's record
     * may be in both, and replaying it again changes nothing.
     */
    public synchronized Checkpoint checkpoint() {
        long sequence = journaling.journal().lastSequence();
        return new Checkpoint(image(), sequence);
    }

    /** An image and the journal sequence it holds this topic's records up to. */
    public record Checkpoint(ClusterImage image, long sequence) {
    }

    /**
     * The image of this cluster as it stops: taken under its lock, after which it stores nothing more (an
     * arriving replicated entry is refused as unavailable, a produce fails), so no entry can be stored —
     * and acknowledged to its sender — after the image that a restart starts from.
     */
    public synchronized ClusterImage stop() {
        stopped = true;
        return image();
    }

    /** Whether {@link #stop} was called: nothing more is stored. */
    public boolean isStopped() {
        return stopped;
    }

    /**
     * The cluster {@code image} describes, as it was when taken: same layout, entries, ledgers, cursors,
     * deduplication and session state, in memory only. Cursors a later {@link #replicateTo} asks for that the
     * image lacks are opened then.
     */
    public static MemorySegments restore(String name, String topic, ClusterImage image, Scheduler scheduler) {
        return restore(name, topic, image, scheduler, Journal.NONE, LedgerIds.segmentIds());
    }

    /**
     * The cluster {@code image} describes, writing its changes from now on to {@code journal}: what a restart
     * starts from. Then {@link #replay} the journal's records written after the image, then {@link #reopen}.
     */
    public static MemorySegments restore(String name, String topic, ClusterImage image, Scheduler scheduler,
            Journal journal, LedgerIds ledgerIds) {
        MemorySegments c = new MemorySegments(name, topic, image.layout(), scheduler, journal, ledgerIds, false);
        for (ClusterImage.SegmentImage s : image.segments()) {
            c.log(s.segmentId()).restore(s);
        }
        c.destinations.restore(image.destinations());
        c.sessions.seen(image.sessionIds());
        c.appender.sequenceSeen(image.sequence());
        return c;
    }

    /** The image of a topic that a journal's {@code created} record starts: its layout, every segment empty. */
    public static ClusterImage createdImage(Journal.Record.TopicCreated created) {
        return ClusterImage.created(created);
    }

    /**
     * Applies a record of this topic's journal written after the image this cluster was restored from, as the
     * change was made then; nothing is written down again. Before the cluster is used.
     *
     * @throws IllegalStateException when the record does not fit what the cluster holds (the journal does not
     *         belong to this image, or is damaged)
     */
    public synchronized void replay(Journal.Record record) {
        journaling.replaying(true);
        try {
            Replay.apply(this, record);
        } finally {
            journaling.replaying(false);
        }
    }

    /** What {@link Replay} changes and reads, under this cluster's lock. */
    SegmentLogs logs() {
        return logs;
    }

    Destinations destinations() {
        return destinations;
    }

    void sequenceSeen(long next) {
        appender.sequenceSeen(next);
    }

    void sessionSeen(long session) {
        sessions.seen(session);
    }

    void adoptReplayed(Layout next, Map<Long, Long> ledgers) {
        adopt(next, ledgers);
    }

    /**
     * Opens a new ledger on every segment still open, written down: after a restart, no position handed out
     * before it is handed out again (entries written since the last record the journal kept are lost to this
     * cluster, and peers may hold them under their old positions). Also moves the session counter past every
     * session a recovered deduplication mark names. Once, after {@link #replay}.
     */
    public synchronized void reopen() {
        sessionSeen(destinations.highestSession());
        for (MemorySegmentLog log : logs.all()) {
            if (!log.isSealed()) {
                long ledger = ledgerIds.next(log.segmentId());
                journaling.write(new Journal.Record.LedgerOpened(topic, log.segmentId(), ledger, log.size()));
                log.openLedger(ledger);
            }
        }
    }

    /**
     * The destination side's deduplication marks, by {@code <segment id>/<producer name>}: the highest source
     * position stored from each replicator producer.
     */
    public synchronized Map<String, DestinationState> marks() {
        return destinations.snapshot();
    }

    /**
     * Removes the deduplication mark of {@code producer} on segment {@code segmentId} (an admin's reset, when a
     * mark stands past anything the producer will send): the producer's next entries are stored, repeats of what
     * was stored before included.
     *
     * @return whether there was such a mark
     */
    public synchronized boolean resetMark(long segmentId, String producer) {
        String key = Destinations.key(segmentId, producer);
        if (!destinations.contains(key)) {
            return false;
        }
        journaling.write(new Journal.Record.MarkReset(topic, key));
        destinations.remove(key);
        return true;
    }

    /**
     * Whether entries every cursor acknowledged are dropped from memory (Pulsar's retention of zero), in
     * every segment, now and to come. Off by default: tests and checks read what is stored.
     */
    public MemorySegments deleteConsumed(boolean value) {
        logs.deleteConsumed(value);
        return this;
    }

    /** Calls {@code listener} for every entry stored from now on, in storing order, under this cluster's lock. */
    public Disposable onAppend(AppendListener listener) {
        return appender.onAppend(listener);
    }

    /**
     * Completes once everything this cluster has written down so far is durable (at once without a journal):
     * what a producer or a peer is told only after.
     */
    public Mono<Void> durable() {
        Journal journal = journaling.journal();
        return journal.keeps() ? journal.durable(journal.lastSequence()) : Mono.empty();
    }

    /** Whether this cluster keeps what it stores in a journal (else it lives in memory only). */
    public boolean journaled() {
        return journaling.keeps();
    }

    public String name() {
        return name;
    }

    @Override
    public String topic() {
        return topic;
    }

    @Override
    public Layout layout() {
        return layout;
    }

    @Override
    public Flux<Layout> layouts() {
        return layouts.asFlux();
    }

    /** The log of {@code segmentId}, or empty when there is none (any more: garbage collection deleted it). */
    public Optional<MemorySegmentLog> findLog(long segmentId) {
        return Optional.ofNullable(logs.get(segmentId));
    }

    /** The log of the segment that has (or had) ledger {@code ledgerId}, while that segment exists. */
    public Optional<MemorySegmentLog> findLogOfLedger(long ledgerId) {
        return logs.ofLedger(ledgerId);
    }

    /** Deletes the cursor {@code name} on every segment (a subscription unsubscribed). */
    public synchronized void removeCursor(String name) {
        journaling.write(new Journal.Record.CursorRemoved(topic, name));
        logs.removeCursor(name);
    }

    @Override
    public MemorySegmentLog log(long segmentId) {
        MemorySegmentLog log = logs.get(segmentId);
        if (log == null) {
            throw new IllegalArgumentException("cluster " + name + " has no segment " + segmentId);
        }
        return log;
    }

    /** Replicates toward {@code peer}: every segment gets the cursor {@code pulsar.repl.<peer>}. */
    public MemorySegments replicateTo(String peer, StartAt startAt) {
        logs.replicateTo(peer, startAt);
        return this;
    }

    public MemorySegments faults(SendFaults value) {
        faults = value;
        return this;
    }

    /**
     * Whether the destination side checks session order (default). Off, it deduplicates as Pulsar's
     * V2 does and has the #26113 silent-loss hole: only for tests that show the hole.
     */
    public MemorySegments sessionOrder(boolean value) {
        sessionOrder = value;
        return this;
    }

    /**
     * Whether a split's children start with their parent's deduplication marks (default). Off, a new segment
     * knows nothing of what its parent took, as a new Pulsar topic: only for tests of what a sender must then do.
     */
    public MemorySegments inheritDeduplication(boolean value) {
        destinations.inherit(value);
        return this;
    }

    /**
     * Applies a layout mutation the way PIP-468's controller does: the new segments (and their
     * replication cursors, at their first entry) first, then the predecessors sealed, then the layout
     * published.
     */
    public synchronized Outcome apply(Mutation mutation) {
        Layout current = layout;
        Outcome outcome = current.apply(mutation, current.epoch(), scheduler.now(TimeUnit.MILLISECONDS));
        if (outcome instanceof Outcome.Applied applied) {
            adopt(applied.layout());
        }
        return outcome;
    }

    /**
     * Takes a layout decided elsewhere (the controller committed it to the layout store; brokers watch
     * the store), as its {@link AdoptionPlan} says, in the same order as {@link #apply}: segments that are new
     * get their log and their replication cursors first, then the sealed ones are sealed, then the pruned ones
     * dropped, then the layout is published. A layout not newer than the one held is ignored (a watch may
     * repeat itself).
     *
     * @return whether the layout was taken
     */
    public synchronized boolean adopt(Layout next) {
        return adopt(next, null);
    }

    /** @param replayed the new segments' first ledgers as the journal has them; null: new ones, written down */
    private boolean adopt(Layout next, @Nullable Map<Long, Long> replayed) {
        if (next.epoch() <= layout.epoch()) {
            return false;
        }
        AdoptionPlan plan = AdoptionPlan.between(layout, next);
        Map<Long, Long> ledgers = new TreeMap<>();
        for (Segment s : plan.create()) {
            ledgers.put(s.id(), replayed != null ? Replay.ledger(topic, replayed, s.id()) : ledgerIds.next(s.id()));
        }
        // written before the new logs open their cursors: a replay creates the logs first, as here
        journaling.write(new Journal.Record.Adopted(topic, next, ledgers));
        for (Segment s : plan.create()) {
            logs.open(s.id(), Objects.requireNonNull(ledgers.get(s.id())));
            destinations.inheritedBy(s);
        }
        for (Segment s : plan.seal()) {
            MemorySegmentLog log = logs.get(s.id());
            if (log != null && !log.isSealed()) { // a test may have sealed the log itself
                log.seal();
            }
        }
        for (Segment s : plan.prune()) {
            logs.remove(s.id()); // pruned by the controller
            destinations.dropSegment(s.id());
        }
        layout = next;
        layouts.emitNext(next, Sinks.EmitFailureHandler.busyLooping(Duration.ofSeconds(1)));
        return true;
    }

    /**
     * Produces {@code messages} as a PIP-486 producer: each keyed message to the active segment of its
     * key, unkeyed ones round-robin, batched per (segment, bucket), each batch stamped.
     *
     * @return the position of each entry written
     */
    public List<SourcePosition> produce(List<Message> messages, Compression codec) {
        while (true) {
            List<SourcePosition> written = tryWrite(appender.route(layout, messages), codec);
            if (written != null) {
                return written;
            }
            // A segment was sealed under us: route again with the new layout (the client's re-route).
        }
    }

    /** The entries written, or null when a segment was sealed under us. */
    private synchronized @Nullable List<SourcePosition> tryWrite(Map<Long, List<Message>> batches, Compression codec) {
        if (stopped) {
            throw new IllegalStateException("cluster " + name + " has stopped: nothing more is stored");
        }
        requireJournalWorks();
        return appender.write(batches, codec);
    }

    /** Appends raw entry bytes to a segment, as a producer that does its own batching would. */
    public synchronized SourcePosition append(long segmentId, Entry entry) {
        requireJournalWorks();
        return appender.append(log(segmentId), entry);
    }

    private void requireJournalWorks() {
        journaling.journal().failed().ifPresent(why -> {
            throw new IllegalStateException("cluster " + name + " cannot store on " + topic + ": " + why);
        });
    }

    /** This cluster as a remote that replicators of other clusters write to. */
    public RemoteCluster asRemote() {
        return sessions.remote(this);
    }

    /**
     * Drops every connection replicators have into this cluster: receipts under way are lost and every
     * open session fails from now on (what a broker restart or a network cut does).
     */
    public void disconnectAll() {
        sessions.disconnectAll();
    }

    void closed(MemoryProducerSession session) {
        sessions.closed(session);
    }

    /**
     * Shows {@link #sealedSegmentsPinned} to Micrometer as {@link PipelineMetricsBinder#SEALED_PINNED}, tagged
     * with the cluster and the topic (one gauge per topic: a registry keeps only the first of two gauges
     * with the same name and tags).
     */
    public MeterBinder pinnedSegmentsMetric(long messageTtlMs) {
        return registry -> Gauge.builder(PipelineMetricsBinder.SEALED_PINNED, () -> sealedSegmentsPinned(messageTtlMs))
                .tags("cluster", name, "topic", topic)
                .description("sealed segments kept from deletion by replication backlog").register(registry);
    }

    /**
     * The parent-drain gate over this cluster's cursors: a segment counts as drained once it is sealed,
     * its cursor has acknowledged everything, and its own parents count as drained. Transitively: an
     * empty segment between a child and a grandparent with backlog must not open the child's gate.
     */
    @Override
    public DrainGate drainGate() {
        return new MemoryDrainGate(this::layout, logs);
    }

    /**
     * Deletes a sealed segment if GC may (PIP-495's gating: no replication backlog, unless all of it is
     * older than {@code messageTtlMs}; 0 means no TTL).
     *
     * @return whether the segment was pruned
     */
    public synchronized boolean prune(long segmentId, long messageTtlMs) {
        MemorySegmentLog log = log(segmentId);
        if (!log.isSealed() || GcGate.pinned(log, logs.peers(), messageTtlMs, scheduler.now(TimeUnit.MILLISECONDS))) {
            return false;
        }
        apply(Mutation.prune(segmentId)).layoutOrThrow();
        return true;
    }

    /**
     * The sealed segments garbage collection may delete now: no cursor, replication or subscription, has
     * backlog on them (but for backlog older than {@code messageTtlMs}; 0: no TTL), and every parent is
     * gone already, so the parent-drain gate, which stops at a deleted segment, never skips an ancestor
     * still holding backlog.
     */
    public List<Long> prunable(long messageTtlMs) {
        return GcGate.prunable(layout, logs, messageTtlMs, scheduler.now(TimeUnit.MILLISECONDS));
    }

    @Override
    public long backlog(long segmentId, String cursorName) {
        return logs.backlog(segmentId, cursorName);
    }

    /** Sealed segments that replication backlog keeps from being deleted (a metric of R-F). */
    public long sealedSegmentsPinned(long messageTtlMs) {
        return GcGate.pinnedCount(logs, messageTtlMs, scheduler.now(TimeUnit.MILLISECONDS));
    }

    /** Every entry this cluster stores, by segment id. */
    public Map<Long, List<StoredEntry>> contents() {
        return logs.contents();
    }

    Scheduler scheduler() {
        return scheduler;
    }

    SendFaults currentFaults() {
        return faults;
    }

    /**
     * A new session id for a replicator connecting from elsewhere (an ingest endpoint): higher than every
     * id handed out before, so the session fences every older one of the same producer.
     */
    public long newSessionId() {
        return sessions.newId();
    }

    /**
     * An arriving replicated entry: admitted by the destination's rules (deduplication on the source
     * position, the session's sequence numbers, sealed segments refused), then appended. What an ingest
     * endpoint calls for each entry of a session, in the order the session carries them.
     *
     * @throws RemoteException naming why the entry was not taken
     */
    public synchronized ProducerSession.Receipt ingest(long segmentId, String producerName, long session, long seq,
            SourcePosition position, Entry entry) {
        if (stopped) {
            throw new RemoteException(RemoteException.Kind.UNAVAILABLE, segmentId, "cluster " + name
                    + " is stopping: nothing more is stored");
        }
        Optional<String> failed = journaling.journal().failed();
        if (failed.isPresent()) { // refused before the mark moves: nothing of it is kept
            throw new RemoteException(RemoteException.Kind.UNAVAILABLE, segmentId, "cluster " + name
                    + " cannot store: " + failed.get());
        }
        return appender.ingest(segmentId, producerName, session, seq, position, entry, sessionOrder);
    }

    /** Refuses the rest of {@code session} of the pair; a pair with no record has nothing to refuse (see ingest). */
    public synchronized void poison(long segmentId, String producerName, long session) {
        destinations.poison(segmentId, producerName, session);
    }
}
