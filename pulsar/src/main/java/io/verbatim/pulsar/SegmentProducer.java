package io.verbatim.pulsar;

import io.verbatim.model.Buckets;
import io.verbatim.model.Compression;
import io.verbatim.model.entry.Message;
import io.verbatim.model.entry.SourcePosition;
import io.verbatim.pulsar.SegmentSends.Sent;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.pulsar.client.api.CompressionType;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClientException;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.api.TypedMessageBuilder;
import org.apache.pulsar.client.impl.VerbatimBucketBatcher;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * An application's producer on one segment's topic with one codec, batching per bucket and stamping each entry
 * ({@link VerbatimBucketBatcher}), on the plain Pulsar client.
 *
 * <ul>
 * <li>The producer is made once, when this is made; no caller can cancel that (a produce call its HTTP client
 *     abandons only stops waiting), and a making that failed is seen by {@link #broken} so the next call makes a
 *     new one.</li>
 * <li>Sends go to Pulsar in the order they were queued, each with a sequence id of ours, counted on from the
 *     broker's last for the producer's name: so what a sealed topic stored of them can be told by sequence id
 *     ({@link SealedTail}). One queue drained by one thread at a time, no lock of ours held while Pulsar is called
 *     (Pulsar completes sends on its I/O threads holding the producer's monitor); at most {@link #MAX_IN_FLIGHT}
 *     at the broker, the rest wait here.</li>
 * </ul>
 */
final class SegmentProducer {
    /** Sends at the broker at once per producer; a call's messages all go to the batcher at once: full batches. */
    static final int MAX_IN_FLIGHT = 10_000;
    /** Where producers are closed: off Pulsar's I/O threads, which may be failing their sends. */
    private static final Scheduler CLOSER = Schedulers.boundedElastic();

    private final PulsarStorage storage;
    private final String topic;
    private final String name;
    /** The producer and the topic's last entry before it sent anything: made once, never cancelled. */
    private final CompletableFuture<Made> made;
    private final Queue<Pending> outgoing = new ConcurrentLinkedQueue<>();
    private final AtomicInteger wip = new AtomicInteger();
    private final AtomicInteger inFlight = new AtomicInteger();
    /** The highest entry that holds a message of this producer's, as the broker acknowledged it. */
    private final AtomicReference<@Nullable SourcePosition> highestStored = new AtomicReference<>();
    /** The next sequence id; read and moved by the drain only. */
    private long nextSequenceId = -1;
    private volatile @Nullable Throwable closed;
    /** A send failed because the client closed the producer (it does after some failures): make a new one. */
    private volatile boolean closedByClient;

    private record Made(Producer<byte[]> producer, @Nullable SourcePosition floor) {
    }

    SegmentProducer(PulsarStorage storage, String topic, String name, Buckets buckets, Compression codec) {
        this.storage = storage;
        this.topic = topic;
        this.name = name;
        this.made = storage.client().newProducer(Schema.BYTES)
                .topic(topic)
                .producerName(name)
                .enableBatching(true)
                .batcherBuilder(new VerbatimBucketBatcher(buckets))
                .batchingMaxPublishDelay(2, TimeUnit.MILLISECONDS)
                .batchingMaxMessages(1000)
                .compressionType(pulsarCodec(codec))
                .sendTimeout((int) storage.settings().operationTimeout().toMillis(), TimeUnit.MILLISECONDS)
                .blockIfQueueFull(false)
                .createAsync()
                // everything this producer sends lands after the topic's last entry now: where a read of what a
                // sealed topic stored of it may start (the whole topic if the broker does not say)
                .thenCompose(p -> storage.admin().topics().getLastMessageIdAsync(topic)
                        .handle((last, e) -> new Made(p, e == null ? SegmentSends.position(last).orElse(null) : null)));
        made.whenComplete((m, e) -> drain());
    }

    String topic() {
        return topic;
    }

    String name() {
        return name;
    }

    /**
     * Sends {@code messages} in their order: each one's fate once every one is known. Cancelling the returned Mono
     * stops only the wait.
     */
    Mono<List<Sent>> send(List<Message> messages) {
        return Mono.defer(() -> {
            List<Pending> call = new ArrayList<>(messages.size());
            for (Message m : messages) {
                call.add(new Pending(m));
            }
            outgoing.addAll(call);
            drain();
            CompletableFuture<?>[] ends = call.stream().map(p -> p.end).toArray(CompletableFuture[]::new);
            return Mono.fromFuture(CompletableFuture.allOf(ends), true)
                    .then(Mono.fromCallable(() -> call.stream().map(p -> p.end.join()).toList()));
        });
    }

    /**
     * Where a read of what this producer's topic stored of its refused sends starts, exclusive: its highest
     * acknowledged entry, or else the topic's last entry when it was made; empty: from the topic's first entry.
     * Read once its sends are refused: the broker acknowledged all it will by then, in order.
     */
    Optional<SourcePosition> storedAfter() {
        SourcePosition acknowledged = highestStored.get();
        if (acknowledged != null) {
            return Optional.of(acknowledged);
        }
        Made m = made.getNow(null);
        return m == null ? Optional.empty() : Optional.ofNullable(m.floor());
    }

    /** Whether a new producer should take this one's place: its making failed, or it was closed. */
    boolean broken() {
        return made.isCompletedExceptionally() || closed != null || closedByClient;
    }

    /** Closes the producer (once made); sends still queued fail with {@code why}, never issued. */
    void close(Throwable why) {
        closed = why;
        made.thenAccept(m -> CLOSER.schedule(() -> m.producer().closeAsync()));
        drain();
    }

    private void drain() {
        if (wip.getAndIncrement() != 0) {
            return;
        }
        int missed = 1;
        do {
            if (made.isDone()) {
                Throwable refused = closed;
                if (refused == null && made.isCompletedExceptionally()) {
                    refused = made.handle((m, e) -> PulsarStorage.cause(e)).join();
                }
                if (refused != null) {
                    for (Pending p; (p = outgoing.poll()) != null; ) {
                        p.end.complete(new Sent(p.message, -1, null, refused));
                    }
                } else {
                    Producer<byte[]> producer = made.join().producer();
                    if (nextSequenceId < 0) {
                        nextSequenceId = producer.getLastSequenceId() + 1;
                    }
                    for (Pending p; inFlight.get() < MAX_IN_FLIGHT && (p = outgoing.poll()) != null; ) {
                        issue(producer, p, nextSequenceId++);
                    }
                }
            }
            missed = wip.addAndGet(-missed);
        } while (missed != 0);
    }

    private void issue(Producer<byte[]> producer, Pending p, long sequenceId) {
        inFlight.incrementAndGet();
        CompletableFuture<MessageId> sent;
        try {
            TypedMessageBuilder<byte[]> message = producer.newMessage().value(p.message.payloadBytes())
                    .sequenceId(sequenceId);
            p.message.key().ifPresent(message::key);
            p.message.orderingKey().ifPresent(message::orderingKey);
            sent = storage.messageSender().send(message);
        } catch (RuntimeException e) {
            sent = CompletableFuture.failedFuture(e);
        }
        sent.whenComplete((id, e) -> {
            inFlight.decrementAndGet();
            Throwable failure = e == null ? null : PulsarStorage.cause(e);
            if (failure == null) {
                SegmentSends.position(id).ifPresent(at -> highestStored.accumulateAndGet(at,
                        (a, b) -> a == null || b.compareTo(a) > 0 ? b : a));
            } else if (failure instanceof PulsarClientException.AlreadyClosedException) {
                closedByClient = true;
            }
            p.end.complete(new Sent(p.message, sequenceId, id, failure));
            drain();
        });
    }

    private static CompressionType pulsarCodec(Compression codec) {
        return switch (codec) {
            case NONE -> CompressionType.NONE;
            case LZ4 -> CompressionType.LZ4;
            case ZLIB -> CompressionType.ZLIB;
            case ZSTD -> CompressionType.ZSTD;
            case SNAPPY -> CompressionType.SNAPPY;
        };
    }

    /** A message queued: its send's end, which always completes normally. */
    private static final class Pending {
        final Message message;
        final CompletableFuture<Sent> end = new CompletableFuture<>();

        Pending(Message message) {
            this.message = message;
        }
    }
}
