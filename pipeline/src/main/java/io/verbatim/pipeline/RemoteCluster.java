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

    /**
     * A signal each time the remote answers again after it could not be reached (a lost connection to it
     * reopened): a replicator backing off from a failed pass tries again at once, rather than sit out a backoff
     * that grew while the remote was away (up to {@code replication.retry.max}, a minute by default). Default:
     * none.
     */
    default Flux<Long> reachedAgain() {
        return Flux.never();
    }
}
