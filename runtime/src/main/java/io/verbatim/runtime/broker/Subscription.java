package io.verbatim.runtime.broker;

import io.verbatim.config.SubscriptionConfig;
import io.verbatim.model.EntryFacts;
import io.verbatim.model.KeyHash;
import io.verbatim.model.Layout;
import io.verbatim.model.Segment;
import io.verbatim.model.Stamp;
import io.verbatim.model.entry.Entries;
import io.verbatim.model.entry.Entry;
import io.verbatim.model.entry.Message;
import io.verbatim.model.entry.SourcePosition;
import io.verbatim.pipeline.ReplicationCursor;
import io.verbatim.pipeline.SourceSegmentLog;
import io.verbatim.pipeline.StartAt;
import io.verbatim.pipeline.StoredEntry;
import io.verbatim.runtime.storage.TopicStorage;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Deque;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;
import reactor.core.Disposable;
import reactor.core.Disposables;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Scheduler;
import reactor.util.Logger;
import reactor.util.Loggers;
import reactor.util.retry.Retry;
import reactor.util.retry.RetryBackoffSpec;

/**
 * A subscription of {@code k} consumers to one topic, dispatching as PIP-486 does: whole entries, each
 * to the consumer that owns its bucket in its segment ({@link #consumerOf}, PIP-486's selector), so a
 * key stays with one consumer while its segment lives. A segment is read only after every parent is
 * drained for this subscription, so a key's messages are delivered in order across splits and merges.
 * Opened by {@code ClusterNode.subscription} (or its {@code subscribe} shortcuts).
 *
 * <p><b>Flow control.</b> Each consumer has a receiver queue of at most {@link #receiverQueueSize()}
 * entries (Pulsar's {@code receiverQueueSize}: {@code subscriptions.receiverQueueSize} in the
 * configuration, {@link Builder#receiverQueueSize} for one subscription). A segment is read one entry at
 * a time: the entry goes into its consumer's queue, then the next entry is read. While the consumer that owns
 * a segment's next entry has a full queue, that segment stops there and it resumes as the consumer's requests
 * make room. Other segments go on feeding their consumers; the stalled segment's later entries wait behind it
 * even when another consumer owns them, and so do its children, until it is drained: that keeps each key in
 * order. Memory held for consumers is bounded by {@code k × receiverQueueSize} entries.
 *
 * <p><b>Acknowledging on receipt.</b> A segment's cursor is acknowledged once a consumer received the entry (and
 * every entry of the segment before it: the cursor's mark-delete position is cumulative), not when it entered a
 * queue: what waits in a queue is still the cursor's backlog ({@link #backlog()}), so a process that stops or
 * crashes with entries in its queues, or gives their segment up, loses none of them: they are read again. A
 * segment's children are read once it is drained, that is once every entry of it was received.
 *
 * <p><b>Following ownership.</b> With many broker processes in a cluster, each process's subscription of the same
 * name reads the segments its process acts on ({@link SegmentOwnership}), so each segment's dispatch runs in one
 * process and moves with the segment. A move hands over: the old owner reads no more and waits (at most {@link
 * #HAND_OVER_LIMIT}) until its consumers received what it dispatched and the cursor is acknowledged, then the
 * new owner reads on from the cursor. A segment lost at once (a lapsed lease) drops what its queues held; the
 * new owner delivers it. What a consumer received and whose acknowledgement did not reach the cursor is
 * delivered again: Pulsar's redelivery of what was not acknowledged.
 *
 * <p><b>Consuming.</b> {@link #consumer(int)} is what one consumer receives, in dispatch order, as it
 * requests. One reader at a time per consumer; a reader that cancels leaves what it had not received for
 * the next reader. A consumer nobody reads holds its segments back once its queue is full, so a
 * subscription kept for checks reads its consumers too.
 *
 * <p><b>Watching every delivery.</b> Two ways see each entry as it is dispatched, in dispatch order:
 * <ul>
 * <li>a listener, {@link Builder#onDispatch}, set before the subscription reads anything: called once per
 *     delivery as it enters its consumer's queue (before the cursor is acknowledged), one call at a time, on
 *     the dispatch scheduler. It keeps nothing and misses nothing, and it is bounded by the same flow
 *     control: it is on the dispatch path, so a slow listener slows dispatch. It must not block or throw
 *     (an exception stops reading the segment of that entry, logged as an error). What streaming checks
 *     of a long run use.
 * <li>{@link #deliveries()} of a recording subscription ({@link Builder#recording}): every delivery from
 *     the start, to each subscriber, kept for the subscription's life; for tests and short runs. Without
 *     recording it shows deliveries from the moment of subscribing, dropping what a slow subscriber cannot
 *     take.
 * </ul>
 * Metrics per subscription ({@link SubscriptionMetricsBinder}): each consumer's queue depth and the
 * cursors' backlog.
 */
