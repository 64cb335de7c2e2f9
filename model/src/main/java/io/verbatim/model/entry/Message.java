package io.verbatim.model.entry;

import com.google.protobuf.ByteString;
import io.verbatim.model.KeyHash;
import io.verbatim.model.proto.SingleMessageMetadata;
import java.nio.ByteBuffer;
import java.util.Optional;

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

    /** A message with the given key and payload. */
    public static Message of(String key, byte[] payload) {
        SingleMessageMetadata md = SingleMessageMetadata.newBuilder().setPayloadSize(payload.length)
                .setPartitionKey(key).build();
        return new Message(md, ByteBuffer.wrap(payload));
    }

    /** A message without a key (producers route such messages round-robin). */
    public static Message unkeyed(byte[] payload) {
        SingleMessageMetadata md = SingleMessageMetadata.newBuilder().setPayloadSize(payload.length).build();
        return new Message(md, ByteBuffer.wrap(payload));
    }

    /** A message with the given key, if any, and payload. */
    public static Message of(Optional<String> key, byte[] payload) {
        return key.isPresent() ? of(key.get(), payload) : unkeyed(payload);
    }

    /** The routing key, if it has one. */
    public Optional<String> key() {
        return metadata.hasPartitionKey() && !metadata.getNullPartitionKey()
                ? Optional.of(metadata.getPartitionKey()) : Optional.empty();
    }

    /** The ordering key bytes, if it has them. */
    public Optional<byte[]> orderingKey() {
        return metadata.hasOrderingKey() ? Optional.of(metadata.getOrderingKey().toByteArray()) : Optional.empty();
    }

    /**
     * The hash its segment is chosen by (the routing key), or empty when unkeyed. The key's UTF-8 bytes are
     * hashed as they are in the metadata when they are valid UTF-8 (the same bytes {@code KeyHash.of} would
     * hash), so a parsed key is not decoded into a string only to be encoded again.
     */
    public Optional<KeyHash> routingHash() {
        if (!metadata.hasPartitionKey() || metadata.getNullPartitionKey()) {
            return Optional.empty();
        }
        ByteString utf8 = metadata.getPartitionKeyBytes();
        return Optional.of(utf8.isValidUtf8() ? KeyHash.ofBytes(utf8.toByteArray()) : KeyHash.of(key().orElseThrow()));
    }

    /** The {@code hashB} its bucket is chosen by: ordering key first, then the key, else 0. */
    public int hashB() {
        return hashB(routingHash());
    }

    /**
     * {@link #hashB()} given this message's {@link #routingHash()}, for a caller that needs both: the key
     * is not hashed twice.
     */
    public int hashB(Optional<KeyHash> routingHash) {
        if (metadata.hasOrderingKey() && !metadata.getOrderingKey().isEmpty()) {
            return KeyHash.ofBytes(metadata.getOrderingKey().toByteArray()).hashB();
        }
        return KeyHash.hashBOf(routingHash);
    }

    public byte[] payloadBytes() {
        byte[] bytes = new byte[payload.remaining()];
        payload.duplicate().get(bytes);
        return bytes;
    }
}
