package io.verbatim.runtime.storage;

import io.verbatim.embedded.MemorySegments;
import io.verbatim.model.Compression;
import io.verbatim.model.Layout;
import io.verbatim.model.entry.Message;
import io.verbatim.model.entry.SourcePosition;
import io.verbatim.pipeline.LocalSegments;
import io.verbatim.pipeline.SourceSegmentLog;
import java.util.List;
import java.util.Optional;
import java.util.function.LongPredicate;
import reactor.core.publisher.Mono;

/**
 * Where one cluster keeps one topic's segments, as its brokers, producers and subscriptions use them: in
 * this process's memory ({@link MemoryTopicStorage}) or on the cluster's Apache Pulsar ({@link
 * PulsarTopicStorage}), as {@code storage.type} says. What a replication link reads is the {@link
 * LocalSegments} part.
 */
public interface TopicStorage extends LocalSegments {

    /**
     * Takes a newer layout: new segments with their replication cursors first, then seals, then the layout
     * published. A layout not newer than the one held is ignored. Callers may overlap; layouts are taken in
     * the order given.
     *
     * @return whether it was taken
     */
    Mono<Boolean> adopt(Layout next);

    /**
     * Produces {@code messages} as a PIP-486 client: each keyed message to its key's active segment, unkeyed
     * ones round-robin, batched per (segment, bucket) and stamped; a segment sealed under the call is left for
     * the next layout's.
     *
     * @return each written entry's position, once, in order
     */
    Mono<List<SourcePosition>> produce(List<Message> messages, Compression codec);

    /**
     * {@link #produce}, done on the calling thread: in memory at once, on any thread; on Pulsar it waits for the
     * broker, so not on an event loop or a parallel scheduler's thread.
     */
    default List<SourcePosition> produceNow(List<Message> messages, Compression codec) {
        return produce(messages, codec).blockOptional().orElseThrow();
    }

    /** The log of segment {@code segmentId} while it exists (empty: never had, or deleted by garbage collection). */
    Optional<SourceSegmentLog> findLog(long segmentId);

    /** Deletes cursor {@code name} on every segment (Pulsar's unsubscribe): it no longer holds anything back. */
    Mono<Void> removeCursor(String name);

    /** The sealed segments nothing needs any more (backlog older than the message TTL does not pin). */
    List<Long> prunable(long messageTtlMs);

    /**
     * Tells the storage which segments this process acts on ({@code acting}, asked again at each use): with many
     * broker processes in a cluster, each one asks its Pulsar only about the backlogs of those, and counts no
     * backlog, and nothing prunable, for the others (their owner does). Every segment unless told.
     */
    default void actsOn(LongPredicate acting) {
    }

    /** The in-memory logs behind this storage, when it is in memory (checks and images read them). */
    Optional<MemorySegments> memory();

    /** Releases what the storage holds open (producers, consumers); what it stored stays where it is. */
    void close();
}