public final class Subscription implements Disposable {
    /** One entry delivered to one consumer. */
    public record Delivery(int consumer, long segmentId, int bucket, SourcePosition position, List<Message> messages) {
    }

    /** An entry parsed and assigned, waiting for room in its consumer's queue. */
    private record Opened(Delivery delivery, long bytes) {
    }

    private static final Logger LOG = Loggers.getLogger(Subscription.class);
    /**
     * How long a segment's hand-over waits for its consumers to receive what was dispatched to them before it
     * gives the rest up (the next owner delivers it again, as Pulsar redelivers what was not acknowledged).
     */
    public static final Duration HAND_OVER_LIMIT = Duration.ofSeconds(5);
    /** The longest wait between two tries to open or read a segment's cursor. */
    private static final Duration MAX_BACKOFF = Duration.ofSeconds(2);

    private final TopicStorage storage;
    private final String topic;
    private final String name;
    private final int receiverQueueSize;
    private final LoadTracker load;
    private final Scheduler dispatch;
    private final SegmentOwnership ownership;
    private final List<ReceiverQueue> queues = new ArrayList<>();
    /**
     * Per consumer, what its reader that acknowledges ({@link #consumerWithAcknowledgements}) took and has not
     * acknowledged; a map of its own per reader.
     */
    private final List<AtomicReference<Map<Delivery, Boolean>>> unacknowledged = new ArrayList<>();
    private final Sinks.Many<Delivery> all;
    private final Consumer<Delivery> onDispatch;
    /** The segments this process reads for the subscription: those it acts on, and those it hands over. */
    private final Map<Long, SegmentReader> readers = new ConcurrentHashMap<>();
    /** Each segment's cursor of this subscription, made once for every segment of the layout. */
    private final Map<Long, Mono<ReplicationCursor>> cursors = new ConcurrentHashMap<>();
    /** The making of each segment's cursor. */
    private final Map<Long, Disposable> openings = new ConcurrentHashMap<>();
    private final Sinks.Many<Long> handedOver = Sinks.many().multicast().directBestEffort();
    /** Segments whose hand-over ended, told once the subscription's lock is released ({@link #tellHandedOver}). */
    private final List<Long> endedHandOvers = new ArrayList<>();
    private final Disposable.Composite running = Disposables.composite();

    /** A subscription acting on every segment of the topic (one process holds the cluster). */
    public Subscription(TopicStorage storage, LoadTracker load, Scheduler dispatch, Builder options) {
        this(storage, load, dispatch, SegmentOwnership.ALL, options);
    }

