package io.verbatim.runtime.storage;

import com.google.protobuf.ByteString;
import com.google.protobuf.UnsafeByteOperations;
import io.verbatim.embedded.ClusterImage;
import io.verbatim.model.entry.SourcePosition;
import io.verbatim.pipeline.DestinationState;
import io.verbatim.runtime.proto.DestinationRecord;
import io.verbatim.runtime.proto.EntriesChunk;
import io.verbatim.runtime.proto.Ledger;
import io.verbatim.runtime.proto.Position;
import io.verbatim.runtime.proto.SegmentImage;
import io.verbatim.runtime.proto.StateFooter;
import io.verbatim.runtime.proto.StateHeader;
import io.verbatim.runtime.proto.StateRecord;
import io.verbatim.runtime.proto.TopicImage;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Topic images ({@link ClusterImage}) as bytes: a stream of length-delimited {@code StateRecord}s
 * ({@code runtime/src/main/proto/state.proto}) — a header naming the cluster, per topic its image and its
 * segments with their entries in chunks, a footer counting the records, so a truncated stream is told
 * from a whole one. What a node writes to its data directory at a clean stop, and what the admin endpoint
 * {@code GET /admin/v2/scalable/image?topic=T} answers.
 */
public final class StateFormat {
    /** Format 2 adds ledgers, the journal's sequence numbers and the ledger counter; format 1 is still read. */
    static final int FORMAT = 2;
    /** Entries per chunk record, so that no record nears protobuf's 2 GiB limit. */
    private static final int CHUNK_BYTES = 16 << 20;

    private StateFormat() {
    }

    /**
     * What a data directory's checkpoint holds: every topic's image, the journal sequence number each holds its
     * topic's records up to, and the node's counters.
     *
     * @param journalSequences by topic
     * @param nextLedgerId the next ledger id the node hands out (0: not known, format 1)
     * @param nextJournalSequence the journal's next sequence number (0: not known, format 1)
     */
    public record Checkpoint(Map<String, ClusterImage> images, Map<String, Long> journalSequences, long nextLedgerId,
            long nextJournalSequence) {
        public Checkpoint {
            images = Collections.unmodifiableMap(new LinkedHashMap<>(images));
            journalSequences = Map.copyOf(journalSequences);
        }
    }

    /** Writes {@code topics}' images as {@code cluster}'s, taken at {@code writtenAtMs}. */
    public static void write(OutputStream out, String cluster, Map<String, ClusterImage> topics, long writtenAtMs)
            throws IOException {
        write(out, cluster, new Checkpoint(topics, Map.of(), 0, 0), writtenAtMs);
    }

    /** Writes {@code checkpoint} as {@code cluster}'s, taken at {@code writtenAtMs}. */
    public static void write(OutputStream out, String cluster, Checkpoint checkpoint, long writtenAtMs)
            throws IOException {
        long records = 0;
        record(out, StateRecord.newBuilder().setHeader(StateHeader.newBuilder().setFormat(FORMAT)
                .setCluster(cluster).setWrittenAtMs(writtenAtMs).setNextLedgerId(checkpoint.nextLedgerId())
                .setNextJournalSequence(checkpoint.nextJournalSequence())).build());
        records++;
        for (Map.Entry<String, ClusterImage> t : checkpoint.images().entrySet()) {
            records += write(out, t.getKey(), t.getValue(), checkpoint.journalSequences().getOrDefault(t.getKey(), 0L));
        }
        record(out, StateRecord.newBuilder().setFooter(StateFooter.newBuilder().setRecords(records).build())
                .build());
    }

    /**
     * Reads images written by {@link #write}.
     *
     * @param cluster the cluster they must be of
     * @throws IOException when the stream is not a whole, well-formed image of {@code cluster} (naming why)
     */
    public static Map<String, ClusterImage> read(InputStream in, String cluster) throws IOException {
        return readCheckpoint(in, cluster).images();
    }

    /**
     * Reads a checkpoint written by {@link #write} (format 1 or 2).
     *
     * @throws IOException when the stream is not a whole, well-formed image of {@code cluster} (naming why)
     */
    public static Checkpoint readCheckpoint(InputStream in, String cluster) throws IOException {
        try {
            return parse(cluster, in);
        } catch (IllegalArgumentException e) {
            throw new IOException(e.getMessage(), e);
        }
    }

