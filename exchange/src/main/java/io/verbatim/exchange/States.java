package io.verbatim.exchange;

import io.verbatim.exchange.proto.BucketMark;
import io.verbatim.exchange.proto.Cell;
import io.verbatim.exchange.proto.TopicState;
import io.verbatim.model.Buckets;
import io.verbatim.model.HashRange;
import io.verbatim.model.Layout;
import io.verbatim.model.Segment;
import io.verbatim.model.Shape;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/** Peer states to and from their wire form, checking everything a peer could get wrong. */
final class States {
    /** The largest caps a configuration accepts: a state claiming more is not from a Verbatim cluster. */
    static final int MAX_SEGMENTS_CAP = 1 << 16;

    private States() {
    }

    static TopicState toProto(PeerState s) {
        TopicState.Builder b = TopicState.newBuilder();
        for (Shape.Cell c : s.shape().cells()) {
            b.addCells(Cell.newBuilder().setStart(c.range().start()).setEnd(c.range().end())
                    .setBuckets(c.buckets().count()));
        }
        return rest(b, s.topic(), s.epoch(), s.marks(), s.caps(), s.marksVersion());
    }

    /** {@code PeerState.of(cluster, topic, layout, marks, caps)} on the wire, made from the layout at once. */
    static TopicState toProto(String topic, Layout layout, ColdMarks marks, Caps caps, long marksVersion) {
        TopicState.Builder b = TopicState.newBuilder();
        for (Segment s : layout.activeSegments()) {
            b.addCells(Cell.newBuilder().setStart(s.range().start()).setEnd(s.range().end())
                    .setBuckets(s.buckets().count()));
        }
        return rest(b, topic, layout.epoch(), marks, caps, marksVersion);
    }

    /** The fields after the cells, in order: marks sorted (as {@link ColdMarks} keeps them). */
    private static TopicState rest(TopicState.Builder b, String topic, long epoch, ColdMarks marks, Caps caps,
            long marksVersion) {
        b.setTopic(topic).setEpoch(epoch).setMarksVersion(marksVersion).setCaps(io.verbatim.exchange.proto.Caps.newBuilder()
                .setMaxSegments(caps.maxSegments()).setMaxEntryBucketsPerSegment(caps.maxEntryBucketsPerSegment()));
        for (int boundary : marks.boundaries()) {
            b.addColdMarks(boundary);
        }
        for (Map.Entry<HashRange, Integer> m : marks.buckets().entrySet()) {
            b.addBucketMarks(BucketMark.newBuilder().setStart(m.getKey().start()).setEnd(m.getKey().end())
                    .setBuckets(m.getValue()));
        }
        return b.build();
    }

    /**
     * {@link #fromProto}, answering {@code held} itself when {@code t} describes it exactly (as
     * {@link #toProto} would): a state that did not change since it was checked is not checked and built
     * again, and stays the same object.
     */
    static PeerState fromProto(String cluster, TopicState t, @Nullable PeerState held) {
        if (held == null) {
            return fromProto(cluster, t);
        }
        return describes(t, held) ? held : parse(cluster, t, held.caps());
    }

    /** Whether {@code t} is {@code s} on the wire, field by field, in {@link #toProto}'s order. */
    static boolean describes(TopicState t, PeerState s) {
        if (t.getEpoch() != s.epoch() || t.getMarksVersion() != s.marksVersion() || !t.hasCaps()
                || t.getCaps().getMaxSegments() != s.caps().maxSegments()
                || t.getCaps().getMaxEntryBucketsPerSegment() != s.caps().maxEntryBucketsPerSegment()) {
            return false;
        }
        List<Shape.Cell> cells = s.shape().cells();
        if (t.getCellsCount() != cells.size() || t.getColdMarksCount() != s.marks().boundaries().size()
                || t.getBucketMarksCount() != s.marks().buckets().size()) {
            return false;
        }
        for (int i = 0; i < cells.size(); i++) {
            Cell c = t.getCells(i);
            Shape.Cell mine = cells.get(i);
            if (c.getStart() != mine.range().start() || c.getEnd() != mine.range().end()
                    || c.getBuckets() != mine.buckets().count()) {
                return false;
            }
        }
        int i = 0;
        for (int b : s.marks().boundaries()) {
            if (t.getColdMarks(i++) != b) {
                return false;
            }
        }
        i = 0;
        for (Map.Entry<HashRange, Integer> m : s.marks().buckets().entrySet()) {
            BucketMark mark = t.getBucketMarks(i++);
            if (mark.getStart() != m.getKey().start() || mark.getEnd() != m.getKey().end()
                    || mark.getBuckets() != m.getValue()) {
                return false;
            }
        }
        return t.getTopic().equals(s.topic());
    }