    /**
     * @param dispatch where entries are opened and dispatched (not the thread that appended them, which may
     *        be a network event loop)
     * @param ownership the segments this process dispatches: the others are read by the process that owns them
     * @param options the consumers, the receiver queue size, recording and the listener
     */
    public Subscription(TopicStorage storage, LoadTracker load, Scheduler dispatch, SegmentOwnership ownership,
            Builder options) {
        this.storage = storage;
        this.topic = storage.topic();
        this.name = options.name;
        this.receiverQueueSize = options.config.receiverQueueSize();
        this.load = load;
        this.dispatch = dispatch;
        this.ownership = ownership;
        this.onDispatch = options.onDispatch;
        for (int i = 0; i < options.consumers; i++) {
            queues.add(new ReceiverQueue("consumer " + i + " of subscription '" + name + "'", receiverQueueSize,
                    this::stillDispatched));
            unacknowledged.add(new AtomicReference<>(Collections.emptyMap()));
        }
        this.all = options.recording ? Sinks.many().replay().all() : Sinks.many().multicast().directBestEffort();
        // ownership first: a change between the first layout's reading and this subscribing would be missed
        running.add(ownership.changes().subscribe(v -> reconsider(storage.layout()),
                e -> LOG.error("{}: subscription {} no longer follows ownership: {}", topic, name, e.toString())));
        running.add(storage.layouts().subscribe(this::reconsider,
                e -> LOG.error("{}: subscription {} no longer follows the layout: {}", topic, name, e.toString())));
    }

    public String name() {
        return name;
    }

    public int consumers() {
        return queues.size();
    }

    /** The most entries one consumer's queue holds. */
    public int receiverQueueSize() {
        return receiverQueueSize;
    }

    /**
     * What consumer {@code index} receives, in dispatch order, as it requests: first what waits in its queue.
     * Each delivery is acknowledged as the reader takes it (before the operators after it: one that prefetches and
     * drops what it holds when cancelled, {@code publishOn} say, drops acknowledged deliveries). One reader at a time (a second one gets an error);
     * after a reader cancels, the next one goes on.
     */
    public Flux<Delivery> consumer(int index) {
        return queue(index).flux().doOnNext(this::received);
    }

    /**
     * What consumer {@code index} receives, as {@link #consumer} does, each delivery acknowledged only by
     * {@link #acknowledge}: a reader across a network acknowledges what its client took. What the reader did not
     * acknowledge when it ends is given again to the next reader (Pulsar's redelivery of unacknowledged
     * messages), or, when this process gave its segment up meanwhile, by the segment's next owner.
     */
    public Flux<Delivery> consumerWithAcknowledgements(int index) {
        ReceiverQueue queue = queue(index);
        return Flux.defer(() -> {
            Map<Delivery, Boolean> given = Collections.synchronizedMap(new LinkedHashMap<>());
            boolean[] ended = {false}; // guarded by given's monitor
            return queue.flux()
                    .doOnNext(d -> {
                        boolean late;
                        synchronized (given) {
                            late = ended[0];
                            if (!late) {
                                if (given.isEmpty()) {
                                    // set by a reader that was taken (a refused second reader never gets here)
                                    unacknowledged.get(index).set(given);
                                }
                                given.put(d, Boolean.TRUE);
                            }
                        }
                        if (late) { // handed over as the reader ended: it did not take it
                            queue.requeue(List.of(d));
                        }
                    })
                    .doFinally(signal -> {
                        unacknowledged.get(index).compareAndSet(given, Collections.emptyMap());
                        List<Delivery> back;
                        synchronized (given) {
                            ended[0] = true;
                            back = List.copyOf(given.keySet());
                            given.clear();
                        }
                        queue.requeue(back); // those of a segment given up meanwhile are left out (stillDispatched)
                    });
        });
    }

    /** Consumer {@link Delivery#consumer}'s client took {@code d}: the cursor goes past it once all before it are. */
    public void acknowledge(Delivery d) {
        if (d.consumer() < 0 || d.consumer() >= unacknowledged.size()) {
            return;
        }
        Map<Delivery, Boolean> given = Objects.requireNonNull(unacknowledged.get(d.consumer()).get(), "set");
        given.remove(d);
        received(d);
    }

