package io.verbatim.pulsar;

import static org.assertj.core.api.Assertions.assertThat;

import io.verbatim.model.Stamp;
import io.verbatim.model.entry.Entry;
import io.verbatim.model.entry.SourcePosition;
import io.verbatim.model.proto.MessageMetadata;
import java.nio.ByteBuffer;
import org.apache.pulsar.shade.io.netty.buffer.ByteBuf;
import org.apache.pulsar.shade.io.netty.buffer.Unpooled;
import org.junit.jupiter.api.Test;

/** What the Pulsar 4.0 client's metadata keeps of Verbatim's. */
class PulsarMetadataTest {

    @Test
    void pulsar40DropsTheStampFieldsSoThePropertyCarriesTheStamp() throws Exception {
        MessageMetadata md = MessageMetadata.newBuilder().setProducerName("app").setSequenceId(7).setPublishTime(1)
                .setNumMessagesInBatch(3).setEntryHashMin(100).setEntryHashMax(200).setReplicatedFrom("east").build();
        Entry entry = Entry.of(md, ByteBuffer.wrap(new byte[] {1, 2, 3}));

        org.apache.pulsar.common.api.proto.MessageMetadata pulsar = PulsarMetadata.of(entry);
        ByteBuf out = Unpooled.buffer();
        pulsar.writeTo(out);
        byte[] bytes = new byte[out.readableBytes()];
        out.readBytes(bytes);
        MessageMetadata back = MessageMetadata.parseFrom(bytes);

        // Pinned: Pulsar 4.0.7 re-encodes without fields 33/34. If this fails, the client keeps them now.
        assertThat(back.hasEntryHashMin()).isFalse();
        assertThat(back.getPropertiesList()).anyMatch(kv -> kv.getKey().equals(Stamp.PROPERTY)
                && kv.getValue().equals("100-200"));
        assertThat(Entry.of(back, ByteBuffer.wrap(new byte[] {1, 2, 3})).facts().stamp())
                .contains(new Stamp(100, 200));
        assertThat(back.getProducerName()).isEqualTo("app");
        assertThat(back.getSequenceId()).isEqualTo(7);
        assertThat(back.getNumMessagesInBatch()).isEqualTo(3);
        assertThat(back.getReplicatedFrom()).isEqualTo("east");
    }

    @Test
    void anUnstampedEntryGetsNoProperty() {
        MessageMetadata md = MessageMetadata.newBuilder().setProducerName("app").setSequenceId(1).setPublishTime(1)
                .build();
        assertThat(PulsarMetadata.of(Entry.of(md, ByteBuffer.allocate(0))).getPropertiesCount()).isZero();
    }

    @Test
    void theSourcePositionReadsBackAsItWasSentWholeOrAsAPart() {
        MessageMetadata md = MessageMetadata.newBuilder().setProducerName("app").setSequenceId(1).setPublishTime(1)
                .setReplicatedFrom("east").build();
        Entry entry = Entry.of(md, ByteBuffer.allocate(0));
        SourcePosition whole = SourcePosition.of(7, 40);
        SourcePosition part = SourcePosition.of(7, 41).withPart(2);
        assertThat(PulsarMetadata.sourcePosition(PulsarMetadata.of(entry, WirePositions.encode(whole))))
                .contains(whole);
        assertThat(PulsarMetadata.sourcePosition(PulsarMetadata.of(entry, WirePositions.encode(part)))).contains(part);
        assertThat(PulsarMetadata.sourcePosition(PulsarMetadata.of(entry))).as("none set").isEmpty();
    }
}
