package io.verbatim.runtime.controller;

import io.micrometer.core.instrument.MeterRegistry;
import io.verbatim.embedded.MemorySegments;
import io.verbatim.exchange.Controller;
import java.time.Duration;
import java.util.List;
import java.util.function.Function;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * Deletes, every {@code storage.gcInterval}, the sealed segments of each topic that every cursor,
 * replication and subscription, drained (PIP-495's GC gating; replication backlog older than the message
 * TTL does not pin), through the controller's layout so every broker drops them.
 */
public final class GarbageCollector {
    /** Sealed segments garbage collection deleted, per topic. */
    public static final String PRUNED = "verbatim.gc.pruned.segments";
    private static final Logger LOG = Loggers.getLogger(GarbageCollector.class);

    private final String cluster;
    private final Controller controller;
    private final Function<String, List<Long>> prunable;
    private final MeterRegistry registry;

    /**
     * @param prunable per topic, its sealed segments that nothing needs any more (what the brokers' storage
     *        says: {@link MemorySegments#prunable})
     */
    public GarbageCollector(String cluster, Controller controller, Function<String, List<Long>> prunable,
            MeterRegistry registry) {
        this.cluster = cluster;
        this.controller = controller;
        this.prunable = prunable;
        this.registry = registry;
    }

    public Disposable start(List<String> topics, Duration interval, Scheduler timer) {
        return Flux.interval(interval, timer)
                .onBackpressureDrop() // a slow round skips ticks rather than ending the loop
                .concatMap(tick -> Flux.fromIterable(topics).concatMap(this::collect))
                .subscribe(v -> { }, e -> LOG.error("{}: garbage collection stopped: {}", cluster, e.toString()));
    }

    Mono<Void> collect(String topic) {
        List<Long> prunable = this.prunable.apply(topic);
        if (prunable.isEmpty()) {
            return Mono.empty();
        }
        return controller.prune(topic, prunable)
                .doOnNext(after -> registry.counter(PRUNED, "topic", topic).increment(
                        prunable.stream().filter(id -> after.segment(id).isEmpty()).count()))
                .then()
                .onErrorResume(e -> {
                    LOG.warn("{}: garbage collection of {} failed, trying again next round: {}", cluster, topic,
                            e.toString());
                    return Mono.empty();
                });
    }
}
