package io.verbatim.runtime.controller;

import io.verbatim.model.Layout;
import io.verbatim.store.LayoutStore;
import java.util.function.BiFunction;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The controller's view of the layout store: every layout it commits is handed to this node's storage
 * before the commit's answer returns, so what the node serves reads its own writes even when the brokers'
 * watch (from a listener's replica) is a moment behind. Adoption is monotone, so the watch's later copy of
 * the same layout changes nothing.
 */
public final class AdoptingLayoutStore implements LayoutStore {
    private final LayoutStore store;
    private final BiFunction<String, Layout, Mono<Void>> adopt;

    public AdoptingLayoutStore(LayoutStore store, BiFunction<String, Layout, Mono<Void>> adopt) {
        this.store = store;
        this.adopt = adopt;
    }

    @Override
    public Mono<Layout> get(String topic) {
        return store.get(topic);
    }

    @Override
    public Mono<Layout> create(String topic, Layout initial) {
        return store.create(topic, initial).flatMap(l -> adopt.apply(topic, l).thenReturn(l));
    }

    @Override
    public Mono<Layout> compareAndSet(String topic, long expectedEpoch, Layout next) {
        return store.compareAndSet(topic, expectedEpoch, next).flatMap(l -> adopt.apply(topic, l).thenReturn(l));
    }

    @Override
    public Flux<Layout> watch(String topic) {
        return store.watch(topic);
    }

    @Override
    public Flux<String> topics() {
        return store.topics();
    }
}
