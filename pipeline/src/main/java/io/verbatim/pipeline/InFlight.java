package io.verbatim.pipeline;

import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

/** Counts units whose sends are under way, and tells when none are. */
final class InFlight {
    private int count;
    private Sinks.@Nullable Empty<Void> idle;

    synchronized void begin() {
        count++;
    }

    void end() {
        Sinks.@Nullable Empty<Void> done = null;
        synchronized (this) {
            count--;
            if (count == 0 && idle != null) {
                done = idle;
                idle = null;
            }
        }
        if (done != null) {
            done.tryEmitEmpty();
        }
    }

    synchronized Mono<Void> whenIdle() {
        if (count == 0) {
            return Mono.empty();
        }
        if (idle == null) {
            idle = Sinks.empty();
        }
        return idle.asMono();
    }
}
