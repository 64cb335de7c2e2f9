package io.verbatim.runtime.controller;

import io.verbatim.exchange.Controller;
import io.verbatim.exchange.MarksBySource;
import io.verbatim.exchange.Rebucket;
import io.verbatim.model.HashRange;
import io.verbatim.model.Layout;
import io.verbatim.model.Outcome;
import java.util.List;
import java.util.function.Function;
import java.util.function.Supplier;
import reactor.core.publisher.Mono;

/**
 * The admin operations through a cluster's controller (the controller leader's, where the replicas run as
 * processes of their own): a manual split or rebucket also starts the local policy's cooldown.
 */
public final class ControllerOperations implements AdminOperations {
    private final String cluster;
    private final Supplier<List<String>> topics;
    private final Function<String, Layout> layouts;
    private final Controller controller;
    private final PolicyLoop policy;

    public ControllerOperations(String cluster, Supplier<List<String>> topics, Function<String, Layout> layouts,
            Controller controller, PolicyLoop policy) {
        this.cluster = cluster;
        this.topics = topics;
        this.layouts = layouts;
        this.controller = controller;
        this.policy = policy;
    }

    @Override
    public String cluster() {
        return cluster;
    }

    @Override
    public List<String> topics() {
        return topics.get();
    }

    @Override
    public Layout layout(String topic) {
        return layouts.apply(topic);
    }

    @Override
    public Mono<Outcome> split(String topic, long segmentId) {
        return controller.split(topic, segmentId).doOnNext(o -> policy.manual(topic, o, true));
    }

    @Override
    public Mono<Rebucket> rebucket(String topic, long segmentId, int bucketCount) {
        return controller.rebucketOrMarkCold(topic, segmentId, bucketCount).doOnNext(r -> {
            if (r instanceof Rebucket.Now now) {
                policy.manual(topic, now.outcome(), false);
            }
        });
    }

    @Override
    public Mono<Outcome> rollover(String topic, long segmentId, int bucketCount) {
        return controller.rebucket(topic, segmentId, bucketCount).doOnNext(o -> policy.manual(topic, o, false));
    }

    @Override
    public Mono<Void> markCold(String topic, int boundary) {
        return controller.markCold(topic, boundary);
    }

    @Override
    public boolean unmarkCold(String topic, int boundary) {
        return controller.unmarkCold(topic, boundary);
    }

    @Override
    public boolean unmarkBuckets(String topic, HashRange range) {
        return controller.unmarkBucketsCold(topic, range);
    }

    @Override
    public MarksBySource coldMarks(String topic) {
        return controller.exchangedMarksDescribed(topic);
    }
}
