package io.verbatim.pulsar;

import io.verbatim.pipeline.ReplicationCursor;
import io.verbatim.pipeline.SourceSegmentLog;
import io.verbatim.pipeline.StartAt;
import org.apache.pulsar.client.api.MessageId;
import reactor.core.publisher.Mono;

/**
 * A segment topic as a replicator reads it. Its cursors are durable subscriptions: created at
 * {@code startAt} if new (an existing one keeps its position), named by {@link SegmentTopics#subscription}.
 */
final class PulsarSegmentLog implements SourceSegmentLog {
    private final PulsarStorage storage;
    private final long segmentId;
    private final String topic;

    PulsarSegmentLog(PulsarStorage storage, long segmentId, String topic) {
        this.storage = storage;
        this.segmentId = segmentId;
        this.topic = topic;
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
        MessageId at = startAt == StartAt.EARLIEST ? MessageId.earliest : MessageId.latest;
        return Mono.fromFuture(() -> storage.admin().topics().createSubscriptionAsync(topic, subscription, at))
                .onErrorResume(PulsarStorage::isConflict, e -> Mono.empty()) // it exists: it keeps its position
                .onErrorMap(e -> !(e instanceof PulsarStorageException),
                        e -> new PulsarStorageException("cannot open cursor " + subscription + " on " + topic, e))
                .thenReturn(new PulsarCursor(storage, topic, subscription));
    }
}
