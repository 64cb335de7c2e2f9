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
        return stats(storage, topic, segment).map(Stats::backlogs);
    }

    /**
     * What the broker says of a segment topic's subscriptions.
     *
     * @param backlogs each subscription's entries after its mark-delete position
     * @param consumers the consumers attached, over every subscription
     */
    public record Stats(Map<String, Long> backlogs, int consumers) {
    }

    /** The backlogs of {@link #backlogs} and the consumers attached; none of either when the topic does not exist. */
    public static Mono<Stats> stats(PulsarStorage storage, String topic, Segment segment) {
        String name = storage.segmentTopic(topic, segment);
        return Mono.fromFuture(() -> storage.admin().topics().getStatsAsync(name))
                .map(stats -> {
                    Map<String, Long> out = new LinkedHashMap<>();
                    int consumers = 0;
                    for (var e : stats.getSubscriptions().entrySet()) {
                        out.put(e.getKey(), e.getValue().getMsgBacklog());
                        consumers += e.getValue().getConsumers().size();
                    }
                    return new Stats(out, consumers);
                })
                .onErrorResume(e -> PulsarStorage.cause(e) instanceof PulsarAdminException.NotFoundException,
                        e -> Mono.just(new Stats(Map.of(), 0)))
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
