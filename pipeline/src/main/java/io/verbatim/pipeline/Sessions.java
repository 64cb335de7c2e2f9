package io.verbatim.pipeline;

import java.util.HashMap;
import java.util.Map;

/** The producer sessions of one attempt, one per remote segment, opened on first use. */
final class Sessions {
    private final RemoteCluster remote;
    private final String producerName;
    private final Map<Long, ProducerSession> open = new HashMap<>();

    Sessions(RemoteCluster remote, String producerName) {
        this.remote = remote;
        this.producerName = producerName;
    }

    synchronized ProducerSession to(long segmentId) {
        return open.computeIfAbsent(segmentId, id -> remote.open(id, producerName));
    }

    synchronized void closeAll() {
        open.values().forEach(ProducerSession::dispose);
        open.clear();
    }
}
