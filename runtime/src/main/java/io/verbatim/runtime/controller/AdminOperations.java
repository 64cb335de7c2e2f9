package io.verbatim.runtime.controller;

import io.verbatim.exchange.MarksBySource;
import io.verbatim.exchange.Rebucket;
import io.verbatim.model.HashRange;
import io.verbatim.model.Layout;
import io.verbatim.model.Outcome;
import io.verbatim.model.ReplicatedMerge;
import java.util.List;
import reactor.core.publisher.Mono;

/**
 * What an operator may do to a cluster's topics (what Pulsar's {@code /admin/v2/scalable} split, rebucket
 * and merge calls do), and what those calls read: the seam between the admin endpoint and the cluster.
 */
public interface AdminOperations {
    String cluster();

    List<String> topics();

    Layout layout(String topic);

    /** A midpoint split: the cluster's own change, pushed to every peer at once. */
    Mono<Outcome> split(String topic, long segmentId);

    /**
     * A manual rebucket, decided by the controller on the stored layout: a higher count is a rollover, the cluster's
     * own change, pushed to every peer at once ({@link Rebucket.Now}); a lower count of an active segment is a cold
     * mark on its range, lowered once every cluster issued it or holds no more there ({@link Rebucket.MarkedCold}).
     */
    Mono<Rebucket> rebucket(String topic, long segmentId, int bucketCount);

    /**
     * A rebucket rollover to a higher count only: a lower count is refused ({@code LOWERS_BUCKETS}) with nothing
     * marked, where {@link #rebucket} would mark it cold.
     */
    Mono<Outcome> rollover(String topic, long segmentId, int bucketCount);

    /** A manual merge of a replicated topic is a cold mark: merged once every peer agrees (PIP-495). */
    Mono<Void> markCold(String topic, int boundary);

    /**
     * A manual merge of segments {@code first} and {@code second}: when they may merge ({@link ReplicatedMerge}), a
     * cold mark on their boundary; else refused, with nothing marked.
     */
    default Mono<ReplicatedMerge> merge(String topic, long first, long second) {
        return Mono.defer(() -> {
            ReplicatedMerge merge = ReplicatedMerge.of(layout(topic), first, second);
            return merge instanceof ReplicatedMerge.Eligible eligible
                    ? markCold(topic, eligible.boundary()).thenReturn(merge) : Mono.just(merge);
        });
    }

    /** Withdraws an operator's cold mark on {@code boundary}; true if there was one. */
    boolean unmarkCold(String topic, int boundary);

    /** Withdraws an operator's lowering of {@code range}; true if there was one. */
    boolean unmarkBuckets(String topic, HashRange range);

    /** The topic's cold marks by source (manual, policy, caps, bucket lowerings). */
    MarksBySource coldMarks(String topic);
}
