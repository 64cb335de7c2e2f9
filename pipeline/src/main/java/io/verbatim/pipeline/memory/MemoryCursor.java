package io.verbatim.pipeline.memory;

import io.verbatim.model.entry.SourcePosition;
import io.verbatim.pipeline.ReplicationCursor;
import io.verbatim.pipeline.StoredEntry;
import java.util.concurrent.atomic.AtomicInteger;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.FluxSink;
import reactor.core.publisher.Mono;

/** A durable cursor of a {@link MemorySegmentLog}: survives the replicators that read through it. */
public final class MemoryCursor implements ReplicationCursor {
    private final MemorySegmentLog log;
    private volatile long markDelete;

    MemoryCursor(MemorySegmentLog log, long markDelete) {
        this.log = log;
        this.markDelete = markDelete;
    }

    /** The entry id of the last acknowledged entry, -1 before the first. */
    public long markDeleteEntryId() {
        return markDelete;
    }

    /**
     * Entries in log order as demand allows. The reader emits only what was requested, so the sink keeps no queue
     * ({@code IGNORE}): per entry, the buffering sink's queue and drain were a good part of what reading cost.
     */
    @Override
    public Flux<StoredEntry> read() {
        return Flux.create(sink -> {
            Reader reader = new Reader(sink, markDelete + 1);
            Disposable watch = log.onChange(reader::drain);
            sink.onRequest(n -> reader.drain());
            sink.onDispose(watch);
        }, FluxSink.OverflowStrategy.IGNORE);
    }

    @Override
    public Mono<Void> acknowledge(SourcePosition upTo) {
        return Mono.fromRunnable(() -> {
            if (upTo.ledgerId() != log.segmentId()) {
                throw new IllegalArgumentException("position " + upTo + " is not in segment " + log.segmentId());
            }
            synchronized (this) {
                if (upTo.entryId() <= markDelete) {
                    return;
                }
                markDelete = upTo.entryId();
            }
            log.changed();
        });
    }

    @Override
    public long backlog() {
        return Math.max(0, log.size() - 1 - markDelete);
    }

    /** Emits entries as demand and the log allow; one drain loop at a time, never under the log's lock. */
    private final class Reader {
        private final FluxSink<StoredEntry> sink;
        private final AtomicInteger wip = new AtomicInteger();
        private long next;
        private boolean done;

        Reader(FluxSink<StoredEntry> sink, long next) {
            this.sink = sink;
            this.next = next;
        }

        void drain() {
            if (wip.getAndIncrement() != 0) {
                return;
            }
            int missed = 1;
            do {
                while (!done && sink.requestedFromDownstream() > 0 && !sink.isCancelled()) {
                    StoredEntry e = log.entryAt(next);
                    if (e == null) {
                        break;
                    }
                    next++;
                    sink.next(e);
                }
                if (!done && log.isSealed() && next >= log.size()) {
                    done = true;
                    sink.complete();
                }
                missed = wip.addAndGet(-missed);
            } while (missed != 0);
        }
    }
}
