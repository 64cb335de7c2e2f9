package io.verbatim.model.entry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.ByteString;
import com.google.protobuf.UnknownFieldSet;
import io.verbatim.model.Property;
import io.verbatim.model.proto.CompressionType;
import io.verbatim.model.proto.KeyValue;
import io.verbatim.model.proto.MessageMetadata;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

class RestampTest {
    private static final MessageMetadata TEMPLATE = MessageMetadata.newBuilder().setProducerName("p")
            .setSequenceId(7).setPublishTime(1).setTxnidLeastBits(5).setTxnidMostBits(6).build();

    private static Entry randomEntry(Random r) {
        List<Message> messages = Sample.randomBatch(r, 1 + r.nextInt(30), r.nextInt(3000)).stream()
                .map(Sample::toMessage).toList();
        CompressionType codec = CompressionType.forNumber(r.nextInt(5));
        return Entries.batch(TEMPLATE, messages, codec);
    }

    @Test
    void derivedChecksumEqualsAFreshOneOverTheNewBytes() {
        Property.forAll("restamp checksum", 0x5eed_0200L, 500, r -> {
            Entry entry = randomEntry(r);
            Entry restamped = entry.restamp(new ReplicationStamp("c" + r.nextInt(5),
                    new SourcePosition(r.nextInt(1 << 20), r.nextInt(1 << 20), r.nextInt(4) - 1)));
            byte[] bytes = restamped.toByteArray();
            // Entry.parse recomputes CRC32C over every byte and compares.
            Entry reparsed = Entry.parse(ByteBuffer.wrap(bytes));
            assertThat(reparsed.checksum()).isEqualTo(restamped.checksum());
            assertThat(reparsed.payload()).isEqualTo(entry.payload());
        });
    }

    @Test
    void restampSharesThePayloadBytesInsteadOfCopyingThem() {
        Entry entry = randomEntry(new Random(1));
        byte[] stored = entry.toByteArray();
        ByteBuffer storedView = ByteBuffer.wrap(stored);
        Entry parsed = Entry.parseUnverified(storedView);
        Entry restamped = parsed.restamp(new ReplicationStamp("east", SourcePosition.of(3, 4)));
        int payloadOffset = stored.length - parsed.payload().remaining();
        stored[payloadOffset] ^= 0x5a; // a change to the stored bytes shows through: the same memory
        assertThat(restamped.payload().get(0)).isEqualTo(stored[payloadOffset]);
        assertThat(restamped.buffers()[2]).isEqualTo(ByteBuffer.wrap(stored, payloadOffset,
                stored.length - payloadOffset));
    }

    @Test
    void restampNeverDecompressesSoAnUndecodablePayloadPassesThroughUnchanged() {
        byte[] garbage = new byte[500];
        new Random(2).nextBytes(garbage);
        MessageMetadata md = TEMPLATE.toBuilder().setCompression(CompressionType.LZ4).setUncompressedSize(100_000)
                .setNumMessagesInBatch(3).build();
        Entry entry = Entry.of(md, ByteBuffer.wrap(garbage));
        Entry restamped = Entry.parseUnverified(ByteBuffer.wrap(entry.toByteArray()))
                .restamp(new ReplicationStamp("east", SourcePosition.of(1, 2)));
        assertThat(restamped.payload()).isEqualTo(ByteBuffer.wrap(garbage));
        assertThat(Entry.parse(ByteBuffer.wrap(restamped.toByteArray())).metadata().getReplicatedFrom())
                .isEqualTo("east");
    }

    @Test
    void aCorruptPayloadStaysDetectableAfterARestamp() {
        byte[] stored = randomEntry(new Random(3)).toByteArray();
        stored[stored.length - 1] ^= 1;
        Entry restamped = Entry.parseUnverified(ByteBuffer.wrap(stored))
                .restamp(new ReplicationStamp("east", SourcePosition.of(1, 2)));
        assertThatThrownBy(() -> Entry.parse(ByteBuffer.wrap(restamped.toByteArray())))
                .isInstanceOfSatisfying(EntryFormatException.class,
                        e -> assertThat(e.problem()).isEqualTo(EntryFormatException.Problem.CHECKSUM_MISMATCH));
    }

    @Test
    void restampSetsTheOriginReplacesAStalePositionAndClearsTransactionIds() {
        MessageMetadata md = TEMPLATE.toBuilder().addProperties(KeyValue.newBuilder()
                .setKey(ReplicationStamp.SOURCE_POSITION_PROPERTY).setValue("1:1")).addProperties(KeyValue.newBuilder()
                .setKey("app").setValue("x")).build();
        Entry entry = Entries.single(md, ByteBuffer.wrap(new byte[] {1, 2, 3}), CompressionType.NONE);
        Entry restamped = entry.restamp(new ReplicationStamp("west", new SourcePosition(9, 8, 2)));
        assertThat(restamped.isReplicated()).isTrue();
        assertThat(restamped.metadata().getReplicatedFrom()).isEqualTo("west");
        assertThat(restamped.sourcePosition()).contains(new SourcePosition(9, 8, 2));
        assertThat(restamped.metadata().getPropertiesList()).extracting(KeyValue::getKey)
                .containsExactly("app", ReplicationStamp.SOURCE_POSITION_PROPERTY);
        assertThat(restamped.metadata().hasTxnidLeastBits()).isFalse();
        assertThat(restamped.metadata().hasTxnidMostBits()).isFalse();
        assertThat(restamped.metadata().getEntryHashMin()).isEqualTo(entry.metadata().getEntryHashMin());
    }

    @Test
    void unknownFutureFieldsSurviveARestamp() {
        // Field 32 (schema_id in Pulsar 5.0) is unknown here: it must be carried, not dropped.
        MessageMetadata md = TEMPLATE.toBuilder().setUnknownFields(UnknownFieldSet.newBuilder()
                .addField(32, UnknownFieldSet.Field.newBuilder()
                        .addLengthDelimited(ByteString.copyFromUtf8("schema-7")).build())
                .build()).build();
        Entry entry = Entry.of(md, ByteBuffer.wrap(new byte[] {9}));
        Entry restamped = entry.restamp(new ReplicationStamp("east", SourcePosition.of(1, 1)));
        Entry reparsed = Entry.parse(ByteBuffer.wrap(restamped.toByteArray()));
        assertThat(reparsed.metadata().getUnknownFields().hasField(32)).isTrue();
    }
}
