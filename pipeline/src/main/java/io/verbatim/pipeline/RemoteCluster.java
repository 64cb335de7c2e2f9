package io.verbatim.pipeline;

import io.verbatim.model.Layout;
import reactor.core.publisher.Flux;

/** A remote cluster as a replicator writes to it. */
public interface RemoteCluster {

    String name();

    /** The remote's layout: the latest one at subscription, then each newer one. */
    Flux<Layout> layouts();

    /**
     * Opens an ordered send session to one of the remote's segments as {@code producerName}. A session
     * is a FIFO channel: once a send fails, every later send of the session fails too, and the
     * destination refuses an entry whose predecessor in the session it has not taken.
     */
    ProducerSession open(long segmentId, String producerName);
}
