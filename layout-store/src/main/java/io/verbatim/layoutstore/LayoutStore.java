package io.verbatim.layoutstore;

import io.verbatim.model.Layout;
import io.verbatim.model.Mutation;
import java.util.List;
import java.util.function.Function;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.util.retry.Retry;

/**
 * Where a cluster keeps its topics' layouts (its local metadata store). Writes are compare-and-set on
 * the layout epoch; readers watch the latest. The exchange commits through this interface, so an
 * in-memory store and the Raft-backed metadata log are interchangeable.
 */
public interface LayoutStore {

    /** The topic's layout, or empty when the topic does not exist here. */
    Mono<Layout> get(String topic);

    /** Creates the topic with {@code initial}; errors with {@link StaleEpochException} if it exists. */
    Mono<Layout> create(String topic, Layout initial);

    /**
     * Replaces the layout at {@code expectedEpoch} by {@code next}; errors with
     * {@link StaleEpochException} when the stored epoch is not {@code expectedEpoch}.
     */
    Mono<Layout> compareAndSet(String topic, long expectedEpoch, Layout next);

    /** The latest layout at subscription, then every newer one. */
    Flux<Layout> watch(String topic);

    /** The topics this store holds. */
    Flux<String> topics();

    /**
     * Read-modify-write, as Pulsar's {@code readModifyUpdate}: reads the latest layout, asks
     * {@code plan} for mutations, applies them and stores the result with compare-and-set, re-reading
     * and re-planning on a conflict (up to {@code 16} times). A plan that returns no mutation leaves the
     * store untouched.
     *
     * @param nowMs stamped on the segments the mutations create and seal
     */
    default Mono<Layout> update(String topic, Function<Layout, List<Mutation>> plan, long nowMs) {
        return Mono.defer(() -> get(topic).switchIfEmpty(Mono.error(() -> new IllegalArgumentException(
                "topic " + topic + " does not exist in this store"))).flatMap(current -> {
                    List<Mutation> steps = plan.apply(current);
                    if (steps.isEmpty()) {
                        return Mono.just(current);
                    }
                    Layout next = current.applyAll(steps, current.epoch(), nowMs).layoutOrThrow();
                    return compareAndSet(topic, current.epoch(), next);
                }))
                .retryWhen(Retry.max(16).filter(StaleEpochException.class::isInstance));
    }
}
