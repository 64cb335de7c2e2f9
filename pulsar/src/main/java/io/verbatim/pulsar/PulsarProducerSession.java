package io.verbatim.pulsar;

import io.verbatim.model.entry.Entry;
import io.verbatim.model.entry.ReplicationStamp;
import io.verbatim.model.entry.SourcePosition;
import io.verbatim.pipeline.ProducerSession;
import io.verbatim.pipeline.RemoteException;
import io.verbatim.pipeline.RemoteException.Kind;
import java.util.ArrayDeque;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import org.apache.pulsar.client.api.CompressionType;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.ProducerBuilder;
import org.apache.pulsar.client.api.PulsarClientException;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.impl.MessageIdImpl;
import org.apache.pulsar.client.impl.MessageImpl;
import org.apache.pulsar.client.impl.ProducerBuilderImpl;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

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
    private final PulsarStorage storage;
    private final String topic;
    private final long segmentId;
    private final String producerName;
    /** Guards everything below. */
    private final Object lock = new Object();
    private @Nullable Producer<byte[]> producer;
    private boolean creating;
    private final Queue<Pending> waiting = new ArrayDeque<>();
    private volatile boolean broken;
    private volatile boolean disposed;

    PulsarProducerSession(PulsarStorage storage, String topic, long segmentId, String producerName) {
        this.storage = storage;
        this.topic = topic;
        this.segmentId = segmentId;
        this.producerName = producerName;
    }

    @Override
    public Mono<Receipt> send(Entry entry, SourcePosition position) {
        return Mono.defer(() -> {
            if (broken || disposed) {
                return Mono.error(new RemoteException(Kind.SESSION_BROKEN, segmentId, "an earlier send to " + topic
                        + " failed"));
            }
            MessageImpl<byte[]> message;
            try {
                message = message(entry, position);
            } catch (IllegalArgumentException e) {
                return Mono.error(new RemoteException(Kind.REJECTED, segmentId, String.valueOf(e.getMessage())));
            }
            CompletableFuture<MessageId> sent = issue(message);
            return Mono.fromFuture(sent, true)
                    .map(id -> isDuplicate(id) ? Receipt.DUPLICATE : Receipt.PERSISTED)
                    .onErrorMap(e -> !(e instanceof RemoteException), this::classify)
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
        Entry wire = entry.restamp(new ReplicationStamp(source, WirePositions.encode(position)));
        return MessageImpl.create(PulsarMetadata.of(wire), wire.payload(), Schema.BYTES, topic);
    }

    /** Sends now if the producer is there, else after it is, in call order either way. */
    private CompletableFuture<MessageId> issue(MessageImpl<byte[]> message) {
        Pending pending = new Pending(message, new CompletableFuture<>());
        boolean create = false;
        synchronized (lock) {
            if (producer != null && waiting.isEmpty()) {
                return sendOn(producer, message);
            }
            if (broken) {
                return CompletableFuture.failedFuture(new RemoteException(Kind.SESSION_BROKEN, segmentId,
                        "an earlier send to " + topic + " failed"));
            }
            waiting.add(pending);
            if (!creating && producer == null) {
                creating = true;
                create = true;
            }
        }
        if (create) {
            create();
        }
        return pending.result;
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
        builder.createAsync()
                .orTimeout(storage.settings().operationTimeout().toMillis(), TimeUnit.MILLISECONDS)
                .whenComplete((p, error) -> created(p, error));
    }

    private void created(@Nullable Producer<byte[]> created, @Nullable Throwable error) {
        Queue<Pending> failed = new ArrayDeque<>();
        Producer<byte[]> unwanted = null;
        synchronized (lock) {
            creating = false;
            if (created != null && !disposed && !broken) {
                producer = created;
                // issued under the lock, so a send arriving now queues behind them
                for (Pending p; (p = waiting.poll()) != null; ) {
                    CompletableFuture<MessageId> result = p.result;
                    if (broken) { // one of those before it failed as it was issued: this one must not go
                        result.completeExceptionally(new RemoteException(Kind.SESSION_BROKEN, segmentId,
                                "an earlier send to " + topic + " failed"));
                        continue;
                    }
                    sendOn(created, p.message).whenComplete((id, e) -> {
                        if (e != null) {
                            result.completeExceptionally(e);
                        } else {
                            result.complete(id);
                        }
                    });
                }
            } else {
                failed.addAll(waiting);
                waiting.clear();
                unwanted = created;
            }
        }
        if (unwanted != null) {
            unwanted.closeAsync();
        }
        Throwable why = error != null ? error
                : new RemoteException(Kind.SESSION_BROKEN, segmentId, "the session to " + topic + " ended");
        failed.forEach(p -> p.result.completeExceptionally(why));
    }

    /**
     * Issues one send; called under the lock, in call order. A send the client refuses as it is issued (its
     * queue is full, the entry is too large) breaks the session before the next one goes: otherwise the next
     * ones could be stored, move the broker's dedup watermark past this one, and make its resend look like a
     * duplicate (Pulsar issue #26113), which would lose it.
     */
    private CompletableFuture<MessageId> sendOn(Producer<byte[]> producer, MessageImpl<byte[]> message) {
        CompletableFuture<MessageId> sent = storage.sender().send(producer, message);
        if (sent.isCompletedExceptionally()) {
            broken = true;
        }
        return sent;
    }

    private static boolean isDuplicate(MessageId id) {
        return id instanceof MessageIdImpl m && m.getLedgerId() == -1 && m.getEntryId() == -1;
    }

    /** What a Pulsar failure means to the replicator. */
    RemoteException classify(Throwable error) {
        Throwable e = error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
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

    private void closeProducer() {
        Producer<byte[]> p;
        synchronized (lock) {
            p = producer;
            producer = null;
        }
        if (p != null) {
            p.closeAsync();
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

    private record Pending(MessageImpl<byte[]> message, CompletableFuture<MessageId> result) {
    }
}
