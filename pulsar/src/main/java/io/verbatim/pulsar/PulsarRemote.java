package io.verbatim.pulsar;

import io.verbatim.model.HashRange;
import io.verbatim.model.Layout;
import io.verbatim.model.Segment;
import io.verbatim.model.entry.Entry;
import io.verbatim.model.entry.SourcePosition;
import io.verbatim.pipeline.ProducerSession;
import io.verbatim.pipeline.RemoteCluster;
import io.verbatim.pipeline.RemoteException;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * A remote cluster whose segments are topics on its own Pulsar: the remote's layouts (from wherever they
 * come: the layout exchange, a test) and a replicator producer session per destination segment. A segment
 * id is named by the first layout that showed it (a segment's range never changes).
 */
public final class PulsarRemote implements RemoteCluster, Disposable {
    private final String name;
    private final PulsarStorage storage;
    private final String topic;
    private final Flux<Layout> layouts;
    private final Map<Long, Segment> known = new ConcurrentHashMap<>();
    private final Disposable watch;

    /**
     * @param storage the remote cluster's Pulsar
     * @param topic the scalable topic, as the remote names it
     * @param layouts the remote's layouts: the latest at subscription, then each newer one
     */
    public PulsarRemote(String name, PulsarStorage storage, String topic, Flux<Layout> layouts) {
        this.name = name;
        this.storage = storage;
        this.topic = topic;
        this.layouts = layouts;
        this.watch = layouts.subscribe(l -> l.segments().values().forEach(s -> known.putIfAbsent(s.id(), s)));
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public Flux<Layout> layouts() {
        return layouts.doOnNext(l -> l.segments().values().forEach(s -> known.putIfAbsent(s.id(), s)));
    }

    @Override
    public ProducerSession open(long segmentId, String producerName) {
        Segment segment = known.get(segmentId);
        if (segment == null) {
            return new Refusing(segmentId);
        }
        return storage.session(topic, segment, producerName);
    }

    /** A session that first reads what the segment's sealed ancestors (as the layouts seen show them) stored. */
    @Override
    public ProducerSession open(long segmentId, String producerName, HashRange source) {
        Segment segment = known.get(segmentId);
        if (segment == null) {
            return new Refusing(segmentId);
        }
        return storage.session(topic, segment, producerName, source, id -> Optional.ofNullable(known.get(id)));
    }

    @Override
    public void dispose() {
        watch.dispose();
    }

    @Override
    public boolean isDisposed() {
        return watch.isDisposed();
    }

    /** A session to a segment no layout of the remote showed: gone (pruned), so re-route. */
    private final class Refusing implements ProducerSession {
        private final long segmentId;
        private volatile boolean disposed;

        Refusing(long segmentId) {
            this.segmentId = segmentId;
        }

        @Override
        public Mono<Receipt> send(Entry entry, SourcePosition position) {
            return Mono.error(new RemoteException(RemoteException.Kind.SEALED, segmentId, "no layout of " + name
                    + " seen here has segment " + segmentId + " of " + topic));
        }

        @Override
        public void dispose() {
            disposed = true;
        }

        @Override
        public boolean isDisposed() {
            return disposed;
        }
    }
}
