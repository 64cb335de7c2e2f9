package io.verbatim.bench;

import io.verbatim.model.Layout;
import io.verbatim.model.entry.Entry;
import io.verbatim.model.entry.SourcePosition;
import io.verbatim.pipeline.ProducerSession;
import io.verbatim.pipeline.RemoteCluster;
import io.verbatim.pipeline.ReplicationCursor;
import io.verbatim.pipeline.SourceSegmentLog;
import io.verbatim.pipeline.StartAt;
import io.verbatim.pipeline.StoredEntry;
import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicLong;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * A source and a remote that keep nothing, so that only the replicator's own in-flight entries live on
 * the heap: a sealed segment log of {@code count} copies of one entry, each made (copied into a fresh
 * buffer) as it is read, and a remote that counts what it is sent and drops it.
 */
final class Synthetic {
    private Synthetic() {
    }

    /** A sealed log of segment 0 holding {@code count} entries with the bytes of {@code template}. */
    static SourceSegmentLog log(byte[] template, long count) {
        AtomicLong markDelete = new AtomicLong(-1);
        ReplicationCursor cursor = new ReplicationCursor() {
            @Override
            public Flux<StoredEntry> read() {
                return Flux.generate(() -> markDelete.get() + 1, (next, sink) -> {
                    if (next >= count) {
                        sink.complete();
                    } else {
                        sink.next(new StoredEntry(SourcePosition.of(0, next), ByteBuffer.wrap(template.clone())));
                    }
                    return next + 1;
                });
            }

            @Override
            public Mono<Void> acknowledge(SourcePosition upTo) {
                return Mono.fromRunnable(() -> markDelete.accumulateAndGet(upTo.entryId(), Math::max));
            }

            @Override
            public long backlog() {
                return count - 1 - markDelete.get();
            }
        };
        return new SourceSegmentLog() {
            @Override
            public long segmentId() {
                return 0;
            }

            @Override
            public Mono<ReplicationCursor> cursor(String name, StartAt startAt) {
                return Mono.just(cursor);
            }
        };
    }

    /** A remote with one fixed layout that takes every send, counting its bytes, and keeps none. */
    static final class CountingRemote implements RemoteCluster {
        private final Layout layout;
        private final AtomicLong bytes = new AtomicLong();
        private final AtomicLong entries = new AtomicLong();

        CountingRemote(Layout layout) {
            this.layout = layout;
        }

        long bytes() {
            return bytes.get();
        }

        long entries() {
            return entries.get();
        }

        @Override
        public String name() {
            return "remote";
        }

        @Override
        public Flux<Layout> layouts() {
            return Flux.just(layout).concatWith(Flux.never());
        }

        @Override
        public ProducerSession open(long segmentId, String producerName) {
            return new ProducerSession() {
                private volatile boolean disposed;

                @Override
                public Mono<Receipt> send(Entry entry, SourcePosition position) {
                    return Mono.fromCallable(() -> {
                        bytes.addAndGet(entry.encodedSize());
                        entries.incrementAndGet();
                        return Receipt.PERSISTED;
                    });
                }

                @Override
                public void dispose() {
                    disposed = true;
                }

                @Override
                public boolean isDisposed() {
                    return disposed;
                }
            };
        }
    }
}
