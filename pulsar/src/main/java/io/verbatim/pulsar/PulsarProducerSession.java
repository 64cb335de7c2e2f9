package io.verbatim.pulsar;

import io.verbatim.model.EntryFacts;
import io.verbatim.model.HashRange;
import io.verbatim.model.Segment;
import io.verbatim.model.entry.Entry;
import io.verbatim.model.entry.SourcePosition;
import io.verbatim.pipeline.ProducerSession;
import io.verbatim.pipeline.RemoteException.Kind;
import io.verbatim.pipeline.RemoteException;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ConcurrentSkipListSet;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.LongFunction;
import org.apache.pulsar.client.api.CompressionType;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.ProducerBuilder;
import org.apache.pulsar.client.api.PulsarClientException;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.impl.ClientCnx;
import org.apache.pulsar.client.impl.MessageIdImpl;
import org.apache.pulsar.client.impl.MessageImpl;
import org.apache.pulsar.client.impl.ProducerBuilderImpl;
import org.apache.pulsar.client.impl.ProducerImpl;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Mono;
import reactor.core.publisher.SynchronousSink;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * An ordered send session into one segment topic, through a replicator producer as Pulsar's own
 * geo-replicator makes it: named {@code pulsar.repl.<source>.<segmentId>} (the prefix puts the broker
 * on its replication dedup path), batching and compression off (an entry, its batch included, goes as one
 * message, its metadata and payload bytes as they are), the entry's metadata carried.
 *
 * <p>The broker's dedup drops an entry at or below the highest source position it persisted for the
 * producer and answers {@code -1:-1}: a {@link Receipt#DUPLICATE}. The position it reads is the
 * {@link WirePositions wire form}, so the entry is stamped once more with it.
 *
 * <p>The producer is created on the first send; sends before it exists wait in call order. The first
 * failure breaks the session: the producer is closed, and every later send fails
 * {@link Kind#SESSION_BROKEN}; a cancelled send breaks it too, as its fate is unknown.
 */
final class PulsarProducerSession implements ProducerSession {
    private static final Logger LOG = LoggerFactory.getLogger(PulsarProducerSession.class);
    /** A producer taking longer than this to make is logged (INFO), as one that could not be made. */
    private static final Duration SLOW_CREATION = Duration.ofSeconds(2);
    /** Where producers are closed: off Pulsar's I/O threads ({@link #closeProducer}). */
    private static final Scheduler CLOSER = Schedulers.boundedElastic();
    /** The answer to a send of an entry a sealed ancestor stored already ({@link SealedLineage}): a duplicate's. */
    private static final MessageId STORED_BEFORE_SEAL = new MessageIdImpl(-1, -1, -1);
    private final PulsarStorage storage;
    private final String topic;
    private final long segmentId;
    private final String producerName;
    private final Ancestry ancestry;
    /** What the segment's sealed ancestors stored of this producer's entries: read before the producer is made. */
    private volatile SealedLineage lineage = SealedLineage.NONE;
    /** The topics of the ancestors read for {@link #lineage}. */
    private volatile List<String> ancestorTopics = List.of();
    private final AtomicInteger storedBeforeSeal = new AtomicInteger();
    /**
     * The producer once created. No lock of ours guards it or the sends: Pulsar completes sends on its I/O
     * threads while holding its producer's monitor, and what runs then (a failure breaking the session, the
     * next send) must not wait for a lock that a thread calling into that producer holds (it deadlocked).
     */
    private final AtomicReference<@Nullable Producer<byte[]>> producer =
            new AtomicReference<>();
    private final AtomicBoolean creating = new AtomicBoolean();
    private volatile @Nullable Throwable creationFailure;
    /** Set once the producer's creation ended, made or failed. */
    private volatile boolean made;
    /**
     * Completes once this session holds no producer and none is being made for it: what the next session of its
     * name on the topic waits for ({@link PulsarStorage#closed}).
     */
    private final CompletableFuture<Void> released = new CompletableFuture<>();
    /** Sends not yet handed to Pulsar, in call order; drained by one thread at a time ({@link #wip}). */
    private final Queue<Pending> outgoing = new ConcurrentLinkedQueue<>();
    private final AtomicInteger wip = new AtomicInteger();
    /** Positions of this session the broker or client refused: not stored. */
    private final Set<SourcePosition> refused = new ConcurrentSkipListSet<>();
    /** The highest position of this session the broker stored. */
    private final AtomicReference<@Nullable SourcePosition> persisted =
            new AtomicReference<>();
    private volatile boolean broken;
    private volatile boolean disposed;

    /**
     * Where a session's segment sits: in the scalable {@code topic}, among the destination's {@code segments} (by id,
     * for its sealed ancestors), written with entries of the source segment whose range is {@code source}.
     */
    record Ancestry(String topic, Segment segment, HashRange source, LongFunction<Optional<Segment>> segments) {
    }

    PulsarProducerSession(PulsarStorage storage, String topic, Ancestry ancestry, String producerName) {
        this.storage = storage;
        this.topic = topic;
        this.segmentId = ancestry.segment().id();
        this.ancestry = ancestry;
        this.producerName = producerName;
    }

    @Override
    public Mono<Receipt> send(Entry entry, SourcePosition position) {
        return Mono.defer(() -> {
            if (broken || disposed) {
                return Mono.error(sessionBroken());
            }
            MessageImpl<byte[]> message;
            try {
                message = message(entry, position);
            } catch (IllegalArgumentException e) {
                breakSession(); // a failure like any other: nothing after it in this session may go
                return Mono.error(new RemoteException(Kind.REJECTED, segmentId, String.valueOf(e.getMessage())));
            }
            CompletableFuture<MessageId> sent = issue(entry, message, position);
            // the future's failure as a value: a send cancelled by the replicator (its session given up) and failed
            // by Pulsar later, as closing the producer fails what is pending, is then dropped quietly, not logged
            // by Reactor as an error nobody handled
            return Mono.fromFuture(sent.handle(Sent::new), true)
                    .handle((Sent s, SynchronousSink<MessageId> sink) -> s.to(sink))
                    .map(id -> receipt(id, position))
                    .onErrorMap(e -> !(e instanceof RemoteException), e -> failed(e, position))
                    .doOnError(e -> breakSession())
                    .doOnCancel(this::breakSession);
        });
    }

    /** The entry as one message: its metadata (stamped with the wire position) and its payload, untouched. */
    private MessageImpl<byte[]> message(Entry entry, SourcePosition position) {
        String source = entry.metadata().getReplicatedFrom();
        if (source.isEmpty()) {
            throw new IllegalArgumentException("an entry sent to " + topic + " must be stamped with its source first");
        }
        // the source position as the broker's dedup reads it, set in Pulsar's own metadata: the entry is not
        // stamped again (the Pulsar client encodes the metadata and computes the checksum itself)
        return MessageImpl.create(PulsarMetadata.of(entry, WirePositions.encode(position)), entry.payload(),
                Schema.BYTES, topic);
    }

    /**
     * Queues the send and drains the queue in order: sends wait while the producer is being created, then go
     * in the order they were queued. No lock of ours is held while Pulsar is called: the drain is one thread
     * at a time by a counter, and a send queued from inside a completion (Pulsar's I/O thread, holding its
     * producer's monitor) is picked up by the drain already running.
     */
    private CompletableFuture<MessageId> issue(Entry entry, MessageImpl<byte[]> message, SourcePosition position) {
        Pending pending = new Pending(entry, message, position, new CompletableFuture<>());
        outgoing.add(pending);
        drain();
        return pending.result;
    }

    private void drain() {
        if (wip.getAndIncrement() != 0) {
            return;
        }
        int missed = 1;
        do {
            Producer<byte[]> ready = producer.get();
            if (broken || disposed || creationFailure != null) {
                Throwable why = creationFailure != null ? creationFailure
                        : sessionBroken();
                for (Pending p; (p = outgoing.poll()) != null; ) {
                    p.result.completeExceptionally(why);
                }
            } else if (ready == null) {
                if (!outgoing.isEmpty() && creating.compareAndSet(false, true)) {
                    create();
                }
            } else {
                for (Pending p; (p = outgoing.poll()) != null; ) {
                    if (broken) { // one before it failed as it was issued: this one must not go
                        p.result.completeExceptionally(sessionBroken());
                        continue;
                    }
                    CompletableFuture<MessageId> result = p.result;
                    Entry entry = p.entry;
                    if (lineage.covers(p.position, () -> span(entry, ancestry.source())) && !refusedBefore(p.position)) {
                        skipped(p.position);
                        result.complete(STORED_BEFORE_SEAL); // in a sealed ancestor: not sent again
                        continue;
                    }
                    sendOn(ready, p.message).whenComplete((id, e) -> {
                        if (e != null) {
                            result.completeExceptionally(e);
                        } else {
                            result.complete(id);
                        }
                    });
                }
            }
            missed = wip.addAndGet(-missed);
        } while (missed != 0);
    }

    /**
     * Where an entry's messages route: the point of a single message's key (the fit places it by that key, whole or
     * as the one message of a part), else anywhere in the source segment's range.
     */
    static HashRange span(Entry entry, HashRange source) {
        try {
            EntryFacts facts = entry.facts();
            return facts.outerKey().map(k -> HashRange.of(k.segmentHash(), k.segmentHash())).orElse(source);
        } catch (RuntimeException e) { // metadata the fit could not read either: the wider span only skips less
            return source;
        }
    }

    /**
     * Whether an ancestor refused {@code position} in this process and stored a later entry of this producer after it
     * (Pulsar #26113): its highest position then says nothing of this entry, which goes to this segment.
     */
    private boolean refusedBefore(SourcePosition position) {
        for (String t : ancestorTopics) {
            if (storage.isShadowed(t, producerName, position)) {
                return true;
            }
        }
        return false;
    }

    /** Logs the first entry of the session found in a sealed ancestor, and counts them. */
    private void skipped(SourcePosition position) {
        if (storedBeforeSeal.getAndIncrement() == 0) {
            LOG.info("{} as {}: {} is stored in a sealed segment before it ({} read); it and any other found there are"
                    + " not sent again", topic, producerName, position, lineage.size());
        }
    }

    private void create() {
        ProducerBuilder<byte[]> builder = storage.client().newProducer(Schema.BYTES)
                .topic(topic)
                .producerName(producerName)
                .enableBatching(false)
                .compressionType(CompressionType.NONE)
                .sendTimeout(0, TimeUnit.SECONDS) // the replicator times its sends and breaks the session
                .blockIfQueueFull(false);
        ((ProducerBuilderImpl<byte[]>) builder).getConf().setReplProducer(true);
        ((ProducerBuilderImpl<byte[]>) builder).getConf().setNonPartitionedTopicExpected(true);
        // bounded by the client's operation timeout; no deadline of ours, which would leave a producer created
        // after it connected, holding the producer name
        // first what the sealed ancestors stored of this name: not sent again
        long start = System.nanoTime();
        long[] resolved = {0};
        Pending first = outgoing.peek();
        storage.closed(topic, producerName)
                .thenCompose(v -> first == null ? CompletableFuture.completedFuture(SealedLineage.NONE)
                        : storage.sealedTails().lineage(ancestry.topic(), ancestry.segment(), ancestry.segments(),
                                producerName, first.message.getReplicatedFrom(), ancestry.source()).toFuture())
                .thenCompose(read -> {
                    ancestorTopics = read.readIds().stream().map(ancestry.segments()::apply).flatMap(Optional::stream)
                            .map(s -> storage.segmentTopic(ancestry.topic(), s)).toList();
                    lineage = read;
                    resolved[0] = System.nanoTime();
                    return builder.createAsync();
                })
                .whenComplete((p, error) -> {
                    long tookMs = (System.nanoTime() - start) / 1_000_000;
                    if (error != null || tookMs > SLOW_CREATION.toMillis()) {
                        LOG.info("{} as {}: {} after {} ms ({} ms before asking the broker){}", topic, producerName,
                                error == null ? "producer made" : "no producer", tookMs,
                                resolved[0] == 0 ? tookMs : (resolved[0] - start) / 1_000_000,
                                error == null ? "" : ": " + PulsarStorage.cause(error));
                    }
                    created(p, error);
                });
    }

    private void created(@Nullable Producer<byte[]> created, @Nullable Throwable error) {
        if (created == null) {
            creationFailure = error != null ? error
                    : new RemoteException(Kind.UNAVAILABLE, segmentId, "no producer for " + topic);
            made = true;
            released.complete(null); // nothing to close
        } else {
            producer.set(created);
            made = true;
            if (broken || disposed) {
                closeProducer(); // broken while it was being made: whoever broke it found no producer to close
            }
        }
        drain();
    }

    /**
     * Issues one send; called by the drain, in queue order. A send the client refuses as it is issued (its
     * queue is full, the entry is too large) breaks the session before the next one goes: otherwise the next
     * ones could be stored, move the broker's dedup watermark past this one, and make its resend look like a
     * duplicate (Pulsar issue #26113), which would lose it.
     */
    private CompletableFuture<MessageId> sendOn(Producer<byte[]> producer, MessageImpl<byte[]> message) {
        ClientCnx cnx = producer instanceof ProducerImpl<?> impl ? impl.getClientCnx() : null;
        if (cnx != null && !cnx.isBrokerSupportsReplDedupByLidAndEid()) {
            // the client would fall back to deduplicating on the carried producer name and sequence id, which
            // the parts of one re-batched entry share: all but the first would be answered as duplicates
            broken = true;
            return CompletableFuture.failedFuture(new RemoteException(Kind.UNSUPPORTED, segmentId, "the broker of "
                    + topic + " does not deduplicate replicated entries by source position (Pulsar 3.0.11, 3.3.6,"
                    + " 4.0.4 or newer does)"));
        }
        CompletableFuture<MessageId> sent = storage.sender().send(producer, message);
        if (sent.isCompletedExceptionally()) {
            broken = true;
        }
        return sent;
    }

    private static boolean isDuplicate(MessageId id) {
        return id instanceof MessageIdImpl m && m.getLedgerId() == -1 && m.getEntryId() == -1;
    }

    /**
     * The receipt of a send, with the guard against Pulsar #26113: a position the broker refused in a session
     * that then stored a later position is, from then on, below the broker's dedup watermark, so its resend
     * is answered as a duplicate though it was never stored. Such an answer is an error, never a receipt: the
     * replicator does not acknowledge the entry, and its status shows why.
     */
    private Receipt receipt(MessageId id, SourcePosition position) {
        if (isDuplicate(id)) {
            if (storage.isShadowed(topic, producerName, position)) {
                throw new RemoteException(Kind.REJECTED, segmentId, topic + " answers " + position + " of "
                        + producerName + " as a duplicate, but the broker refused it before and stored later entries"
                        + " after it (Pulsar #26113): it is not stored, and replication of this segment stops here");
            }
            return Receipt.DUPLICATE;
        }
        persisted.accumulateAndGet(position, (a, b) -> a == null || b.compareTo(a) > 0 ? b : a);
        for (SourcePosition p : refused) {
            if (p.compareTo(position) < 0) {
                shadow(p, position);
            }
        }
        return Receipt.PERSISTED;
    }

    private RemoteException sessionBroken() {
        return new RemoteException(Kind.SESSION_BROKEN, segmentId, "an earlier send to " + topic + " failed");
    }

    private void shadow(SourcePosition refusedPosition, SourcePosition storedAfter) {
        if (storage.shadow(topic, producerName, refusedPosition)) {
            LOG.error("{}: the broker refused {} of {} and stored {} after it; a resend of {} will be answered as a"
                    + " duplicate (Pulsar #26113) and is refused instead", topic, refusedPosition, producerName,
                    storedAfter, refusedPosition);
        }
    }

    /** A failed send: what it means to the replicator, and whether the broker refused the entry for good. */
    private RemoteException failed(Throwable error, SourcePosition position) {
        Throwable e = PulsarStorage.cause(error);
        if (broken && e instanceof PulsarClientException.AlreadyClosedException) {
            return sessionBroken(); // closed because an earlier send failed
        }
        if (e instanceof PulsarClientException.NotAllowedException
                || e instanceof PulsarClientException.ChecksumException
                || e instanceof PulsarClientException.InvalidMessageException
                || e instanceof PulsarClientException.ProducerQueueIsFullError
                || e instanceof PulsarClientException.MemoryBufferIsFullError
                || e instanceof PulsarClientException.CryptoException) {
            refused.add(position); // not stored: a later position stored in this session shadows it
            SourcePosition later = persisted.get();
            if (later != null && later.compareTo(position) > 0) {
                shadow(position, later);
            }
        }
        return classify(e);
    }

    /** What a Pulsar failure means to the replicator. */
    RemoteException classify(Throwable error) {
        Throwable e = PulsarStorage.cause(error);
        String what = topic + " as " + producerName + ": " + e;
        if (e instanceof PulsarClientException.TopicTerminatedException) {
            return new RemoteException(Kind.SEALED, segmentId, what);
        }
        if (e instanceof PulsarClientException.AuthenticationException
                || e instanceof PulsarClientException.AuthorizationException
                || e instanceof PulsarClientException.NotAllowedException
                || e instanceof PulsarClientException.InvalidMessageException
                || e instanceof PulsarClientException.IncompatibleSchemaException) {
            return new RemoteException(Kind.REJECTED, segmentId, what);
        }
        // unreachable, timed out, busy (an older session's producer not yet gone), queue full, closed, or a
        // dedup verdict of "pushed, not yet persisted": all pass with time
        return new RemoteException(Kind.UNAVAILABLE, segmentId, what);
    }

    private void breakSession() {
        broken = true;
        closeProducer();
    }

    /**
     * Closes the producer from another thread: a failure breaks the session inside Pulsar's completion of a
     * send, on its I/O thread, while Pulsar walks its pending sends to fail them; closing there fails and frees
     * the same sends a second time under it ("Object has been recycled already", a send without its op).
     */
    private void closeProducer() {
        Producer<byte[]> p = producer.getAndSet(null);
        if (p != null) {
            storage.closing(topic, producerName, released);
            try {
                CLOSER.schedule(() -> p.closeAsync().whenComplete((v, e) -> released.complete(null)));
            } catch (RuntimeException e) { // the scheduler is shut down: the process is stopping
                released.complete(null);
                p.closeAsync();
            }
        } else if (creating.get() && !made) {
            storage.closing(topic, producerName, released); // still being made: created() closes it, then releases
        }
    }

    @Override
    public void dispose() {
        disposed = true;
        closeProducer();
    }

    @Override
    public boolean isDisposed() {
        return disposed;
    }

    private record Pending(Entry entry, MessageImpl<byte[]> message, SourcePosition position,
            CompletableFuture<MessageId> result) {
    }

    /** A send's end: its message id, or why it failed. */
    private record Sent(@Nullable MessageId id, @Nullable Throwable failure) {
        void to(SynchronousSink<MessageId> sink) {
            if (failure != null) {
                sink.error(failure instanceof CompletionException && failure.getCause() != null
                        ? failure.getCause() : failure);
            } else if (id != null) {
                sink.next(id);
            }
        }
    }
}
