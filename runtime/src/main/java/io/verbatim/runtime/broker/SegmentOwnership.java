package io.verbatim.runtime.broker;

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
