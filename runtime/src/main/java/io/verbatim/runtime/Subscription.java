package io.verbatim.runtime;

import io.verbatim.model.EntryFacts;
import io.verbatim.model.Layout;
import io.verbatim.model.Segment;
import io.verbatim.model.entry.Entries;
import io.verbatim.model.entry.Entry;
import io.verbatim.model.entry.Message;
import io.verbatim.model.entry.SourcePosition;
import io.verbatim.pipeline.StartAt;
import io.verbatim.pipeline.StoredEntry;
import io.verbatim.pipeline.memory.MemoryCluster;
import io.verbatim.pipeline.memory.MemoryCursor;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import reactor.core.Disposable;
import reactor.core.Disposables;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Scheduler;
import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * A subscription of {@code k} consumers to one topic, dispatching as PIP-486 does: whole entries, each
 * to the consumer that owns its bucket in its segment ({@link #consumerOf}, PIP-486's selector), so a
 * key stays with one consumer while its segment lives. A segment is read only after every parent is
 * drained for this subscription, so a key's messages are delivered in order across splits and merges.
 *
 * <p>Each consumer's deliveries wait in its own queue until it reads them ({@link #consumer}, one reader
 * per consumer): memory grows with the consumer's lag, as there is no flow control back to the cursors
 * yet. A recording subscription also keeps every delivery in dispatch order for {@link #deliveries} (for
 * checks and tests; it keeps everything).
 */
public final class Subscription implements Disposable {
    /** One entry delivered to one consumer. */
    public record Delivery(int consumer, long segmentId, int bucket, SourcePosition position, List<Message> messages) {
    }

    private final MemoryCluster storage;
    private final String name;
    private final int consumers;
    private final LoadTracker load;
    private final Scheduler dispatch;
    private final List<Sinks.Many<Delivery>> sinks = new ArrayList<>();
    private final Sinks.Many<Delivery> all;
    private final Map<Long, Disposable> readers = new ConcurrentHashMap<>();
    private final Disposable.Composite running = Disposables.composite();
    private static final Logger LOG = Loggers.getLogger(Subscription.class);

    /**
     * @param recording whether {@link #deliveries} replays every delivery from the start
     * @param dispatch where entries are opened and dispatched (not the thread that appended them, which may
     *        be a network event loop)
     */
    Subscription(MemoryCluster storage, String name, int consumers, LoadTracker load, boolean recording,
            Scheduler dispatch) {
        if (consumers < 1) {
            throw new IllegalArgumentException("a subscription needs at least one consumer, not " + consumers);
        }
        this.storage = storage;
        this.name = name;
        this.consumers = consumers;
        this.load = load;
        this.dispatch = dispatch;
        for (int i = 0; i < consumers; i++) {
            sinks.add(Sinks.many().unicast().onBackpressureBuffer());
        }
        this.all = recording ? Sinks.many().replay().all() : Sinks.many().multicast().directBestEffort();
        running.add(storage.layouts().subscribe(this::readNewSegments));
    }

    public String name() {
        return name;
    }

    public int consumers() {
        return consumers;
    }

    /** What consumer {@code index} receives, in delivery order, from the start; one reader per consumer. */
    public Flux<Delivery> consumer(int index) {
        return sinks.get(index).asFlux();
    }

    /**
     * What every consumer received, in the order it was dispatched: from the start for a recording
     * subscription, else from the moment of subscribing.
     */
    public Flux<Delivery> deliveries() {
        return all.asFlux();
    }

    private synchronized void readNewSegments(Layout layout) {
        for (Segment s : layout.segments().values()) {
            if (readers.containsKey(s.id()) || running.isDisposed()) {
                continue;
            }
            MemoryCursor cursor = storage.log(s.id()).openCursor(name, StartAt.EARLIEST);
            // Parents first: a segment is read once every parent is sealed and read to its end.
            Disposable reader = Flux.fromIterable(s.parentIds()).flatMap(p -> storage.drainGate().drained(p, name))
                    .thenMany(Flux.defer(cursor::read)).publishOn(dispatch)
                    .subscribe(stored -> deliver(s, cursor, stored),
                            e -> LOG.error("{}: subscription {} stopped reading segment {}: {}", storage.name(), name,
                                    s.descriptor(), e.toString()));
            readers.put(s.id(), reader);
            running.add(reader);
        }
    }

    private void deliver(Segment segment, MemoryCursor cursor, StoredEntry stored) {
        Entry entry = Entry.parse(stored.bytes());
        EntryFacts facts = entry.facts();
        // Only the stamp's minimum is consulted (Pulsar's sticky hash); an unstamped entry goes by its key.
        int hashB = facts.isStamped() ? facts.stamp().hashMin()
                : facts.outerKey() == null ? 0 : facts.outerKey().hashB();
        int bucket = segment.buckets().bucketOf(hashB);
        int consumer = consumerOf(bucket, segment.buckets().count(), consumers);
        List<Message> messages = Entries.messages(entry);
        load.dispatched(segment.id(), messages.size(), entry.payload().remaining());
        synchronized (this) {
            Delivery d = new Delivery(consumer, segment.id(), bucket, stored.position(), messages);
            sinks.get(consumer).tryEmitNext(d);
            all.tryEmitNext(d);
        }
        cursor.acknowledge(stored.position()).subscribe(); // synchronous in memory
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

    @Override
    public void dispose() {
        running.dispose();
        sinks.forEach(Sinks.Many::tryEmitComplete);
        all.tryEmitComplete();
    }

    @Override
    public boolean isDisposed() {
        return running.isDisposed();
    }
}
