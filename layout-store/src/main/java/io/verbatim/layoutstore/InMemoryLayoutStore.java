package io.verbatim.layoutstore;

import io.verbatim.model.Layout;
import java.time.Duration;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.ConcurrentHashMap;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

/** A {@link LayoutStore} in memory: the default until the metadata log provides the Raft-backed one. */
public final class InMemoryLayoutStore implements LayoutStore {
    private final Map<String, Entry> topics = new ConcurrentHashMap<>();

    private static final class Entry {
        Layout layout;
        final Sinks.Many<Layout> changes = Sinks.many().replay().latest();

        Entry(Layout layout) {
            this.layout = layout;
        }

        synchronized OptionalLong epoch() {
            return OptionalLong.of(layout.epoch());
        }
    }

    @Override
    public Mono<Layout> get(String topic) {
        // fromCallable, not defer: its block() calls the callable at once, so a caller may block on it on a
        // non-blocking thread (the controller's status does). The callable's null is Reactor's "empty".
        return Mono.fromCallable(() -> {
            Entry e = topics.get(topic);
            if (e == null) {
                return null;
            }
            synchronized (e) {
                return e.layout;
            }
        });
    }

    @Override
    public Mono<Layout> create(String topic, Layout initial) {
        return Mono.fromCallable(() -> {
            Entry fresh = new Entry(initial);
            Entry existing = topics.putIfAbsent(topic, fresh);
            EpochRule.create(topic, existing == null ? OptionalLong.empty() : existing.epoch()).throwIfRefused();
            fresh.changes.tryEmitNext(initial);
            return initial;
        });
    }

    @Override
    public Mono<Layout> compareAndSet(String topic, long expectedEpoch, Layout next) {
        return Mono.fromCallable(() -> {
            Entry e = topics.get(topic);
            if (e == null) {
                throw EpochRule.missing(topic).exception();
            }
            synchronized (e) {
                EpochRule.compareAndSet(topic, OptionalLong.of(e.layout.epoch()), expectedEpoch, next.epoch())
                        .throwIfRefused();
                e.layout = next;
                e.changes.emitNext(next, Sinks.EmitFailureHandler.busyLooping(Duration.ofSeconds(1)));
            }
            return next;
        });
    }

    @Override
    public Flux<Layout> watch(String topic) {
        return Flux.defer(() -> {
            Entry e = topics.get(topic);
            return e == null ? Flux.error(new IllegalArgumentException("topic " + topic + " does not exist"))
                    : e.changes.asFlux();
        });
    }

    @Override
    public Flux<String> topics() {
        return Flux.defer(() -> Flux.fromIterable(topics.keySet()).sort());
    }
}
