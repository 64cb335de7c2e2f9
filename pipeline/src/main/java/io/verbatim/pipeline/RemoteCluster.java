package io.verbatim.pipeline;

import io.verbatim.model.HashRange;
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
     * {@link #open(long, String)} for the replicator of a source segment whose range is {@code source}: a remote
     * whose deduplication is per segment (Pulsar's, per topic) can then tell which entries the segment's sealed
     * ancestors took (where the source's entries went before the remote split or merged). Default: the same as
     * without it.
     */
    default ProducerSession open(long segmentId, String producerName, HashRange source) {
        return open(segmentId, producerName);
    }

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