    /**
     * Whether {@code d} is still with this subscription to deliver: dispatched by the reader of its segment that
     * reads now (not one given up since, whose entries the segment's owner delivers again) and not received.
     */
    private synchronized boolean stillDispatched(Delivery d) {
        SegmentReader r = readers.get(d.segmentId());
        return r != null && r.pending.contains(d);
    }

    /** Entries waiting in consumer {@code index}'s queue: dispatched, not yet received. */
    public int queueDepth(int index) {
        return queue(index).depth();
    }

    /**
     * Entries this subscription's cursors have not acknowledged yet (not read, or with a consumer that did not
     * receive them yet), over every segment held.
     */
    public long backlog() {
        long sum = 0;
        for (Segment s : storage.layout().segments().values()) {
            sum += storage.backlog(s.id(), name);
        }
        return sum;
    }

    /**
     * What every consumer received, in the order it was dispatched: from the start for a recording
     * subscription, else from the moment of subscribing.
     */
    public Flux<Delivery> deliveries() {
        return all.asFlux();
    }

    /** Whether this process still hands segment {@code segment} over: what it dispatched is not all received. */
    public boolean handingOver(long segment) {
        SegmentReader r = readers.get(segment);
        return r != null && r.handingOver;
    }

    /** Each segment whose hand-over ended (everything dispatched received, or {@link #HAND_OVER_LIMIT} passed). */
    public Flux<Long> handedOver() {
        return handedOver.asFlux();
    }

    private ReceiverQueue queue(int index) {
        if (index < 0 || index >= queues.size()) {
            throw new IllegalArgumentException("subscription '" + name + "' has consumers 0.." + (queues.size() - 1)
                    + ", not " + index);
        }
        return queues.get(index);
    }

    /**
     * Reads the segments this process acts on, from their cursors; stops reading those it no longer acts on
     * (handing over those a move asks for); drops those deleted. Every segment's cursor is made, read or not: a
     * child's wait for its parent to drain counts a missing cursor as nothing to read.
     */
    private void reconsider(Layout layout) {
        try {
            reconsiderNow(layout);
        } catch (RuntimeException e) {
            // kept following: the next layout or ownership change tries again
            LOG.error("{}: subscription {} could not follow layout {}: {}", topic, name, layout.epoch(), e.toString());
        }
        tellHandedOver();
    }

    private synchronized void reconsiderNow(Layout layout) {
        if (running.isDisposed()) {
            return;
        }
        // deleted (read to the end before they went): a reader still there is disposed, or one reading again would
        // ask for the deleted topic (on Pulsar that makes it anew)
        for (SegmentReader r : List.copyOf(readers.values())) {
            if (layout.segment(r.segment.id()).isEmpty()) {
                giveUp(r);
            }
        }
        openings.entrySet().removeIf(e -> {
            if (layout.segment(e.getKey()).isPresent()) {
                return false;
            }
            e.getValue().dispose();
            running.remove(e.getValue());
            cursors.remove(e.getKey());
            return true;
        });
        for (Segment s : layout.segments().values()) {
            if (!cursors.containsKey(s.id()) && !openCursor(s)) {
                continue; // deleted by garbage collection: drained by every cursor before it went
            }
            boolean owns = ownership.owns(topic, s.id());
            SegmentReader r = readers.get(s.id());
            if (r != null) {
                if (owns && !r.handingOver) {
                    continue;
                }
                if (!owns && ownership.handsOver(topic, s.id())) {
                    r.handOver();
                    continue;
                }
                // lost (a lapsed lease, a move that did not hand over), or acted on again while handing over: what
                // its consumers did not receive is delivered by the segment's owner, from the cursor
                giveUp(r);
            }
            if (owns) {
                read(layout, s);
            }
        }
    }

