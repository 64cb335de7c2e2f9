package io.verbatim.model;

import io.verbatim.model.proto.LayoutProto;
import io.verbatim.model.proto.SegmentRecord;
import java.util.ArrayList;
import java.util.List;

/** A layout as Protobuf ({@code layout.proto}) and back: every segment with its lineage. */
public final class LayoutCodec {
    private LayoutCodec() {
    }

    public static SegmentRecord toProto(Segment s) {
        return SegmentRecord.newBuilder().setId(s.id()).setStart(s.range().start()).setEnd(s.range().end())
                .setSealed(s.isSealed()).addAllParents(s.parentIds()).addAllChildren(s.childIds())
                .setCreatedAtEpoch(s.createdAtEpoch()).setSealedAtEpoch(s.sealedAtEpoch())
                .setCreatedAtMs(s.createdAtMs()).setSealedAtMs(s.sealedAtMs()).setBuckets(s.buckets().count()).build();
    }

    public static LayoutProto toProto(Layout layout) {
        LayoutProto.Builder b = LayoutProto.newBuilder().setEpoch(layout.epoch()).setNextSegmentId(layout.nextSegmentId());
        for (Segment s : layout.segments().values()) {
            b.addSegments(toProto(s));
        }
        return b.build();
    }

    /** @throws IllegalArgumentException when the record is not a valid segment (it names what is wrong) */
    public static Segment fromProto(SegmentRecord s) {
        return new Segment(s.getId(), HashRange.of(s.getStart(), s.getEnd()),
                s.getSealed() ? SegmentState.SEALED : SegmentState.ACTIVE, s.getParentsList(), s.getChildrenList(),
                s.getCreatedAtEpoch(), s.getSealedAtEpoch(), s.getCreatedAtMs(), s.getSealedAtMs(),
                Buckets.of(s.getBuckets()));
    }

    /** @throws IllegalArgumentException when the record is not a valid layout (it names what is wrong) */
    public static Layout fromProto(LayoutProto layout) {
        return fromProto(layout.getEpoch(), layout.getNextSegmentId(), layout.getSegmentsList());
    }

    /** A layout from its parts, as records that embed the segments (the runtime's wire and state files) hold them. */
    public static Layout fromProto(long epoch, long nextSegmentId, List<SegmentRecord> records) {
        List<Segment> segments = new ArrayList<>(records.size());
        for (SegmentRecord s : records) {
            segments.add(fromProto(s));
        }
        return Layout.of(epoch, nextSegmentId, segments);
    }
}
