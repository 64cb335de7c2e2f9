package io.verbatim.model.entry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.verbatim.model.Stamp;
import io.verbatim.model.entry.EntryFormatException.Problem;
import io.verbatim.model.proto.CompressionType;
import io.verbatim.model.proto.KeyValue;
import io.verbatim.model.proto.MessageMetadata;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.zip.CRC32C;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.Test;

/** Every kind of bad input gives a typed error that names what was wrong; nothing is half read. */
class EntryErrorsTest {
    private static final MessageMetadata TEMPLATE = MessageMetadata.newBuilder().setProducerName("p")
            .setSequenceId(1).setPublishTime(2).build();

    private static byte[] batchBytes(CompressionType codec) {
        List<Message> messages = Sample.randomBatch(new Random(5), 10, 200).stream().map(Sample::toMessage).toList();
        return Entries.batch(TEMPLATE, messages, codec).toByteArray();
    }

    @Test
    void badMagic() {
        byte[] bytes = batchBytes(CompressionType.NONE);
        bytes[1] = 0x07;
        assertProblem(() -> Entry.parse(ByteBuffer.wrap(bytes)), Problem.BAD_MAGIC, "expected magic 0x0e01",
                "found 0x0e07");
    }

    @Test
    void checksumMismatchAnywhereAfterTheChecksum() {
        byte[] good = batchBytes(CompressionType.LZ4);
        for (int i = 6; i < good.length; i += 7) {
            byte[] bad = good.clone();
            bad[i] ^= 0x10;
            assertProblem(() -> Entry.parse(ByteBuffer.wrap(bad)), Problem.CHECKSUM_MISMATCH, "stored CRC32C");
        }
    }

    @Test
    void everyTruncationIsReportedNeverHalfRead() {
        byte[] good = batchBytes(CompressionType.ZSTD);
        for (int length = 0; length < good.length; length++) {
            ByteBuffer cut = ByteBuffer.wrap(Arrays.copyOf(good, length));
            assertThatThrownBy(() -> {
                Entry e = Entry.parse(cut);
                Entries.messages(e);
            }).isInstanceOf(EntryFormatException.class)
                    .satisfies(t -> assertThat(((EntryFormatException) t).problem())
                            .isIn(Problem.TRUNCATED, Problem.CHECKSUM_MISMATCH, Problem.MALFORMED_METADATA));
        }
    }

    @Test
    void truncationWithoutChecksumVerificationIsStillCaught() {
        byte[] good = batchBytes(CompressionType.SNAPPY);
        for (int length = 0; length < good.length; length++) {
            ByteBuffer cut = ByteBuffer.wrap(Arrays.copyOf(good, length));
            assertThatThrownBy(() -> Entries.messages(Entry.parseUnverified(cut)))
                    .isInstanceOf(EntryFormatException.class);
        }
    }

    @Test
    void unknownCodec() {
        // The template's bytes plus field 8 (compression) = 9, which no codec has.
        byte[] metadata = TEMPLATE.toByteArray();
        ByteBuffer bytes = ByteBuffer.allocate(2 + 4 + 4 + metadata.length + 2).putShort(Entry.MAGIC_CRC32C).putInt(0)
                .putInt(metadata.length + 2).put(metadata).put(new byte[] {0x40, 0x09}).flip();
        assertProblem(() -> Entry.parse(bytes, EntryLimits.DEFAULT, false), Problem.UNKNOWN_CODEC,
                "compression type [9]");
    }

    @Test
    void oversizedMetadata() {
        byte[] bytes = batchBytes(CompressionType.NONE);
        ByteBuffer.wrap(bytes).putInt(6, 50_000_000);
        assertProblem(() -> Entry.parse(withFreshChecksum(bytes)), Problem.OVERSIZED_METADATA,
                "metadata size 50000000");
        ByteBuffer.wrap(bytes).putInt(6, -3);
        assertProblem(() -> Entry.parse(withFreshChecksum(bytes)), Problem.OVERSIZED_METADATA, "metadata size -3");
        ByteBuffer.wrap(bytes).putInt(6, 2_000);
        assertProblem(() -> Entry.parse(withFreshChecksum(bytes), new EntryLimits(1_000, 1 << 20), true),
                Problem.OVERSIZED_METADATA, "outside 0..1000");
    }

