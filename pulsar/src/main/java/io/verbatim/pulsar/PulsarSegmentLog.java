package io.verbatim.pulsar;

import io.verbatim.pipeline.ReplicationCursor;
import io.verbatim.pipeline.SourceSegmentLog;
import io.verbatim.pipeline.StartAt;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.api.PulsarClientException;
import org.apache.pulsar.client.api.SubscriptionInitialPosition;
import org.apache.pulsar.client.impl.VerbatimRawConsumer;
import reactor.core.publisher.Mono;

/**
 * A segment topic as a replicator reads it. Its cursors are durable subscriptions: created at
 * {@code startAt} if new (an existing one keeps its position), named by {@link SegmentTopics#subscription}.
 */
final class PulsarSegmentLog implements SourceSegmentLog {
    private final PulsarStorage storage;
    private final long segmentId;
    private final String topic;
    /** Whether the layout it was made from had the segment sealed. */
    private final boolean sealed;

    PulsarSegmentLog(PulsarStorage storage, long segmentId, String topic, boolean sealed) {
        this.storage = storage;
        this.segmentId = segmentId;
        this.topic = topic;
        this.sealed = sealed;
    }

    @Override
    public long segmentId() {
        return segmentId;
    }

    String topic() {
        return topic;
    }

    @Override
    public Mono<ReplicationCursor> cursor(String name, StartAt startAt) {
        String subscription = SegmentTopics.subscription(name);
        Mono<Void> create = startAt == StartAt.EARLIEST ? createAtEarliest(subscription)
                : Mono.fromFuture(() -> storage.admin().topics()
                        .createSubscriptionAsync(topic, subscription, MessageId.latest))
                        .onErrorResume(PulsarStorage::isConflict, e -> Mono.empty()); // it keeps its position
        return create
                .onErrorMap(e -> !(e instanceof PulsarStorageException),
                        e -> new PulsarStorageException("cannot open cursor " + subscription + " on " + topic,
                                PulsarStorage.cause(e)))
                .thenReturn(new PulsarCursor(storage, topic, subscription, sealed));
    }

    /**
     * Creates the subscription at the first entry, if it does not exist, by subscribing a consumer that asks for
     * nothing and closing it. Not through the admin API: that creates a subscription at the last entry and then
     * moves it back, and when the move fails (a broker just restarted cannot persist the position yet) the
     * subscription stays at the last entry; asked again, the admin API answers "exists", and a replicator would
     * start after everything written so far. A consumer's subscription is created at its initial position in one
     * step, or not at all. One that exists keeps its position; one held by a reader exists.
     *
     * <p>Subscribing and closing are one future that a cancel does not stop (bounded by the client's operation
     * timeout): a consumer left subscribed would hold the exclusive subscription for good, and every read of it
     * would be refused as busy.
     */
    private Mono<Void> createAtEarliest(String subscription) {
        return Mono.fromFuture(() -> VerbatimRawConsumer.subscribe(storage.client(), topic, subscription,
                        SubscriptionInitialPosition.Earliest, 0, NOTHING).thenCompose(c -> c.closeAsync()), true)
                .onErrorResume(e -> PulsarStorage.cause(e) instanceof PulsarClientException.ConsumerBusyException,
                        e -> Mono.empty());
    }

    /** A receiver for a consumer that is given no permits: nothing comes to it. */
    private static final VerbatimRawConsumer.Receiver NOTHING = new VerbatimRawConsumer.Receiver() {
        @Override
        public void entry(VerbatimRawConsumer from, long ledgerId, long entryId, byte[] bytes, int messages,
                Object connection) {
        }

        @Override
        public void endOfTopic() {
        }

        @Override
        public void reconnected() {
        }
    };
}
