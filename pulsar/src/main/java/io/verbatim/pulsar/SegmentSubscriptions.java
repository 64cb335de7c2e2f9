package io.verbatim.pulsar;

import io.verbatim.model.Segment;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.pulsar.client.admin.PulsarAdminException;
import reactor.core.publisher.Mono;

/**
 * What the broker says about a segment topic's subscriptions, asked without blocking: each one's backlog,
 * and unsubscribing one.
 */
public final class SegmentSubscriptions {
    private SegmentSubscriptions() {
    }

    /**
     * Each subscription of {@code segment}'s topic with the entries after its mark-delete position (the
     * broker's {@code msgBacklog}, counted in entries); empty when the topic does not exist.
     */
    public static Mono<Map<String, Long>> backlogs(PulsarStorage storage, String topic, Segment segment) {
        String name = storage.segmentTopic(topic, segment);
        return Mono.fromFuture(() -> storage.admin().topics().getStatsAsync(name))
                .map(stats -> {
                    Map<String, Long> out = new LinkedHashMap<>();
                    stats.getSubscriptions().forEach((sub, s) -> out.put(sub, s.getMsgBacklog()));
                    return out;
                })
                .onErrorResume(e -> PulsarStorage.cause(e) instanceof PulsarAdminException.NotFoundException,
                        e -> Mono.just(Map.of()))
                .onErrorMap(e -> !(e instanceof PulsarStorageException),
                        e -> new PulsarStorageException("cannot read the subscriptions of " + name + " on "
                                + storage.settings().adminUrl(), PulsarStorage.cause(e)));
    }

    /**
     * Deletes subscription {@code cursorName} of {@code segment}'s topic, closing its consumers (Pulsar's forced
     * unsubscribe); nothing to do when the topic or the subscription does not exist.
     */
    public static Mono<Void> unsubscribe(PulsarStorage storage, String topic, Segment segment, String cursorName) {
        String name = storage.segmentTopic(topic, segment);
        String subscription = SegmentTopics.subscription(cursorName);
        return Mono.fromFuture(() -> storage.admin().topics().deleteSubscriptionAsync(name, subscription, true))
                .onErrorResume(e -> PulsarStorage.cause(e) instanceof PulsarAdminException.NotFoundException,
                        e -> Mono.empty())
                .onErrorMap(e -> !(e instanceof PulsarStorageException),
                        e -> new PulsarStorageException("cannot delete subscription " + subscription + " of " + name,
                                PulsarStorage.cause(e)));
    }
}