    /** The bytes with a checksum that matches them, so that the next rule is the one that trips. */
    private static ByteBuffer withFreshChecksum(byte[] bytes) {
        CRC32C crc = new CRC32C();
        crc.update(bytes, 6, bytes.length - 6);
        ByteBuffer.wrap(bytes).putInt(2, (int) crc.getValue());
        return ByteBuffer.wrap(bytes);
    }

    @Test
    void malformedMetadata() {
        ByteBuffer bytes = ByteBuffer.allocate(2 + 4 + 4 + 3).putShort(Entry.MAGIC_CRC32C).putInt(0).putInt(3)
                .put(new byte[] {(byte) 0xff, (byte) 0xff, (byte) 0xff}).flip();
        assertProblem(() -> Entry.parse(bytes, EntryLimits.DEFAULT, false), Problem.MALFORMED_METADATA,
                "MessageMetadata");
        // Missing the required producer_name.
        ByteBuffer missing = ByteBuffer.allocate(2 + 4 + 4 + 2).putShort(Entry.MAGIC_CRC32C).putInt(0).putInt(2)
                .put(new byte[] {0x10, 0x01}).flip();
        assertProblem(() -> Entry.parse(missing, EntryLimits.DEFAULT, false), Problem.MALFORMED_METADATA,
                "producer_name");
    }

    @Test
    void aBatchCountThatLies() {
        List<Message> messages = Sample.randomBatch(new Random(6), 5, 100).stream().map(Sample::toMessage).toList();
        Entry honest = Entries.batch(TEMPLATE, messages, CompressionType.LZ4);
        for (int lie : new int[] {4, 6, 1000}) {
            Entry liar = Entry.of(honest.metadata().toBuilder().setNumMessagesInBatch(lie).build(), honest.payload());
            assertProblem(() -> Entries.messages(liar), Problem.BATCH_COUNT_MISMATCH, "batch count says " + lie);
        }
        assertProblem(() -> Entry.of(honest.metadata().toBuilder().setNumMessagesInBatch(0).build(),
                honest.payload()), Problem.BATCH_COUNT_MISMATCH, "num_messages_in_batch 0");
    }

    @Test
    void anUncompressedSizeThatLies() {
        for (CompressionType codec : CompressionType.values()) {
            Entry honest = Entry.parse(ByteBuffer.wrap(batchBytes(codec)));
            int size = honest.metadata().getUncompressedSize();
            for (int lie : new int[] {size - 1, size + 1}) {
                Entry liar = Entry.of(honest.metadata().toBuilder().setUncompressedSize(lie).build(), honest.payload());
                assertProblem(() -> Entries.messages(liar), Problem.CORRUPT_PAYLOAD, codec.name(),
                        "declared " + lie + " bytes");
            }
        }
    }

    @Test
    void anUncompressedSizeAboveTheLimit() {
        Entry entry = Entry.parse(ByteBuffer.wrap(batchBytes(CompressionType.ZLIB)));
        assertProblem(() -> Entries.messages(entry, new EntryLimits(1024, 100)), Problem.OVERSIZED_PAYLOAD,
                "above the limit of 100 bytes");
    }

    @Test
    void corruptCompressedPayloadsAreCaughtForEveryCodec() {
        Random r = new Random(8);
        for (CompressionType codec : List.of(CompressionType.LZ4, CompressionType.ZLIB, CompressionType.ZSTD,
                CompressionType.SNAPPY)) {
            Entry honest = Entry.parse(ByteBuffer.wrap(batchBytes(codec)));
            for (int trial = 0; trial < 200; trial++) {
                byte[] payload = new byte[honest.payload().remaining()];
                honest.payload().get(payload);
                payload[r.nextInt(payload.length)] ^= (byte) (1 + r.nextInt(255));
                Entry corrupt = Entry.of(honest.metadata(), ByteBuffer.wrap(payload));
                try {
                    Entries.messages(corrupt); // a flipped literal byte can still decode: then it decodes whole
                } catch (EntryFormatException e) {
                    assertThat(e.problem()).as(e.getMessage()).isIn(Problem.CORRUPT_PAYLOAD, Problem.TRUNCATED,
                            Problem.MALFORMED_METADATA, Problem.BATCH_COUNT_MISMATCH);
                }
            }
        }
    }

