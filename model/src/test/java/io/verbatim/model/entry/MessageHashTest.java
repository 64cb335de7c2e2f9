package io.verbatim.model.entry;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import io.verbatim.model.KeyHash;
import io.verbatim.model.proto.SingleMessageMetadata;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class MessageHashTest {
    /** The rule routingHash and hashB implement, spelt out through KeyHash on the decoded key. */
    private static int expectedHashB(Message m) {
        return KeyHash.hashBOf(KeyHash.ofMessage(m.key(), m.orderingKey()));
    }

    @Test
    void parsedMessagesHashAsTheirDecodedKeys() {
        byte[] invalidUtf8 = {(byte) 0xc3, (byte) 0x28, 'k'};
        List<SingleMessageMetadata> mds = List.of(
                SingleMessageMetadata.newBuilder().setPartitionKey("customer-42").setPayloadSize(1).build(),
                SingleMessageMetadata.newBuilder().setPartitionKey("clé-ü-€-😀").setPayloadSize(1).build(),
                SingleMessageMetadata.newBuilder().setPartitionKeyBytes(ByteString.copyFrom(invalidUtf8))
                        .setPayloadSize(1).build(),
                SingleMessageMetadata.newBuilder().setPartitionKey("k").setOrderingKey(ByteString.copyFromUtf8("o"))
                        .setPayloadSize(1).build(),
                SingleMessageMetadata.newBuilder().setPartitionKey("k").setOrderingKey(ByteString.EMPTY)
                        .setPayloadSize(1).build(),
                SingleMessageMetadata.newBuilder().setPartitionKey("k").setNullPartitionKey(true).setPayloadSize(1)
                        .build(),
                SingleMessageMetadata.newBuilder().setPayloadSize(1).build());
        List<Message> built = mds.stream().map(md -> new Message(md, ByteBuffer.wrap(new byte[] {7}))).toList();
        List<Message> parsed = Batch.decode(Batch.encode(built), built.size());
        for (List<Message> messages : List.of(built, parsed)) {
            for (Message m : messages) {
                Optional<KeyHash> routing = m.routingHash();
                assertThat(routing).as("%s", m.metadata()).isEqualTo(m.key().map(KeyHash::of));
                assertThat(m.hashB()).as("%s", m.metadata()).isEqualTo(expectedHashB(m));
                assertThat(m.hashB(routing)).isEqualTo(m.hashB());
            }
        }
    }
}