    private static Checkpoint parse(String cluster, InputStream in) throws IOException {
        StateRecord first = StateRecord.parseDelimitedFrom(in);
        if (first == null || !first.hasHeader()) {
            throw new IOException("no header");
        }
        StateHeader header = first.getHeader();
        if (header.getFormat() != FORMAT && header.getFormat() != 1) {
            throw new IOException("format " + header.getFormat() + " is not one this version reads (1, " + FORMAT + ")");
        }
        if (!header.getCluster().equals(cluster)) {
            throw new IOException("it is cluster " + header.getCluster() + "'s, not " + cluster + "'s");
        }
        Map<String, ClusterImage> out = new LinkedHashMap<>();
        Map<String, Long> sequences = new LinkedHashMap<>();
        long records = 1;
        TopicImage topic = null;
        List<ClusterImage.SegmentImage> segments = new ArrayList<>();
        SegmentImage segment = null;
        List<ByteBuffer> entries = new ArrayList<>();
        while (true) {
            StateRecord r = StateRecord.parseDelimitedFrom(in);
            if (r == null) {
                throw new IOException("it ends before its footer (truncated)");
            }
            if (r.hasEntries()) {
                if (segment == null) {
                    throw new IOException("entries before any segment");
                }
                r.getEntries().getEntriesList().forEach(b -> entries.add(b.asReadOnlyByteBuffer()));
            } else {
                if (segment != null) {
                    segments.add(segment(segment, entries));
                    segment = null;
                    entries.clear();
                }
                if (r.hasSegment()) {
                    if (topic == null) {
                        throw new IOException("a segment before any topic");
                    }
                    segment = r.getSegment();
                } else {
                    if (topic != null) {
                        out.put(topic.getTopic(), image(topic, segments));
                        sequences.put(topic.getTopic(), topic.getJournalSequence());
                        segments.clear();
                    }
                    topic = r.hasTopic() ? r.getTopic() : null;
                    if (r.hasFooter()) {
                        if (r.getFooter().getRecords() != records) {
                            throw new IOException("its footer counts " + r.getFooter().getRecords() + " records, "
                                    + records + " were read");
                        }
                        return new Checkpoint(out, sequences, header.getNextLedgerId(),
                                header.getNextJournalSequence());
                    }
                    if (topic == null) {
                        throw new IOException("record " + records + " is of no known kind");
                    }
                }
            }
            records++;
        }
    }

    private static ClusterImage.SegmentImage segment(SegmentImage s, List<ByteBuffer> entries) {
        if (s.getLedgersCount() == 0) { // format 1: one ledger, numbered as the segment
            return new ClusterImage.SegmentImage(s.getSegmentId(), s.getFirstEntryId(), s.getSealed(), entries,
                    s.getCursorsMap());
        }
        return new ClusterImage.SegmentImage(s.getSegmentId(), s.getFirstEntryId(), s.getSealed(), entries,
                s.getCursorsMap(), s.getLedgersList().stream().map(l -> new ClusterImage.Ledger(l.getLedgerId(),
                        l.getFirstIndex())).toList());
    }

    private static ClusterImage image(TopicImage t, List<ClusterImage.SegmentImage> segments) {
        Map<String, DestinationState> destinations = new LinkedHashMap<>();
        for (DestinationRecord d : t.getDestinationsList()) {
            destinations.put(d.getKey(), new DestinationState(
                    d.hasPushed() ? Optional.of(position(d.getPushed())) : Optional.empty(),
                    d.hasPersisted() ? Optional.of(position(d.getPersisted())) : Optional.empty(), d.getSession(),
                    d.getExpectedSequence(),
                    d.getPoisoned()));
        }
        return new ClusterImage(LayoutRecords.fromProto(t.getLayout()), segments, destinations, t.getSessionIds(),
                t.getSequence());
    }

    private static long write(OutputStream out, String topic, ClusterImage image, long journalSequence)
            throws IOException {
        TopicImage.Builder t = TopicImage.newBuilder().setTopic(topic)
                .setLayout(LayoutRecords.toProto(topic, image.layout(), List.of()))
                .setSessionIds(image.sessionIds()).setSequence(image.sequence()).setJournalSequence(journalSequence);
        image.destinations().forEach((key, d) -> {
            DestinationRecord.Builder r = DestinationRecord.newBuilder().setKey(key).setSession(d.session())
                    .setExpectedSequence(d.expectedSequence()).setPoisoned(d.poisoned());
            d.pushed().ifPresent(p -> r.setPushed(position(p)));
            d.persisted().ifPresent(p -> r.setPersisted(position(p)));
            t.addDestinations(r);
        });
        record(out, StateRecord.newBuilder().setTopic(t).build());
        long records = 1;
        for (ClusterImage.SegmentImage s : image.segments()) {
            SegmentImage.Builder segment = SegmentImage.newBuilder().setSegmentId(s.segmentId())
                    .setFirstEntryId(s.firstEntryId()).setSealed(s.sealed()).putAllCursors(s.cursors());
            s.ledgers().forEach(l -> segment.addLedgers(Ledger.newBuilder().setLedgerId(l.ledgerId())
                    .setFirstIndex(l.firstIndex())));
            record(out, StateRecord.newBuilder().setSegment(segment).build());
            records++;
            EntriesChunk.Builder chunk = EntriesChunk.newBuilder();
            long bytes = 0;
            for (ByteBuffer e : s.entries()) {
                chunk.addEntries(bytes(e));
                bytes += e.remaining();
                if (bytes >= CHUNK_BYTES) {
                    record(out, StateRecord.newBuilder().setEntries(chunk).build());
                    records++;
                    chunk = EntriesChunk.newBuilder();
                    bytes = 0;
                }
            }
            if (chunk.getEntriesCount() > 0) {
                record(out, StateRecord.newBuilder().setEntries(chunk).build());
                records++;
            }
        }
        return records;
    }

    private static ByteString bytes(ByteBuffer b) {
        return UnsafeByteOperations.unsafeWrap(b.duplicate()); // stored entries never change
    }

    private static void record(OutputStream out, StateRecord r) throws IOException {
        r.writeDelimitedTo(out);
    }

    static Position position(SourcePosition p) {
        return Position.newBuilder().setLedgerId(p.ledgerId()).setEntryId(p.entryId()).setPart(p.part()).build();
    }

    static SourcePosition position(Position p) {
        return new SourcePosition(p.getLedgerId(), p.getEntryId(), p.getPart());
    }
}
