package io.verbatim.exchange;

import io.verbatim.model.Layout;
import reactor.core.publisher.Mono;

/**
 * Where the controller waits for its own node to serve what it committed (read-your-writes): an admin split is
 * answered, a peer's state folded in answered, a prune counted only once this node's storage holds the committed epoch
 * or a newer one, even when the watch that feeds the storage (from a listener's replica of the metadata log) is a
 * moment behind. Only the layout store's watch adopts layouts; this seam waits for it, it adopts nothing.
 */
@FunctionalInterface
public interface Adoption {

    /** No storage in this process (the simulator, a controller replica in a process of its own): nothing to wait for. */
    Adoption NONE = (topic, epoch) -> Mono.empty();

    /**
     * Completes once this node's storage of {@code topic} holds {@code epoch} or a newer one (at once where it holds no
     * such topic). Bounded and never an error: one that gives up completes (and says so), so a commit's answer is late
     * at worst, never lost.
     */
    Mono<Void> adopted(String topic, long epoch);

    /** {@code committed}, once adopted: what a commit that changed {@code topic}'s layout answers. */
    default Mono<Layout> readBack(String topic, Layout committed) {
        return adopted(topic, committed.epoch()).thenReturn(committed);
    }
}