    /**
     * A peer state from the wire, checked whole.
     *
     * @throws ExchangeException 400 naming the topic and what is wrong: ranges off the ring, cells that
     *         do not tile it, bucket counts that are not powers of two within range, missing or
     *         impossible caps, bucket marks that do not lower one of the sender's cells
     */
    static PeerState fromProto(String cluster, TopicState t) {
        return parse(cluster, t, null);
    }

    /** {@link #fromProto}, the caps {@code known} when they are equal (one object for a peer's many states). */
    private static PeerState parse(String cluster, TopicState t, @Nullable Caps known) {
        String where = "topic '" + t.getTopic() + "' from " + cluster;
        if (t.getTopic().isEmpty()) {
            throw ExchangeException.badRequest("a topic state from " + cluster + " has no topic name");
        }
        if (t.getEpoch() < 0) {
            throw ExchangeException.badRequest(where + ": epoch " + Long.toUnsignedString(t.getEpoch()) + " is too large");
        }
        if (!t.hasCaps()) {
            throw ExchangeException.badRequest(where + ": caps are missing");
        }
        try {
            Caps caps = caps(t.getCaps());
            caps = known != null && caps.equals(known) ? known : caps;
            List<Shape.Cell> cells = new ArrayList<>(t.getCellsCount());
            for (Cell c : t.getCellsList()) {
                cells.add(new Shape.Cell(range(c.getStart(), c.getEnd(), "cell"), Buckets.of(c.getBuckets())));
            }
            Shape shape = new Shape(cells);
            Set<Integer> cold = new HashSet<>();
            for (int mark : t.getColdMarksList()) {
                // A cold mark for a boundary the peer no longer has is harmless: it agrees by absence.
                if (shape.boundaries().contains(mark)) {
                    cold.add(mark);
                }
            }
            Map<HashRange, Integer> lowerings = bucketMarks(t, shape);
            ColdMarks marks = cold.isEmpty() && lowerings.isEmpty() ? ColdMarks.NONE : new ColdMarks(cold, lowerings);
            return new PeerState(cluster, t.getTopic(), t.getEpoch(), shape, marks, caps, t.getMarksVersion());
        } catch (IllegalArgumentException e) {
            throw ExchangeException.badRequest(where + ": " + e.getMessage());
        }
    }

    private static Caps caps(io.verbatim.exchange.proto.Caps c) {
        if (Integer.toUnsignedLong(c.getMaxSegments()) > MAX_SEGMENTS_CAP) {
            throw new IllegalArgumentException("caps.maxSegments " + Integer.toUnsignedString(c.getMaxSegments())
                    + " is above " + MAX_SEGMENTS_CAP);
        }
        return new Caps(c.getMaxSegments(), c.getMaxEntryBucketsPerSegment());
    }

    private static Map<HashRange, Integer> bucketMarks(TopicState t, Shape shape) {
        Map<HashRange, Integer> marks = new HashMap<>();
        for (BucketMark m : t.getBucketMarksList()) {
            HashRange r = range(m.getStart(), m.getEnd(), "bucket mark");
            Shape.Cell cell = shape.cellAt(r.start());
            if (!cell.range().equals(r)) {
                continue; // a mark for a range the peer no longer has as one cell: nothing to agree on
            }
            if (!Buckets.isValidCount(m.getBuckets())) {
                throw new IllegalArgumentException("bucket mark " + r.toHexString() + " to " + m.getBuckets()
                        + " is not a power of two within 1.." + Buckets.MAX_COUNT);
            }
            marks.put(r, m.getBuckets()); // kept even when the peer already meets it: its intent still counts
        }
        return marks;
    }

    private static HashRange range(int start, int end, String what) {
        if (Integer.toUnsignedLong(start) > HashRange.MAX_HASH || Integer.toUnsignedLong(end) > HashRange.MAX_HASH) {
            throw new IllegalArgumentException(what + " [" + Integer.toUnsignedString(start) + ", "
                    + Integer.toUnsignedString(end) + "] is outside the ring 0..65535");
        }
        return HashRange.of(start, end);
    }
}
