package io.verbatim.runtime.storage;

import io.verbatim.embedded.MemorySegments;
import io.verbatim.model.Compression;
import io.verbatim.model.Layout;
import io.verbatim.model.entry.Message;
import io.verbatim.model.entry.SourcePosition;
import io.verbatim.pipeline.DrainGate;
import io.verbatim.pipeline.SourceSegmentLog;
import java.util.List;
import java.util.Optional;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * A topic's segments in this process's memory: a {@link MemorySegments}, where every call is done at once; with a
 * data directory, a produce is answered once the journal made its entries durable.
 */
public final class MemoryTopicStorage implements TopicStorage {
    private final MemorySegments cluster;

    public MemoryTopicStorage(MemorySegments cluster) {
        this.cluster = cluster;
    }

    @Override
    public String topic() {
        return cluster.topic();
    }

    @Override
    public Layout layout() {
        return cluster.layout();
    }

    @Override
    public Flux<Layout> layouts() {
        return cluster.layouts();
    }

    @Override
    public SourceSegmentLog log(long segmentId) {
        return cluster.log(segmentId);
    }

    @Override
    public DrainGate drainGate() {
        return cluster.drainGate();
    }

    @Override
    public long backlog(long segmentId, String cursorName) {
        return cluster.backlog(segmentId, cursorName);
    }

    @Override
    public Mono<Boolean> adopt(Layout next) {
        return Mono.fromCallable(() -> cluster.adopt(next));
    }

    @Override
    public Mono<List<SourcePosition>> produce(List<Message> messages, Compression codec) {
        // acknowledged once the journal made the entries durable (at once in memory only)
        return Mono.fromCallable(() -> cluster.produce(messages, codec))
                .flatMap(written -> cluster.durable().thenReturn(written));
    }

    @Override
    public List<SourcePosition> produceNow(List<Message> messages, Compression codec) {
        List<SourcePosition> written = cluster.produce(messages, codec);
        if (cluster.journaled()) {
            cluster.durable().block();
        }
        return written;
    }

    @Override
    public Optional<SourceSegmentLog> findLog(long segmentId) {
        return cluster.findLog(segmentId).map(l -> l);
    }

    @Override
    public Mono<Void> removeCursor(String name) {
        return Mono.fromRunnable(() -> cluster.removeCursor(name));
    }

    @Override
    public List<Long> prunable(long messageTtlMs) {
        return cluster.prunable(messageTtlMs);
    }

    @Override
    public Optional<MemorySegments> memory() {
        return Optional.of(cluster);
    }

    @Override
    public void close() {
        // nothing held open: the logs live as long as the cluster object
    }
}
