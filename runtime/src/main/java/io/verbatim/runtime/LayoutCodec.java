package io.verbatim.runtime;

import io.verbatim.model.Buckets;
import io.verbatim.model.HashRange;
import io.verbatim.model.Layout;
import io.verbatim.model.Segment;
import io.verbatim.model.SegmentState;
import io.verbatim.runtime.proto.LayoutRecord;
import io.verbatim.runtime.proto.SegmentRecord;
import java.util.ArrayList;
import java.util.List;

/** A layout on the wire: every segment with its lineage, so the receiver holds the same DAG. */
final class LayoutCodec {
    private LayoutCodec() {
    }

    static LayoutRecord toProto(String topic, Layout layout, List<String> brokerUrls) {
        LayoutRecord.Builder b = LayoutRecord.newBuilder().setTopic(topic).setEpoch(layout.epoch())
                .setNextSegmentId(layout.nextSegmentId()).addAllBrokerUrls(brokerUrls);
        for (Segment s : layout.segments().values()) {
            b.addSegments(SegmentRecord.newBuilder().setId(s.id()).setStart(s.range().start()).setEnd(s.range().end())
                    .setSealed(s.isSealed()).addAllParents(s.parentIds()).addAllChildren(s.childIds())
                    .setCreatedAtEpoch(s.createdAtEpoch()).setSealedAtEpoch(s.sealedAtEpoch())
                    .setCreatedAtMs(s.createdAtMs()).setSealedAtMs(s.sealedAtMs()).setBuckets(s.buckets().count()));
        }
        return b.build();
    }

    /** @throws IllegalArgumentException when the record is not a valid layout (it names what is wrong) */
    static Layout fromProto(LayoutRecord r) {
        List<Segment> segments = new ArrayList<>();
        for (SegmentRecord s : r.getSegmentsList()) {
            segments.add(new Segment(s.getId(), HashRange.of(s.getStart(), s.getEnd()),
                    s.getSealed() ? SegmentState.SEALED : SegmentState.ACTIVE, s.getParentsList(), s.getChildrenList(),
                    s.getCreatedAtEpoch(), s.getSealedAtEpoch(), s.getCreatedAtMs(), s.getSealedAtMs(),
                    Buckets.of(s.getBuckets())));
        }
        return Layout.of(r.getEpoch(), r.getNextSegmentId(), segments);
    }
}
