package io.verbatim.pipeline;

import io.verbatim.model.entry.SourcePosition;
import java.util.concurrent.atomic.AtomicBoolean;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/** A cursor that calls {@code onFirstAck} once, after its first acknowledgement: a run made progress. */
final class ProgressCursor implements ReplicationCursor {
    private final ReplicationCursor delegate;
    private final Runnable onFirstAck;
    private final AtomicBoolean progressed = new AtomicBoolean();

    ProgressCursor(ReplicationCursor delegate, Runnable onFirstAck) {
        this.delegate = delegate;
        this.onFirstAck = onFirstAck;
    }

    @Override
    public Flux<StoredEntry> read() {
        return delegate.read();
    }

    @Override
    public Mono<Void> acknowledge(SourcePosition upTo) {
        Mono<Void> ack = delegate.acknowledge(upTo);
        return progressed.get() ? ack : ack.doOnSuccess(v -> {
            if (progressed.compareAndSet(false, true)) {
                onFirstAck.run();
            }
        });
    }

    @Override
    public long backlog() {
        return delegate.backlog();
    }
}