    /** Makes segment {@code s}'s cursor; false when its log is gone (deleted by garbage collection). */
    private boolean openCursor(Segment s) {
        SourceSegmentLog log = storage.findLog(s.id()).orElse(null);
        if (log == null) {
            return false;
        }
        // Made once, shared by the reader and by each child's wait: a child asks whether this segment is drained for
        // the subscription only once its cursor exists (a gate may count a missing cursor as nothing to read).
        // Tried again while the segment is in the layout: one deleted by garbage collection meanwhile (on Pulsar its
        // topic is gone, and the broker makes none on demand) ends it, as nothing to read.
        Mono<ReplicationCursor> cursor = log.cursor(name, StartAt.EARLIEST)
                .retryWhen(retrying("cannot open its cursor on", s).filter(e -> held(s.id())))
                .cache();
        cursors.put(s.id(), cursor);
        // made now, before its parents drain: from here on it holds what the subscription has not read (in memory at
        // once, on Pulsar once the broker answers)
        Disposable opening = cursor.subscribe(c -> { }, e -> {
            if (held(s.id())) {
                LOG.error("{}: subscription {} cannot open its cursor on segment {}: {}", topic, name, s.descriptor(),
                        e.toString());
            }
        });
        openings.put(s.id(), opening);
        running.add(opening);
        return true;
    }

    /** Starts reading segment {@code s}, once every parent is drained for the subscription. */
    private void read(Layout layout, Segment s) {
        Mono<ReplicationCursor> cursor = Objects.requireNonNull(cursors.get(s.id()), "made before");
        SegmentReader reader = new SegmentReader(s);
        readers.put(s.id(), reader);
        running.add(reader);
        // Parents first: a segment is read once every parent is sealed and read to its end.
        // Every ancestor's cursor first, not only the parents': a gate asked about a parent looks at its ancestors
        // too, and may count a cursor not made yet as nothing left to read.
        Flux.fromIterable(ancestors(layout, s))
                .flatMap(a -> cursors.getOrDefault(a, Mono.empty())
                        .onErrorResume(e -> !held(a), e -> Mono.empty())) // deleted: drained before it went
                .thenMany(Flux.fromIterable(s.parentIds()))
                .flatMap(p -> storage.drainGate().drained(p, name))
                .then(cursor)
                .flatMapMany(c -> {
                    reader.cursor = c;
                    // a read that fails (on Pulsar: the consumer cut off, the topic unloaded, the segment's former
                    // owner still holding its subscription) is read again from the durable position, not given up:
                    // what is still with the consumers is not dispatched again (SegmentAcks#fresh)
                    return Flux.defer(c::read).retryWhen(retrying("reads again", s).filter(e -> held(s.id())));
                })
                .subscribe(reader);
    }

    /**
     * Stops reading {@code r}'s segment and drops what its consumers did not receive: its next owner (or this
     * process, reading it again) delivers that from the cursor. A hand-over ends here.
     */
    private synchronized void giveUp(SegmentReader r) {
        if (!readers.remove(r.segment.id(), r)) {
            return;
        }
        r.dispose();
        r.limit.dispose();
        running.remove(r);
        queues.forEach(q -> q.purge(r.segment.id()));
        if (r.handingOver) {
            endedHandOvers.add(r.segment.id()); // told outside the lock: the ownership it reaches takes its own
        }
    }

    /** Tells the hand-overs that ended; called with no lock of this subscription held. */
    private void tellHandedOver() {
        List<Long> ended;
        synchronized (this) {
            if (endedHandOvers.isEmpty()) {
                return;
            }
            ended = List.copyOf(endedHandOvers);
            endedHandOvers.clear();
        }
        synchronized (handedOver) { // one emitter at a time
            ended.forEach(handedOver::tryEmitNext);
        }
    }

