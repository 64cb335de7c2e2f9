package io.verbatim.embedded;

import io.verbatim.model.Layout;
import io.verbatim.pipeline.ProducerSession;
import io.verbatim.pipeline.RemoteCluster;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import reactor.core.publisher.Flux;

/**
 * The sessions replicators of other clusters open into a {@link MemorySegments}: the ids that fence them (each
 * higher than every one handed out before, restored and replayed ones included) and the sessions open in this
 * process, which {@link #disconnectAll} drops.
 */
final class RemoteSessions {
    private final AtomicLong ids = new AtomicLong();
    private final Set<MemoryProducerSession> open = ConcurrentHashMap.newKeySet();

    /** A new session id, higher than every one before. */
    long newId() {
        return ids.incrementAndGet();
    }

    /** The last session id handed out (or seen). */
    long lastId() {
        return ids.get();
    }

    /** A session a restored image or a replayed record names: the next id is past it. */
    void seen(long session) {
        ids.accumulateAndGet(session, Math::max);
    }

    /** {@code cluster} as a remote whose sessions are these. */
    RemoteCluster remote(MemorySegments cluster) {
        return new RemoteCluster() {
            @Override
            public String name() {
                return cluster.name();
            }

            @Override
            public Flux<Layout> layouts() {
                return cluster.layouts();
            }

            @Override
            public ProducerSession open(long segmentId, String producerName) {
                MemoryProducerSession session = new MemoryProducerSession(cluster, segmentId, producerName, newId());
                open.add(session);
                return session;
            }
        };
    }

    /** Drops every open session: receipts under way are lost, and each fails from now on. */
    void disconnectAll() {
        for (MemoryProducerSession s : open) {
            s.disconnect();
        }
        open.removeIf(s -> true);
    }

    void closed(MemoryProducerSession session) {
        open.remove(session);
    }
}
