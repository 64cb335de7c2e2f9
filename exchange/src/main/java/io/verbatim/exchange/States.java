package io.verbatim.exchange;

import io.verbatim.exchange.proto.Cell;
import io.verbatim.exchange.proto.TopicState;
import io.verbatim.model.Buckets;
import io.verbatim.model.HashRange;
import io.verbatim.model.Shape;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/** Peer states to and from their wire form, checking everything a peer could get wrong. */
final class States {
    private States() {
    }

    static TopicState toProto(PeerState s) {
        TopicState.Builder b = TopicState.newBuilder().setTopic(s.topic()).setEpoch(s.epoch())
                .setCaps(io.verbatim.exchange.proto.Caps.newBuilder().setMaxSegments(s.caps().maxSegments())
                        .setMaxEntryBucketsPerSegment(s.caps().maxEntryBucketsPerSegment()));
        for (Shape.Cell c : s.shape().cells()) {
            b.addCells(Cell.newBuilder().setStart(c.range().start()).setEnd(c.range().end())
                    .setBuckets(c.buckets().count()));
        }
        s.coldMarks().stream().sorted().forEach(b::addColdMarks);
        return b.build();
    }

    /**
     * A peer state from the wire.
     *
     * @throws ExchangeException 400 naming the topic and what is wrong: ranges off the ring, cells that
     *         do not tile it, bucket counts out of range, missing caps, cold marks that are not boundaries
     */
    static PeerState fromProto(String cluster, TopicState t) {
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
            List<Shape.Cell> cells = new ArrayList<>();
            for (Cell c : t.getCellsList()) {
                if (Integer.toUnsignedLong(c.getStart()) > HashRange.MAX_HASH
                        || Integer.toUnsignedLong(c.getEnd()) > HashRange.MAX_HASH) {
                    throw ExchangeException.badRequest(where + ": cell [" + Integer.toUnsignedString(c.getStart())
                            + ", " + Integer.toUnsignedString(c.getEnd()) + "] is outside the ring 0..65535");
                }
                cells.add(new Shape.Cell(HashRange.of(c.getStart(), c.getEnd()), Buckets.of(c.getBuckets())));
            }
            Shape shape = new Shape(cells);
            Set<Integer> cold = new HashSet<>();
            for (int mark : t.getColdMarksList()) {
                if (!shape.boundaries().contains(mark)) {
                    // A cold mark for a boundary the peer no longer has is harmless: it agrees by absence.
                    continue;
                }
                cold.add(mark);
            }
            Caps caps = new Caps(t.getCaps().getMaxSegments(), t.getCaps().getMaxEntryBucketsPerSegment());
            return new PeerState(cluster, t.getTopic(), t.getEpoch(), shape, cold, caps);
        } catch (IllegalArgumentException e) {
            throw ExchangeException.badRequest(where + ": " + e.getMessage());
        }
    }
}
