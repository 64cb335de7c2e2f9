package io.verbatim.runtime.storage;

import io.verbatim.model.Layout;
import io.verbatim.model.LayoutCodec;
import io.verbatim.model.Segment;
import io.verbatim.runtime.proto.LayoutRecord;
import java.util.List;

/**
 * A topic's layout as a {@code LayoutRecord}, on the ingest wire and in state files: the model's
 * {@link LayoutCodec} encoding of its segments, with the topic and its brokers.
 */
public final class LayoutRecords {
    private LayoutRecords() {
    }

    public static LayoutRecord toProto(String topic, Layout layout, List<String> brokerUrls) {
        LayoutRecord.Builder b = LayoutRecord.newBuilder().setTopic(topic).setEpoch(layout.epoch())
                .setNextSegmentId(layout.nextSegmentId()).addAllBrokerUrls(brokerUrls);
        for (Segment s : layout.segments().values()) {
            b.addSegments(LayoutCodec.toProto(s));
        }
        return b.build();
    }

    /** @throws IllegalArgumentException when the record is not a valid layout (it names what is wrong) */
    public static Layout fromProto(LayoutRecord r) {
        return LayoutCodec.fromProto(r.getEpoch(), r.getNextSegmentId(), r.getSegmentsList());
    }
}
