package io.verbatim.runtime.storage;

import io.verbatim.model.Layout;
import io.verbatim.model.Segment;
import io.verbatim.runtime.proto.LayoutRecord;
import java.util.List;

/** A topic's layout on the ingest wire and in state files: the model's encoding, with the topic and brokers. */
public final class LayoutCodec {
    private LayoutCodec() {
    }

    public static LayoutRecord toProto(String topic, Layout layout, List<String> brokerUrls) {
        LayoutRecord.Builder b = LayoutRecord.newBuilder().setTopic(topic).setEpoch(layout.epoch())
                .setNextSegmentId(layout.nextSegmentId()).addAllBrokerUrls(brokerUrls);
        for (Segment s : layout.segments().values()) {
            b.addSegments(io.verbatim.model.LayoutCodec.toProto(s));
        }
        return b.build();
    }

    /** @throws IllegalArgumentException when the record is not a valid layout (it names what is wrong) */
    public static Layout fromProto(LayoutRecord r) {
        return io.verbatim.model.LayoutCodec.fromProto(r.getEpoch(), r.getNextSegmentId(), r.getSegmentsList());
    }
}
