package io.verbatim.embedded;

import io.verbatim.model.entry.SourcePosition;
import io.verbatim.pipeline.ReplicationCursor;
import io.verbatim.pipeline.StoredEntry;
import java.util.concurrent.atomic.AtomicInteger;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.FluxSink;
import reactor.core.publisher.Mono;

/**
 * A durable cursor of a {@link MemorySegmentLog}: survives the replicators that read through it. Its
 * mark-delete position is an entry index of its log (-1 before the first entry).
 */
public final class MemoryCursor implements ReplicationCursor {
    private final MemorySegmentLog log;
    private final String name;
    private volatile long markDelete;

    MemoryCursor(MemorySegmentLog log, String name, long markDelete) {
        this.log = log;
        this.name = name;
        this.markDelete = markDelete;
    }

    /** The index of the last acknowledged entry, -1 before the first. */
    public long markDeleteIndex() {
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
            long index = log.indexOf(upTo);
            if (index < 0) {
                throw new IllegalArgumentException("position " + upTo + " is not an entry of segment "
                        + log.segmentId());
            }
            synchronized (this) {
                if (index <= markDelete) {
                    return;
                }
                markDelete = index;
                log.acknowledged(name, index);
            }
            log.changed();
        });
    }

    /** Moves the mark-delete position to {@code index} as a journal replays it; never backwards. */
    synchronized void replayAcknowledged(long index) {
        markDelete = Math.max(markDelete, Math.min(index, log.size() - 1));
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
