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
import java.util.Deque;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
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
 * a time: the entry goes into its consumer's queue, then the segment's cursor is acknowledged past it,
 * then the next entry is read. While the consumer that owns a segment's next entry has a full queue, that
 * segment stops there (its cursor is neither read nor acknowledged further; {@link #backlog()} counts what
 * waits) and it resumes as the consumer's requests make room. Other segments go on feeding their
 * consumers; the stalled segment's later entries wait behind it even when another consumer owns them,
 * and so do its children, until it is drained: that keeps each key in order. Memory held for consumers
 * is bounded by {@code k × receiverQueueSize} entries.
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

    private final TopicStorage storage;
    private final String name;
    private final int receiverQueueSize;
    private final LoadTracker load;
    private final Scheduler dispatch;
    private final List<ReceiverQueue> queues = new ArrayList<>();
    private final Sinks.Many<Delivery> all;
    private final Consumer<Delivery> onDispatch;
    private final Map<Long, SegmentReader> readers = new ConcurrentHashMap<>();
    /** Each segment's cursor of this subscription, made once. */
    private final Map<Long, Mono<ReplicationCursor>> cursors = new ConcurrentHashMap<>();
    private final Disposable.Composite running = Disposables.composite();

    /**
     * @param dispatch where entries are opened and dispatched (not the thread that appended them, which may
     *        be a network event loop)
     * @param options the consumers, the receiver queue size, recording and the listener
     */
    public Subscription(TopicStorage storage, LoadTracker load, Scheduler dispatch, Builder options) {
        this.storage = storage;
        this.name = options.name;
        this.receiverQueueSize = options.config.receiverQueueSize();
        this.load = load;
        this.dispatch = dispatch;
        this.onDispatch = options.onDispatch;
        for (int i = 0; i < options.consumers; i++) {
            queues.add(new ReceiverQueue("consumer " + i + " of subscription '" + name + "'", receiverQueueSize));
        }
        this.all = options.recording ? Sinks.many().replay().all() : Sinks.many().multicast().directBestEffort();
        running.add(storage.layouts().subscribe(this::readNewSegments));
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
     * One reader at a time (a second one gets an error); after a reader cancels, the next one goes on.
     */
    public Flux<Delivery> consumer(int index) {
        return queue(index).flux();
    }

    /** Entries waiting in consumer {@code index}'s queue: dispatched, not yet received. */
    public int queueDepth(int index) {
        return queue(index).depth();
    }

    /** Entries this subscription's cursors have not handed to a consumer yet, over every segment held. */
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

    private ReceiverQueue queue(int index) {
        if (index < 0 || index >= queues.size()) {
            throw new IllegalArgumentException("subscription '" + name + "' has consumers 0.." + (queues.size() - 1)
                    + ", not " + index);
        }
        return queues.get(index);
    }

    private synchronized void readNewSegments(Layout layout) {
        // deleted (read to the end before they went): a reader still there is disposed, or one reading again would
        // ask for the deleted topic (on Pulsar that makes it anew)
        readers.values().removeIf(r -> {
            if (layout.segment(r.segment.id()).isPresent()) {
                return false;
            }
            r.dispose();
            r.opening.dispose();
            running.remove(r);
            running.remove(r.opening);
            return true;
        });
        cursors.keySet().removeIf(id -> layout.segment(id).isEmpty());
        for (Segment s : layout.segments().values()) {
            if (readers.containsKey(s.id()) || running.isDisposed()) {
                continue;
            }
            SourceSegmentLog log = storage.findLog(s.id()).orElse(null);
            if (log == null) {
                continue; // deleted by garbage collection: drained by every cursor before it went
            }
            // Made once, shared by the reader and by each child's wait: a child asks whether this segment is
            // drained for the subscription only once its cursor exists (a gate may count a missing cursor as
            // nothing to read).
            // Tried again while the segment is in the layout: one deleted by garbage collection meanwhile (on Pulsar
            // its topic is gone, and the broker makes none on demand) ends it, as nothing to read.
            Mono<ReplicationCursor> cursor = log.cursor(name, StartAt.EARLIEST)
                    .retryWhen(retrying("cannot open its cursor on", s).filter(e -> held(s.id())))
                    .cache();
            cursors.put(s.id(), cursor);
            // made now, before its parents drain: from here on it holds what the subscription has not read (in
            // memory at once, on Pulsar once the broker answers)
            Disposable opening = cursor.subscribe(c -> { }, e -> {
                if (held(s.id())) {
                    LOG.error("{}: subscription {} cannot open its cursor on segment {}: {}", storage.topic(), name,
                            s.descriptor(), e.toString());
                }
            });
            running.add(opening);
            SegmentReader reader = new SegmentReader(s, opening);
            readers.put(s.id(), reader);
            running.add(reader);
            // Parents first: a segment is read once every parent is sealed and read to its end.
            // Every ancestor's cursor first, not only the parents': a gate asked about a parent looks at its
            // ancestors too, and may count a cursor not made yet as nothing left to read.
            Flux.fromIterable(ancestors(layout, s))
                    .flatMap(a -> cursors.getOrDefault(a, Mono.empty())
                            .onErrorResume(e -> !held(a), e -> Mono.empty())) // deleted: drained before it went
                    .thenMany(Flux.fromIterable(s.parentIds()))
                    .flatMap(p -> storage.drainGate().drained(p, name))
                    .then(cursor)
                    .flatMapMany(c -> {
                        reader.cursor = c;
                        // a read that fails (on Pulsar: the consumer cut off, the topic unloaded) is read again from
                        // the durable position, not given up: what was handed over and not yet acknowledged may come
                        // again (at least once, as a Pulsar consumer's redelivery)
                        return Flux.defer(c::read).retryWhen(retrying("reads again", s).filter(e -> held(s.id())));
                    })
                    .subscribe(reader);
        }
    }

    /** Whether segment {@code id} is in the layout the storage holds (not deleted by garbage collection). */
    private boolean held(long id) {
        return storage.layout().segment(id).isPresent();
    }

    /** Backoff from 100 ms to 10 s on the dispatch scheduler, a WARN at each failure. */
    private RetryBackoffSpec retrying(String what, Segment s) {
        return Retry.backoff(Long.MAX_VALUE, Duration.ofMillis(100))
                .maxBackoff(Duration.ofSeconds(10)).scheduler(dispatch)
                .doBeforeRetry(r -> LOG.warn("{}: subscription {} {} segment {} (attempt {}): {}", storage.topic(), name,
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
     * Puts {@code d} into its consumer's queue and shows it to the watchers, in one step so that they see
     * the queues' order; or, the queue being full, leaves {@code onRoom} with it and refuses.
     */
    private boolean handOver(Delivery d, Runnable onRoom) {
        ReceiverQueue queue = queues.get(d.consumer());
        synchronized (this) {
            if (!queue.offer(d, onRoom)) {
                return false;
            }
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
    }

    @Override
    public boolean isDisposed() {
        return running.isDisposed();
    }

    /**
     * Reads one segment's cursor for this subscription, one entry at a time: the next entry is requested
     * only once the last one is in its consumer's queue and acknowledged, so a full queue holds the cursor
     * where it is. At most one step of a segment is pending on the dispatch scheduler at a time.
     */
    private final class SegmentReader extends BaseSubscriber<StoredEntry> {
        private final Segment segment;
        /** The opening of its cursor, shared with its children's waits. */
        private final Disposable opening;
        /** Set before the first entry arrives. */
        private volatile @Nullable ReplicationCursor cursor;
        private volatile boolean stopped;

        SegmentReader(Segment segment, Disposable opening) {
            this.segment = segment;
            this.opening = opening;
        }

        @Override
        protected void hookOnSubscribe(org.reactivestreams.Subscription s) {
            s.request(1);
        }

        @Override
        protected void hookOnNext(StoredEntry stored) {
            dispatch.schedule(() -> step(() -> handOver(open(segment, stored))));
        }

        private void handOver(Opened o) {
            if (stopped) {
                return;
            }
            if (!Subscription.this.handOver(o.delivery(), () -> dispatch.schedule(() -> step(() -> handOver(o))))) {
                return; // tried again once the consumer made room
            }
            load.dispatched(segment.id(), o.delivery().messages().size(), o.bytes());
            // done at once in memory; on Pulsar acknowledgements are coalesced and sent behind
            Objects.requireNonNull(cursor, "cursor").acknowledge(o.delivery().position()).subscribe(v -> { },
                    e -> LOG.warn("{}: subscription {} could not acknowledge {} on segment {}: {}", storage.topic(), name,
                            o.delivery().position(), segment.descriptor(), e.toString()));
            request(1);
        }

        private void step(Runnable step) {
            try {
                step.run();
            } catch (RuntimeException e) {
                LOG.error("{}: subscription {} stopped reading segment {}: {}", storage.topic(), name,
                        segment.descriptor(), e.toString());
                dispose();
            }
        }

        @Override
        protected void hookOnCancel() {
            stopped = true; // a step already scheduled does nothing; completion alone lets the last one finish
        }

        @Override
        protected void hookOnError(Throwable e) {
            if (!held(segment.id())) {
                return; // deleted by garbage collection under the read: every cursor had drained it
            }
            LOG.error("{}: subscription {} stopped reading segment {}: {}", storage.topic(), name,
                    segment.descriptor(), e.toString());
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
