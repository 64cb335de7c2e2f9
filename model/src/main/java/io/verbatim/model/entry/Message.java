package io.verbatim.model.entry;

import io.verbatim.model.KeyHash;
import io.verbatim.model.proto.SingleMessageMetadata;
import java.nio.ByteBuffer;

/**
 * One message of an entry: its single-message metadata and its payload bytes.
 *
 * @param metadata Pulsar's {@code SingleMessageMetadata}; {@code payload_size} matches the payload
 * @param payload read-only view of the payload bytes
 */
public record Message(SingleMessageMetadata metadata, ByteBuffer payload) {

    public Message {
        payload = payload.asReadOnlyBuffer();
        if (!metadata.hasPayloadSize() || metadata.getPayloadSize() != payload.remaining()) {
            metadata = metadata.toBuilder().setPayloadSize(payload.remaining()).build();
        }
    }

    /** A message with the given key (or none) and payload. */
    public static Message of(String key, byte[] payload) {
        SingleMessageMetadata.Builder md = SingleMessageMetadata.newBuilder().setPayloadSize(payload.length);
        if (key != null) {
            md.setPartitionKey(key);
        }
        return new Message(md.build(), ByteBuffer.wrap(payload));
    }

    /** The routing key, or {@code null}. */
    public String key() {
        return metadata.hasPartitionKey() && !metadata.getNullPartitionKey() ? metadata.getPartitionKey() : null;
    }

    /** The ordering key bytes, or {@code null}. */
    public byte[] orderingKey() {
        return metadata.hasOrderingKey() ? metadata.getOrderingKey().toByteArray() : null;
    }

    /** The hash its segment is chosen by (the routing key), or {@code null} when unkeyed. */
    public KeyHash routingHash() {
        String key = key();
        return key == null ? null : KeyHash.of(key);
    }

    /** The {@code hashB} its bucket is chosen by: ordering key first, then the key, else 0. */
    public int hashB() {
        return KeyHash.hashBOf(KeyHash.ofMessage(key(), orderingKey()));
    }

    public byte[] payloadBytes() {
        byte[] bytes = new byte[payload.remaining()];
        payload.duplicate().get(bytes);
        return bytes;
    }
}
