package io.verbatim.embedded;

import io.verbatim.model.Layout;
import io.verbatim.model.entry.SourcePosition;
import java.nio.ByteBuffer;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Executor;
import java.util.function.LongConsumer;
import reactor.core.publisher.Mono;

/**
 * Where a {@link MemorySegments} writes down each change it makes, in the order it makes them, so that a
 * restart can replay them over its last checkpoint: what makes "acknowledged" mean "kept" for the embedded
 * storage. A cluster appends a {@link Record} under its lock as it changes its state; whoever acknowledges
 * the change to a producer or a peer waits for {@link #durable} first, and a segment's readers see an entry
 * only once it is durable (as BookKeeper's readers see entries up to the last add confirmed).
 *
 * <p>{@link #NONE} keeps nothing: a cluster without a journal lives in memory only.
 */
public interface Journal {

    /** No journal: nothing is written, everything is durable at once (memory only). */
    Journal NONE = new Journal() {
        @Override
        public long append(Record record) {
            return 0;
        }

        @Override
        public Mono<Void> durable(long sequence) {
            return Mono.empty();
        }

        @Override
        public long lastSequence() {
            return 0;
        }

        @Override
        public void onDurable(LongConsumer listener) {
        }

        @Override
        public boolean keeps() {
            return false;
        }
    };

    /**
     * Appends {@code record}: called under the changing cluster's lock, it must not block.
     *
     * @return the record's sequence number, above every earlier record's
     */
    long append(Record record);

    /** Completes once every record up to {@code sequence} is as durable as the flush policy makes it; errors when the journal failed. */
    Mono<Void> durable(long sequence);

    /** The sequence number of the last record appended. */
    long lastSequence();

    /**
     * Calls {@code listener} with the highest durable sequence number each time it moves, off the appenders'
     * threads and in increasing order, on the thread that tells waiters of durability: a listener must not block
     * (nor run what may wait for durability, a reader's handler: it hands that to {@link #changes}).
     */
    void onDurable(LongConsumer listener);

    /**
     * Where the work that durability makes possible runs (readers drained of entries now visible, their handlers
     * included): never the thread that tells waiters of durability, so a handler that waits for durability (a
     * consumer producing and waiting for its acknowledgement) cannot hold up its own wait. In order.
     */
    default Executor changes() {
        return Runnable::run;
    }

    /** Whether records are kept at all ({@code false} for {@link #NONE}). */
    boolean keeps();

    /**
     * Why the journal failed (an I/O error), if it did: then {@link #append} throws, and a cluster refuses every
     * change before making it, since nothing it made could be kept or acknowledged.
     */
    default Optional<String> failed() {
        return Optional.empty();
    }

    /**
     * One change of one topic's storage. An index is an entry's place in its segment's log, from 0, across
     * ledgers (what cursors count in); a ledger starts at an index.
     */
    sealed interface Record {
        String topic();

        /**
         * The topic's storage was created with {@code layout} (nothing of it was kept before).
         *
         * @param ledgers each segment's first ledger
         */
        record TopicCreated(String topic, Layout layout, Map<Long, Long> ledgers) implements Record {
            public TopicCreated {
                ledgers = Map.copyOf(ledgers);
            }
        }

        /** Segment {@code segmentId} started ledger {@code ledgerId} at entry index {@code firstIndex}. */
        record LedgerOpened(String topic, long segmentId, long ledgerId, long firstIndex) implements Record {
        }

        /**
         * An entry written by this cluster's producer (or appended raw) at {@code index}.
         *
         * @param sequence the local producer's next sequence id after it
         */
        record Appended(String topic, long segmentId, long index, ByteBuffer bytes, long sequence) implements Record {
        }

        /**
         * A replicated entry stored at {@code index}, arrived from {@code producer} in session {@code session},
         * stamped with source {@code position}: it is now the pair's highest persisted position.
         */
        record Ingested(String topic, long segmentId, long index, ByteBuffer bytes, String producer, long session,
                SourcePosition position) implements Record {
        }

        /** Cursor {@code cursor} exists at {@code markDelete} (the index of its last acknowledged entry, -1: none). */
        record CursorOpened(String topic, long segmentId, String cursor, long markDelete) implements Record {
        }

        /** Cursor {@code cursor} acknowledged every entry up to index {@code markDelete}. */
        record Acknowledged(String topic, long segmentId, String cursor, long markDelete) implements Record {
        }

        /** Cursor {@code cursor} was deleted on every segment. */
        record CursorRemoved(String topic, String cursor) implements Record {
        }

        /**
         * The topic took layout {@code layout} (segments created, sealed, pruned as {@link MemorySegments#adopt}).
         *
         * @param ledgers each new segment's first ledger
         */
        record Adopted(String topic, Layout layout, Map<Long, Long> ledgers) implements Record {
            public Adopted {
                ledgers = Map.copyOf(ledgers);
            }
        }

        /** An admin removed the deduplication mark {@code key} ({@code <segment id>/<producer>}). */
        record MarkReset(String topic, String key) implements Record {
        }
    }
}
