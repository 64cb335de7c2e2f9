package io.verbatim.budget;

import io.verbatim.model.Compression;
import reactor.core.publisher.Mono;

/**
 * The broker-wide budget the slow path draws on before it decompresses and re-batches an entry
 * (PIP-495). The fast path never asks it.
 */
public interface SlowPathBudget {

    /**
     * A permit for one re-batch of {@code bytes} compressed bytes of {@code codec} by
     * {@code replicatorId}. The {@code Mono} completes when the budget allows; until then the caller's
     * reads are paused (nothing is dropped). Cancelling it gives the place up. A replicator holds at
     * most one operation: asking again before releasing is an error.
     */
    Mono<Permit> acquire(String replicatorId, long bytes, Compression codec);

    /** A held concurrency slot; release it once the re-batched parts are serialized. Idempotent. */
    interface Permit {
        void release();
    }

    /** No limit: every request is granted at once. */
    static SlowPathBudget unlimited() {
        return (id, bytes, codec) -> Mono.just(() -> { });
    }
}