    /** A consumer took {@code d}: acknowledges its segment's cursor as far as every entry before it was taken too. */
    private void received(Delivery d) {
        SegmentReader r;
        SourcePosition upTo;
        synchronized (this) {
            r = readers.get(d.segmentId());
            if (r == null) {
                return; // given up: its next owner delivers it again (not acknowledged)
            }
            r.pending.remove(d);
            upTo = r.acks.received(d.position()).orElse(null);
            if (upTo != null) {
                r.acknowledging++;
            }
        }
        ReplicationCursor cursor = r.cursor;
        if (upTo == null) {
            // past an entry still with a consumer: acknowledged alone (on Pulsar the broker keeps it, so the
            // segment's next owner does not give it again); the cursor's position waits for the one before
            if (cursor != null) {
                cursor.acknowledgeOne(d.position());
            }
            return;
        }
        Objects.requireNonNull(cursor, "cursor"); // a position acknowledged was dispatched, so read, by this reader
        // done at once in memory; on Pulsar acknowledgements are coalesced and sent behind
        cursor.acknowledge(upTo)
                .doFinally(signal -> r.acknowledged())
                .subscribe(v -> { }, e -> LOG.warn("{}: subscription {} could not acknowledge {} on segment {}: {}",
                        topic, name, upTo, r.segment.descriptor(), e.toString()));
    }

    /** Whether segment {@code id} is in the layout the storage holds (not deleted by garbage collection). */
    private boolean held(long id) {
        return storage.layout().segment(id).isPresent();
    }

    /** Backoff from 100 ms to {@link #MAX_BACKOFF} on the dispatch scheduler, a WARN at each failure. */
    private RetryBackoffSpec retrying(String what, Segment s) {
        return Retry.backoff(Long.MAX_VALUE, Duration.ofMillis(100))
                .maxBackoff(MAX_BACKOFF).scheduler(dispatch)
                .doBeforeRetry(r -> LOG.warn("{}: subscription {} {} segment {} (attempt {}): {}", topic, name,
                        what, s.descriptor(), r.totalRetries() + 1, String.valueOf(r.failure())));
    }

    /** Every segment {@code s} descends from in {@code layout} (parents, their parents, …). */
    private static Set<Long> ancestors(Layout layout, Segment s) {
        Set<Long> out = new LinkedHashSet<>();
        Deque<Long> todo = new ArrayDeque<>(s.parentIds());
        while (!todo.isEmpty()) {
            long id = todo.pop();
            if (out.add(id)) {
                layout.segment(id).ifPresent(p -> todo.addAll(p.parentIds()));
            }
        }
        return out;
    }

    private Opened open(Segment segment, StoredEntry stored) {
        Entry entry = Entry.parse(stored.bytes());
        EntryFacts facts = entry.facts();
        // Only the stamp's minimum is consulted (Pulsar's sticky hash); an unstamped entry goes by its key.
        int hashB = facts.stamp().map(Stamp::hashMin).orElseGet(() -> facts.outerKey().map(KeyHash::hashB).orElse(0));
        int bucket = segment.buckets().bucketOf(hashB);
        int consumer = consumerOf(bucket, segment.buckets().count(), queues.size());
        return new Opened(new Delivery(consumer, segment.id(), bucket, stored.position(), Entries.messages(entry)),
                entry.payload().remaining());
    }

    /**
     * Puts {@code d}, read by {@code r}, into its consumer's queue and shows it to the watchers, in one step so that
     * they see the queues' order; or, the queue being full, leaves {@code onRoom} with it and refuses. Also refuses
     * (for good) once {@code r} stopped reading.
     */
    private boolean enqueue(SegmentReader r, Delivery d, Runnable onRoom) {
        ReceiverQueue queue = queues.get(d.consumer());
        synchronized (this) {
            if (readers.get(r.segment.id()) != r || r.stopped || r.handingOver || !queue.offer(d, onRoom)) {
                return false;
            }
            r.acks.dispatched(d.position()); // before any reader can take it
            r.pending.add(d);
            all.tryEmitNext(d);
            onDispatch.accept(d);
        }
        queue.drain(); // outside the lock: the reader's code runs here
        return true;
    }

