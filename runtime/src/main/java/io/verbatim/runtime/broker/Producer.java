package io.verbatim.runtime.broker;

import io.verbatim.model.Compression;
import io.verbatim.model.KeyHash;
import io.verbatim.model.Layout;
import io.verbatim.model.entry.Message;
import io.verbatim.model.entry.SourcePosition;
import io.verbatim.runtime.storage.TopicStorage;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import reactor.core.publisher.Mono;

/**
 * Produces to one topic of one cluster as a PIP-486 client: each keyed message to the active segment
 * of its key's segment hash, unkeyed ones round-robin, batched per (segment, bucket), each entry
 * stamped with the {@code hashB} range it holds. A segment sealed under a send is re-routed with the
 * new layout.
 */
public final class Producer {
    private final TopicStorage storage;
    private final LoadTracker load;
    private final Compression codec;

    public Producer(TopicStorage storage, LoadTracker load, Compression codec) {
        this.storage = storage;
        this.load = load;
        this.codec = codec;
    }

    /** Sends {@code messages} as one produce call; completes with each written entry's position. */
    public Mono<List<SourcePosition>> send(List<Message> messages) {
        return Mono.defer(() -> {
            count(messages);
            return storage.produce(messages, codec);
        });
    }

    /**
     * {@link #send}, done now on the calling thread: in memory only a produce never waits; with a data directory it
     * waits for the journal, and on Pulsar for the broker's answer, so not on an event loop.
     */
    public List<SourcePosition> sendNow(List<Message> messages) {
        count(messages);
        return storage.produceNow(messages, codec);
    }

    private void count(List<Message> messages) {
        Layout layout = storage.layout();
        Map<Long, long[]> bySegment = new HashMap<>();
        int unkeyed = 0;
        for (Message m : messages) {
            KeyHash h = m.routingHash().orElse(null);
            long id = h == null ? layout.activeSegments().get(unkeyed++ % layout.activeSegments().size()).id()
                    : layout.activeSegmentFor(h.segmentHash()).id();
            long[] c = bySegment.computeIfAbsent(id, k -> new long[2]);
            c[0]++;
            c[1] += m.payload().remaining();
        }
        bySegment.forEach((id, c) -> load.produced(id, c[0], c[1]));
    }
}
