package io.verbatim.model.entry;

import static org.assertj.core.api.Assertions.assertThat;

import io.verbatim.model.Stamp;
import io.verbatim.model.proto.CompressionType;
import io.verbatim.model.proto.MessageMetadata;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** Batches are encoded in a per-thread scratch before compression: no entry may keep a view of it. */
class EntriesScratchTest {
    private static final MessageMetadata TEMPLATE = MessageMetadata.newBuilder().setProducerName("p")
            .setSequenceId(1).setPublishTime(1).build();

    @ParameterizedTest
    @EnumSource(CompressionType.class)
    void anEntryOutlivesTheNextBatch(CompressionType codec) {
        Random r = new Random(codec.getNumber());
        List<Message> first = messages(r, 50);
        List<Message> second = messages(r, 80);
        Entry a = Entries.batch(TEMPLATE, first, codec);
        byte[] aBytes = a.toByteArray();
        Entry b = Entries.batch(TEMPLATE, second, codec);
        assertThat(a.toByteArray()).isEqualTo(aBytes);
        assertThat(payloads(Entries.messages(Entry.parse(ByteBuffer.wrap(aBytes))))).isEqualTo(payloads(first));
        assertThat(payloads(Entries.messages(b))).isEqualTo(payloads(second));
    }

    @ParameterizedTest
    @EnumSource(CompressionType.class)
    void aGivenStampMakesTheSameEntry(CompressionType codec) {
        List<Message> messages = messages(new Random(9), 30);
        Stamp stamp = Stamp.of(messages.get(0).hashB());
        for (Message m : messages) {
            stamp = stamp.including(m.hashB());
        }
        assertThat(Entries.batch(TEMPLATE, messages, codec, stamp).toByteArray())
                .isEqualTo(Entries.batch(TEMPLATE, messages, codec).toByteArray());
    }

    /** The scoped messages are the entry's messages; nested calls and every codec included. */
    @ParameterizedTest
    @EnumSource(CompressionType.class)
    void scopedBatchMessagesAreTheMessages(CompressionType codec) {
        Random r = new Random(20 + codec.getNumber());
        Entry outer = Entries.batch(TEMPLATE, messages(r, 40), codec);
        Entry inner = Entries.batch(TEMPLATE, messages(r, 60), codec);
        List<ByteBuffer> expectedOuter = payloads(Entries.messages(outer));
        List<ByteBuffer> expectedInner = payloads(Entries.messages(inner));
        int total = Entries.withBatchMessages(outer, EntryLimits.DEFAULT, outerMessages -> {
            int n = Entries.withBatchMessages(inner, EntryLimits.DEFAULT, innerMessages -> {
                assertThat(payloads(innerMessages)).isEqualTo(expectedInner);
                return innerMessages.size();
            });
            assertThat(payloads(outerMessages)).as("not overwritten by the nested call").isEqualTo(expectedOuter);
            return n + outerMessages.size();
        });
        assertThat(total).isEqualTo(100);
    }

    private static List<Message> messages(Random r, int count) {
        List<Message> out = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            out.add(Message.of("key-" + r.nextInt(1000), Sample.payload(r, 1 + r.nextInt(3000))));
        }
        return out;
    }

    private static List<ByteBuffer> payloads(List<Message> messages) {
        return messages.stream().map(Message::payload).toList();
    }
}
