package io.verbatim.embedded;

import io.verbatim.model.Layout;
import io.verbatim.model.Segment;
import io.verbatim.pipeline.DestinationState;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * What a {@link MemorySegments} holds of its topic, as values: its layout, every segment's entries and
 * cursors, and the destination side's deduplication and session state. What a node writes down when it
 * stops cleanly and reads back when it starts ({@link MemorySegments#image()}, {@link MemorySegments#restore}),
 * so a restart neither loses what was stored nor takes a replicator's repeat for a new entry.
 *
 * @param destinations by {@code <segment id>/<producer name>}
 * @param sessionIds the last session id handed out: sessions after a restart fence every earlier one
 * @param sequence the local producer's next sequence id
 */
public record ClusterImage(Layout layout, List<SegmentImage> segments, Map<String, DestinationState> destinations,
        long sessionIds, long sequence) {

    public ClusterImage {
        segments = List.copyOf(segments);
        destinations = Map.copyOf(destinations);
        for (SegmentImage s : segments) {
            if (layout.segment(s.segmentId()).isEmpty()) {
                throw new IllegalArgumentException("segment " + s.segmentId() + " is not in the layout at epoch "
                        + layout.epoch());
            }
        }
    }

    /** The image of a topic that a journal's {@code created} record starts: its layout, every segment empty. */
    static ClusterImage created(Journal.Record.TopicCreated created) {
        List<SegmentImage> segments = new ArrayList<>();
        for (Segment s : created.layout().segments().values()) {
            Long ledger = created.ledgers().get(s.id());
            if (ledger == null) {
                throw new IllegalStateException(created.topic() + ": the journal creates segment " + s.id()
                        + " without a ledger");
            }
            segments.add(new SegmentImage(s.id(), 0, s.isSealed(), List.of(), Map.of(),
                    List.of(new Ledger(ledger, 0))));
        }
        return new ClusterImage(created.layout(), segments, Map.of(), 0, 0);
    }

    /**
     * One segment's log.
     *
     * @param firstEntryId the index of the oldest entry kept (those before it were consumed and dropped)
     * @param entries the stored bytes of entries {@code firstEntryId, firstEntryId + 1, …}
     * @param cursors each cursor's last acknowledged index ({@code -1}: none yet)
     * @param ledgers the segment's ledgers, in order: where each starts (an index); the last one is open
     */
    public record SegmentImage(long segmentId, long firstEntryId, boolean sealed, List<ByteBuffer> entries,
            Map<String, Long> cursors, List<Ledger> ledgers) {
        public SegmentImage {
            if (firstEntryId < 0) {
                throw new IllegalArgumentException("segment " + segmentId + ": first entry id " + firstEntryId
                        + " is negative");
            }
            entries = List.copyOf(entries);
            cursors = Map.copyOf(cursors);
            ledgers = List.copyOf(ledgers);
            if (ledgers.isEmpty() || ledgers.get(0).firstIndex() != 0) {
                throw new IllegalArgumentException("segment " + segmentId + ": its ledgers " + ledgers
                        + " do not start at index 0");
            }
            for (int k = 1; k < ledgers.size(); k++) {
                Ledger before = ledgers.get(k - 1);
                Ledger l = ledgers.get(k);
                if (l.ledgerId() <= before.ledgerId() || l.firstIndex() <= before.firstIndex()) {
                    throw new IllegalArgumentException("segment " + segmentId + ": ledger " + l + " does not follow "
                            + before);
                }
            }
            if (ledgers.get(ledgers.size() - 1).firstIndex() > firstEntryId + entries.size()) {
                throw new IllegalArgumentException("segment " + segmentId + ": its last ledger starts past its "
                        + (firstEntryId + entries.size()) + " entries");
            }
        }

        /** A segment with one ledger, numbered as the segment (what images of format 1 held). */
        public SegmentImage(long segmentId, long firstEntryId, boolean sealed, List<ByteBuffer> entries,
                Map<String, Long> cursors) {
            this(segmentId, firstEntryId, sealed, entries, cursors, List.of(new Ledger(segmentId, 0)));
        }
    }

    /** A ledger of a segment: its id, and the index of its first entry in the segment. */
    public record Ledger(long ledgerId, long firstIndex) {
        public Ledger {
            if (ledgerId < 0 || firstIndex < 0) {
                throw new IllegalArgumentException("ledger " + ledgerId + " at index " + firstIndex + " is negative");
            }
        }
    }
}
