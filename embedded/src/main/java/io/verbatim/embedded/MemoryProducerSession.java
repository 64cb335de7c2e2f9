package io.verbatim.embedded;

import io.verbatim.model.entry.Entry;
import io.verbatim.model.entry.SourcePosition;
import io.verbatim.pipeline.ProducerSession;
import io.verbatim.pipeline.RemoteException.Kind;
import io.verbatim.pipeline.RemoteException;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

/** A send session into a {@link MemorySegments}, with the faults its cluster injects. */
final class MemoryProducerSession implements ProducerSession {
    private final MemorySegments cluster;
    private final long segmentId;
    private final String producerName;
    private final long sessionId;
    private long nextSequence;
    private volatile boolean broken;
    private volatile boolean disposed;
    private final Sinks.Empty<Void> connectionLost = Sinks.empty();

    MemoryProducerSession(MemorySegments cluster, long segmentId, String producerName, long sessionId) {
        this.cluster = cluster;
        this.segmentId = segmentId;
        this.producerName = producerName;
        this.sessionId = sessionId;
    }

    @Override
    public Mono<Receipt> send(Entry entry, SourcePosition position) {
        return Mono.defer(() -> {
            if (broken || disposed) {
                return Mono.error(new RemoteException(Kind.SESSION_BROKEN, segmentId, "an earlier send failed"));
            }
            long seq;
            synchronized (this) {
                seq = nextSequence++;
            }
            SendFault fault = cluster.currentFaults().onSend(segmentId, producerName, position);
            if (fault instanceof SendFault.None) {
                // Stored and answered as it is subscribed: no connection can drop in between.
                return Mono.fromCallable(() -> cluster.ingest(segmentId, producerName, sessionId, seq, position, entry))
                        .doOnError(e -> broken = true);
            }
            // A receipt still under way when the connection drops never arrives.
            return deliver(fault, seq, entry, position)
                    .or(connectionLost.asMono().then(Mono.error(() -> unavailable("connection lost"))))
                    .doOnError(e -> broken = true);
        });
    }

    private Mono<Receipt> deliver(SendFault fault, long seq, Entry entry, SourcePosition position) {
        if (fault instanceof SendFault.LostRequest) {
            return Mono.error(unavailable("request lost"));
        }
        if (fault instanceof SendFault.Rejected rejected) {
            cluster.poison(segmentId, producerName, sessionId);
            Mono<Receipt> refusal = Mono.error(new RemoteException(Kind.REJECTED, segmentId, "rejected by the remote"));
            return rejected.delay().isZero() ? refusal
                    : Mono.delay(rejected.delay(), cluster.scheduler()).then(refusal);
        }
        Mono<Receipt> arrival = Mono.fromCallable(() -> cluster.ingest(segmentId, producerName, sessionId, seq,
                position, entry));
        if (fault instanceof SendFault.LostReceipt) {
            return arrival.then(Mono.error(unavailable("receipt lost")));
        }
        if (fault instanceof SendFault.Hang) {
            return arrival.then(Mono.never());
        }
        if (fault instanceof SendFault.Delay d) {
            // Arrives now, in order; the receipt takes the round trip.
            return arrival.flatMap(r -> Mono.delay(d.delay(), cluster.scheduler()).thenReturn(r));
        }
        return arrival;
    }

    private RemoteException unavailable(String why) {
        return new RemoteException(Kind.UNAVAILABLE, segmentId, why);
    }

    /** The connection under this session drops: every pending and later send fails. */
    void disconnect() {
        broken = true;
        connectionLost.tryEmitEmpty();
    }

    @Override
    public void dispose() {
        disposed = true;
        cluster.closed(this);
    }

    @Override
    public boolean isDisposed() {
        return disposed;
    }
}
