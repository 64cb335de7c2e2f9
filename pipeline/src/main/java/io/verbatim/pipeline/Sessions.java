package io.verbatim.pipeline;

import io.verbatim.model.HashRange;
import java.util.HashMap;
import java.util.Map;

/** The producer sessions of one attempt, one per remote segment, opened on first use. */
final class Sessions {
    private final RemoteCluster remote;
    private final String producerName;
    private final HashRange source;
    private final Map<Long, ProducerSession> open = new HashMap<>();

    /** @param source the range of the source segment replicated */
    Sessions(RemoteCluster remote, String producerName, HashRange source) {
        this.remote = remote;
        this.producerName = producerName;
        this.source = source;
    }

    synchronized ProducerSession to(long segmentId) {
        return open.computeIfAbsent(segmentId, id -> remote.open(id, producerName, source));
    }

    synchronized void closeAll() {
        open.values().forEach(ProducerSession::dispose);
        open.clear();
    }
}
