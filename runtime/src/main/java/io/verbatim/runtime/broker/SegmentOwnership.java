package io.verbatim.runtime.broker;

import java.util.function.BiPredicate;
import reactor.core.publisher.Flux;

/**
 * Which segments this process acts on (replicates, dispatches): all of its brokers' share when the cluster's
 * segments live in this one process, or what the metadata log says this broker member owns while its lease
 * holds when a cluster has many broker processes.
 */
public interface SegmentOwnership {

    /** Whether this process acts on {@code topic}'s segment {@code segment} now. */
    boolean owns(String topic, long segment);

    /** Signals each time what {@link #owns} answers may have changed (ownership moved, the lease lapsed). */
    Flux<Long> changes();

    /**
     * Whether this process, no longer acting on the segment, hands it over rather than stops at once: a move asked
     * for it and this process may still act (its lease holds), so what it sent is answered before the next owner
     * starts from the cursor.
     */
    default boolean handsOver(String topic, long segment) {
        return false;
    }

    /**
     * Tells this ownership which segments this process still hands over ({@code busy}) and when a hand-over ends
     * ({@code ended}): a segment is given up only once handed over.
     */
    default void handOvers(BiPredicate<String, Long> busy, Flux<?> ended) {
    }

    /** No segment: a broker process of a cluster of many before it knows its share. */
    SegmentOwnership NONE = new SegmentOwnership() {
        @Override
        public boolean owns(String topic, long segment) {
            return false;
        }

        @Override
        public Flux<Long> changes() {
            return Flux.never();
        }
    };

    /** Every segment, for ever: one process holds the cluster. */
    SegmentOwnership ALL = new SegmentOwnership() {
        @Override
        public boolean owns(String topic, long segment) {
            return true;
        }

        @Override
        public Flux<Long> changes() {
            return Flux.never();
        }
    };
}