    /**
     * PIP-486's selector: consumer {@code j} of {@code k} owns buckets {@code [⌊j·N/k⌋, ⌊(j+1)·N/k⌋)}, so
     * bucket {@code b} belongs to the first {@code j} whose range ends past it: {@code ⌈(b+1)·k/N⌉ − 1}.
     * With fewer buckets than consumers, some consumers own none.
     */
    static int consumerOf(int bucket, int buckets, int consumers) {
        long numerator = (long) (bucket + 1) * consumers;
        return (int) ((numerator + buckets - 1) / buckets) - 1;
    }

    /** Runs {@code action} when the subscription is disposed (at once if it is already). */
    public void onDispose(Disposable action) {
        running.add(action);
    }

    /**
     * Closes the subscription and deletes its cursors (Pulsar's unsubscribe): what it has not read no
     * longer keeps entries or sealed segments from being deleted. {@link #dispose} alone only closes its
     * consumers; the durable subscription stays, holding its backlog.
     */
    public void unsubscribe() {
        dispose();
        storage.removeCursor(name).block();
    }

    @Override
    public void dispose() {
        running.dispose();
        queues.forEach(ReceiverQueue::close);
        synchronized (this) {
            all.tryEmitComplete();
        }
        handedOver.tryEmitComplete();
    }

    @Override
    public boolean isDisposed() {
        return running.isDisposed();
    }

    /**
     * Reads one segment's cursor for this subscription, one entry at a time: the next entry is requested once
     * the last one is in its consumer's queue, so a full queue holds the cursor where it is. The cursor is
     * acknowledged as the consumers receive ({@link SegmentAcks}). At most one step of a segment is pending on
     * the dispatch scheduler at a time.
     */
    private final class SegmentReader extends BaseSubscriber<StoredEntry> {
        private final Segment segment;
        /** Guarded by the subscription's lock. */
        private final SegmentAcks acks = new SegmentAcks();
        /** The deliveries it dispatched that no consumer received yet (by identity); the subscription's lock. */
        private final Set<Delivery> pending = Collections.newSetFromMap(new IdentityHashMap<>());
        /** Set before the first entry arrives. */
        private volatile @Nullable ReplicationCursor cursor;
        /** Cancelled: a step already scheduled does nothing (a completed read still lets its last step finish). */
        private volatile boolean stopped;
        /** Acknowledgements asked of the cursor and not yet answered; guarded by the subscription's lock. */
        private int acknowledging;
        /** A move asks this process to give the segment up: it reads no more, and ends once all is received. */
        private volatile boolean handingOver;
        private volatile Disposable limit = Disposables.disposed();

        SegmentReader(Segment segment) {
            this.segment = segment;
        }

        @Override
        protected void hookOnSubscribe(org.reactivestreams.Subscription s) {
            s.request(1);
        }

        @Override
        protected void hookOnNext(StoredEntry stored) {
            dispatch.schedule(() -> step(() -> enqueue(open(segment, stored))));
        }

        private void enqueue(Opened o) {
            if (stopped) {
                return;
            }
            boolean fresh;
            synchronized (Subscription.this) {
                fresh = acks.fresh(o.delivery().position());
            }
            if (fresh) {
                if (!Subscription.this.enqueue(this, o.delivery(), () -> dispatch.schedule(() -> step(() -> enqueue(o))))) {
                    return; // tried again once the consumer made room (or stopped)
                }
                load.dispatched(segment.id(), o.delivery().messages().size(), o.bytes());
            }
            request(1);
        }