    @Test
    void theStampPropertyStandsInForTheFieldsAndMustAgreeWithThem() {
        KeyValue stamp = KeyValue.newBuilder()
                .setKey(Stamp.PROPERTY).setValue("100-200").build();
        Entry byProperty = Entry.of(TEMPLATE.toBuilder().addProperties(stamp).build(), ByteBuffer.allocate(0));
        assertThat(byProperty.facts().stamp()).contains(new Stamp(100, 200));
        Entry both = Entry.of(TEMPLATE.toBuilder().addProperties(stamp).setEntryHashMin(100).setEntryHashMax(200)
                .build(), ByteBuffer.allocate(0));
        assertThat(both.facts().stamp()).contains(new Stamp(100, 200));
        assertProblem(() -> Entry.of(TEMPLATE.toBuilder().addProperties(stamp).setEntryHashMin(100)
                .setEntryHashMax(201).build(), ByteBuffer.allocate(0)), Problem.BAD_STAMP, "100-201", "100-200");
        // an entry built from one that carried the property gets its own stamp, not the old one
        Entry rebatched = Entries.batch(byProperty.metadata(), List.of(Message.of("k", new byte[] {1})),
                CompressionType.NONE);
        assertThat(rebatched.facts().stamp()).contains(Stamp.of(Message.of("k", new byte[0]).hashB()));
        assertThat(rebatched.metadata().getPropertiesList()).noneMatch(kv -> kv.getKey().equals(Stamp.PROPERTY));
        for (String bad : List.of("", "-", "5", "5-", "-5", "x-1", "9-3", "0-70000", "1-2-3", "99999999999-1")) {
            assertProblem(() -> Entry.of(TEMPLATE.toBuilder().addProperties(stamp.toBuilder().setValue(bad)).build(),
                    ByteBuffer.allocate(0)), Problem.BAD_STAMP, Stamp.PROPERTY);
        }
    }

    @Test
    void badStamps() {
        assertProblem(() -> Entry.of(TEMPLATE.toBuilder().setEntryHashMin(5).build(), ByteBuffer.allocate(0)),
                Problem.BAD_STAMP, "only one of");
        assertProblem(() -> Entry.of(TEMPLATE.toBuilder().setEntryHashMin(9).setEntryHashMax(3).build(),
                ByteBuffer.allocate(0)), Problem.BAD_STAMP, "[9, 3]");
        assertProblem(() -> Entry.of(TEMPLATE.toBuilder().setEntryHashMin(0).setEntryHashMax(70000).build(),
                ByteBuffer.allocate(0)), Problem.BAD_STAMP, "70000");
    }

    @Test
    void badSourcePositions() {
        for (String bad : new String[] {"", "1", "a:b", "1:2:3:4", "-1:2", "1:2:-3"}) {
            assertProblem(() -> SourcePosition.parse(bad), Problem.BAD_SOURCE_POSITION, "'" + bad + "'");
        }
    }

    @Test
    void aBrokerEntryMetadataPrefixIsSkipped() {
        byte[] entry = batchBytes(CompressionType.LZ4);
        ByteBuffer prefixed = ByteBuffer.allocate(6 + 5 + entry.length).putShort(Entry.MAGIC_BROKER_ENTRY_METADATA)
                .putInt(5).put(new byte[5]).put(entry).flip();
        assertThat(Entries.messages(Entry.parse(prefixed))).hasSize(10);
        ByteBuffer lying = ByteBuffer.allocate(6).putShort(Entry.MAGIC_BROKER_ENTRY_METADATA).putInt(99).flip();
        assertProblem(() -> Entry.parse(lying), Problem.TRUNCATED, "broker entry metadata of 99 bytes");
    }

    private static void assertProblem(ThrowingCallable call, Problem problem, String... mentions) {
        assertThatThrownBy(call).isInstanceOfSatisfying(EntryFormatException.class, e -> {
            assertThat(e.problem()).isEqualTo(problem);
            assertThat(e.getMessage()).contains(mentions);
        });
    }
}
