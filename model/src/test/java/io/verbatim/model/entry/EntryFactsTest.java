package io.verbatim.model.entry;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import io.verbatim.model.EntryFacts;
import io.verbatim.model.KeyHash;
import io.verbatim.model.Stamp;
import io.verbatim.model.proto.CompressionType;
import io.verbatim.model.proto.EncryptionKeys;
import io.verbatim.model.proto.MessageMetadata;
import java.nio.ByteBuffer;
import java.util.List;
import org.junit.jupiter.api.Test;

class EntryFactsTest {
    private static final MessageMetadata TEMPLATE = MessageMetadata.newBuilder().setProducerName("p")
            .setSequenceId(1).setPublishTime(2).build();

    @Test
    void aBatchIsStampedWithTheEffectiveRangeOfItsMessages() {
        List<Message> messages = List.of(Message.of("hello", new byte[1]), Message.of("a", new byte[1]));
        Entry entry = Entries.batch(TEMPLATE, messages, CompressionType.LZ4);
        int h1 = KeyHash.of("hello").hashB();
        int h2 = KeyHash.of("a").hashB();
        assertThat(entry.facts().stamp()).contains(new Stamp(Math.min(h1, h2), Math.max(h1, h2)));
        assertThat(entry.facts().singleMessage()).isFalse();
        assertThat(entry.facts().unkeyed()).isFalse(); // a batch's keys are inside its payload
        assertThat(entry.facts().outerKey()).isEmpty();
    }

    @Test
    void unkeyedMessagesAreStampedZero() {
        Entry entry = Entries.batch(TEMPLATE, List.of(Message.unkeyed(new byte[3])), CompressionType.NONE);
        assertThat(entry.facts().stamp()).contains(Stamp.of(0));
    }

    @Test
    void aSingleMessageCarriesItsRoutingKeyInTheClear() {
        Entry keyed = Entries.single(TEMPLATE.toBuilder().setPartitionKey("foo").build(), ByteBuffer.allocate(4),
                CompressionType.NONE);
        EntryFacts facts = keyed.facts();
        assertThat(facts.singleMessage()).isTrue();
        assertThat(facts.outerKey()).contains(KeyHash.of("foo"));
        assertThat(facts.stamp()).contains(Stamp.of(KeyHash.of("foo").hashB()));
        Entry unkeyed = Entries.single(TEMPLATE, ByteBuffer.allocate(4), CompressionType.NONE);
        assertThat(unkeyed.facts().unkeyed()).isTrue();
    }

    @Test
    void encryptionIsSeenInTheOuterMetadata() {
        MessageMetadata md = TEMPLATE.toBuilder().setPartitionKey("k").addEncryptionKeys(EncryptionKeys.newBuilder()
                .setKey("rsa").setValue(ByteString.copyFromUtf8("wrapped"))).build();
        assertThat(Entries.single(md, ByteBuffer.allocate(4), CompressionType.NONE).facts().encrypted()).isTrue();
    }
}
