package io.verbatim.embedded;

import io.verbatim.model.Compression;
import io.verbatim.model.KeyHash;
import io.verbatim.model.Layout;
import io.verbatim.model.Segment;
import io.verbatim.model.entry.Entries;
import io.verbatim.model.entry.Entry;
import io.verbatim.model.entry.Message;
import io.verbatim.model.entry.SourcePosition;
import io.verbatim.model.proto.MessageMetadata;
import io.verbatim.pipeline.Admission;
import io.verbatim.pipeline.ProducerSession;
import io.verbatim.pipeline.RemoteException;
import io.verbatim.pipeline.StoredEntry;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.jspecify.annotations.Nullable;
import reactor.core.Disposable;
import reactor.core.scheduler.Scheduler;

/**
 * How a {@link MemorySegments} stores entries: those its local producer writes (routed and batched as a PIP-486
 * client, stamped with the producer's sequence ids) and those replicators send (admitted by the destination's
 * rules, {@link Destinations}). Each is stored at the end of its segment's log, written down in the journal with
 * what a replay needs, and told to the append listeners. Writes run under the cluster's lock; the cluster checks
 * first that it may store at all.
 */
final class Appender {
    private final MemorySegments cluster;
    private final Scheduler scheduler;
    private final Journaling journaling;
    private final SegmentLogs logs;
    private final Destinations destinations;
    private final List<MemorySegments.AppendListener> listeners = new CopyOnWriteArrayList<>();
    private final AtomicLong roundRobin = new AtomicLong();
    /** The local producer's next sequence id. */
    private final AtomicLong sequence = new AtomicLong();

    Appender(MemorySegments cluster, Scheduler scheduler, Journaling journaling, SegmentLogs logs,
            Destinations destinations) {
        this.cluster = cluster;
        this.scheduler = scheduler;
        this.journaling = journaling;
        this.logs = logs;
        this.destinations = destinations;
    }

    /** What the journal keeps of an entry stored at an index. */
    @FunctionalInterface
    private interface EntryRecord {
        Journal.Record of(long index, ByteBuffer bytes);
    }

    /**
     * {@code messages} routed as a PIP-486 producer routes them: each keyed message to the active segment of its
     * key, unkeyed ones round-robin, grouped per (segment, bucket) as {@code segment id << 16 | bucket}.
     */
    Map<Long, List<Message>> route(Layout layout, List<Message> messages) {
        Map<Long, List<Message>> batches = new LinkedHashMap<>();
        for (Message m : messages) {
            KeyHash routing = m.routingHash().orElse(null);
            Segment s = routing == null
                    ? layout.activeSegments().get((int) (roundRobin.getAndIncrement() % layout.activeSegments().size()))
                    : layout.activeSegmentFor(routing.segmentHash());
            long group = s.id() << 16 | s.buckets().bucketOf(m.hashB());
            batches.computeIfAbsent(group, g -> new ArrayList<>()).add(m);
        }
        return batches;
    }

    /** Writes each batch as one stamped entry: the entries written, or null when a segment was sealed under us. */
    @Nullable List<SourcePosition> write(Map<Long, List<Message>> batches, Compression codec) {
        for (long group : batches.keySet()) {
            MemorySegmentLog log = logs.get(group >>> 16);
            if (log == null || log.isSealed()) {
                return null; // sealed (or sealed and deleted since): route again with the new layout
            }
        }
        List<SourcePosition> written = new ArrayList<>();
        for (Map.Entry<Long, List<Message>> batch : batches.entrySet()) {
            MessageMetadata md = MessageMetadata.newBuilder().setProducerName(cluster.name() + "-producer")
                    .setSequenceId(sequence.getAndIncrement())
                    .setPublishTime(scheduler.now(TimeUnit.MILLISECONDS)).build();
            Entry entry = Entries.batch(md, batch.getValue(), codec.proto());
            long segmentId = batch.getKey() >>> 16;
            written.add(append(Objects.requireNonNull(logs.get(segmentId)), entry));
        }
        return written;
    }

    /** Stores an entry of the local producer; its record keeps the producer's sequence. */
    SourcePosition append(MemorySegmentLog log, Entry entry) {
        return stored(log, entry, (index, bytes) -> new Journal.Record.Appended(cluster.topic(), log.segmentId(),
                index, bytes, sequence.get()));
    }

    /**
     * Admits a replicated entry by the destination's rules and stores it at once (nothing arrives meanwhile,
     * under the lock), its record keeping the replicator's session and source position.
     *
     * @throws RemoteException naming why the entry was not taken
     */
    ProducerSession.Receipt ingest(long segmentId, String producerName, long session, long seq,
            SourcePosition position, Entry entry, boolean sessionOrder) {
        MemorySegmentLog log = logs.get(segmentId);
        if (log == null) {
            throw new RemoteException(RemoteException.Kind.SEALED, segmentId, "segment was deleted");
        }
        Admission admission = destinations.admit(segmentId, producerName, session, seq, position, log.isSealed(),
                sessionOrder);
        if (admission instanceof Admission.Refused refused) {
            throw refused.exception(segmentId);
        }
        if (admission instanceof Admission.Duplicate) {
            return ProducerSession.Receipt.DUPLICATE;
        }
        stored(log, entry, (index, bytes) -> new Journal.Record.Ingested(cluster.topic(), segmentId, index, bytes,
                producerName, session, position));
        destinations.persisted(segmentId, producerName, admission, position);
        return ProducerSession.Receipt.PERSISTED;
    }

    /**
     * Stores {@code entry} at the end of {@code log}, writes it down ({@code record}) and tells the append
     * listeners; readers see it once the journal made it durable.
     */
    private SourcePosition stored(MemorySegmentLog log, Entry entry, EntryRecord record) {
        StoredEntry stored = log.add(ByteBuffer.wrap(entry.toByteArray()));
        long index = log.size() - 1;
        journaling.writeEntry(record.of(index, stored.bytes()), log, index);
        if (!listeners.isEmpty()) {
            Segment segment = cluster.layout().segment(log.segmentId()).orElseThrow();
            for (MemorySegments.AppendListener l : listeners) {
                l.appended(cluster, segment, stored);
            }
        }
        return stored.position();
    }

    Disposable onAppend(MemorySegments.AppendListener listener) {
        listeners.add(listener);
        return () -> listeners.remove(listener);
    }

    /** The local producer's next sequence id. */
    long sequence() {
        return sequence.get();
    }

    /** A replayed or restored sequence: the producer goes on past it. */
    void sequenceSeen(long next) {
        sequence.accumulateAndGet(next, Math::max);
    }
}