        /** Reads no more; ends once every consumer received what it was given, or at {@link #HAND_OVER_LIMIT}. */
        void handOver() {
            synchronized (Subscription.this) {
                if (handingOver) {
                    return;
                }
                handingOver = true;
            }
            // nothing more is dispatched (enqueue refuses), but the read stays open until the hand-over ends: its
            // consumer carries the individual acknowledgements of what the consumers receive meanwhile; what it had
            // read and not dispatched is read by the next owner
            limit = dispatch.schedule(() -> {
                LOG.warn("{}: subscription {} handed segment {} over with entries its consumers had not received "
                        + "within {} ms: the next owner delivers them again", topic, name, segment.descriptor(),
                        HAND_OVER_LIMIT.toMillis());
                giveUp(this);
                tellHandedOver();
            }, HAND_OVER_LIMIT.toMillis(), TimeUnit.MILLISECONDS);
            endIfHandedOver();
        }

        void acknowledged() {
            synchronized (Subscription.this) {
                acknowledging--;
            }
            endIfHandedOver();
            tellHandedOver();
        }

        private void endIfHandedOver() {
            synchronized (Subscription.this) {
                if (handingOver && acks.outstanding() == 0 && acknowledging == 0) {
                    giveUp(this);
                }
            }
        }

        private void step(Runnable step) {
            try {
                step.run();
            } catch (RuntimeException e) {
                // given up: what it dispatched and was not received is read again once the segment is read again
                LOG.error("{}: subscription {} stopped reading segment {}: {}", topic, name, segment.descriptor(),
                        e.toString());
                giveUp(this);
                tellHandedOver();
            }
        }

        @Override
        protected void hookOnCancel() {
            stopped = true;
        }

        @Override
        protected void hookOnError(Throwable e) {
            if (!held(segment.id())) {
                return; // deleted by garbage collection under the read: every cursor had drained it
            }
            LOG.error("{}: subscription {} stopped reading segment {}: {}", topic, name, segment.descriptor(),
                    e.toString());
        }
    }

    /**
     * A subscription to be opened, from {@code ClusterNode.subscription}: one consumer, not recording, no
     * listener and the configuration's receiver queue size unless set. Each setter checks its value at once.
     *
     * <pre>{@code
     * Subscription billing = node.subscription(topic, "billing").consumers(3).receiverQueueSize(100)
     *         .onDispatch(checks::accept).subscribe();
     * }</pre>
     */
    public static final class Builder {
        private final String name;
        private final Function<Builder, Subscription> open;
        private SubscriptionConfig config;
        private int consumers = 1;
        private boolean recording;
        private Consumer<Delivery> onDispatch = d -> { };

        public Builder(String name, SubscriptionConfig defaults, Function<Builder, Subscription> open) {
            if (name == null || name.isBlank()) {
                throw new IllegalArgumentException("a subscription needs a name, not '" + name + "'");
            }
            this.name = name;
            this.config = defaults;
            this.open = open;
        }

        public String name() {
            return name;
        }

        /** PIP-486's {@code k}: how many consumers share the entries, by bucket. */
        public Builder consumers(int value) {
            if (value < 1) {
                throw new IllegalArgumentException("subscription '" + name + "': consumers: " + value
                        + " is out of range (expected at least one consumer)");
            }
            consumers = value;
            return this;
        }

        /** The most entries each consumer's queue holds, within [1, 1000000]. */
        public Builder receiverQueueSize(int entries) {
            try {
                config = config.withReceiverQueueSize(entries);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("subscription '" + name + "': " + e.getMessage(), e);
            }
            return this;
        }

        /** Whether {@link Subscription#deliveries()} keeps and replays every delivery (tests, short runs). */
        public Builder recording(boolean value) {
            recording = value;
            return this;
        }

        /**
         * Called with every delivery as it enters its consumer's queue, in dispatch order, one call at a
         * time on the dispatch scheduler, from the first entry on; must be quick, must not block or throw.
         */
        public Builder onDispatch(Consumer<Delivery> listener) {
            onDispatch = Objects.requireNonNull(listener, "listener");
            return this;
        }

        /** Opens the subscription: from now on its consumers' queues fill. */
        public Subscription subscribe() {
            return open.apply(this);
        }
    }
}
