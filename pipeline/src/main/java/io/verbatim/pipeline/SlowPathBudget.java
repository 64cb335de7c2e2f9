package io.verbatim.pipeline;

import reactor.core.publisher.Mono;

/**
 * The broker-wide budget the slow path draws on before it decompresses and re-batches an entry. The
 * fast path never asks it.
 */
public interface SlowPathBudget {

    /**
     * A permit for one re-batch of {@code bytes} compressed bytes by {@code replicatorId}. The returned
     * {@code Mono} completes when the budget allows; until then the replicator's reads are paused.
     * Cancelling it gives the place up.
     */
    Mono<Permit> acquire(String replicatorId, long bytes);

    /** A held slot; released once the re-batched parts are serialized. */
    interface Permit {
        void release();
    }

    /** No limit: every request is granted at once. */
    static SlowPathBudget unlimited() {
        return (id, bytes) -> Mono.just(() -> { });
    }
}
