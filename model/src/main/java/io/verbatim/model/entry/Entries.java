package io.verbatim.model.entry;

import io.verbatim.model.KeyHash;
import io.verbatim.model.Stamp;
import io.verbatim.model.entry.EntryFormatException.Problem;
import io.verbatim.model.proto.CompressionType;
import io.verbatim.model.proto.MessageMetadata;
import io.verbatim.model.proto.SingleMessageMetadata;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;

/** Building entries from messages as a PIP-486 producer does, and opening them again. */
public final class Entries {
    /** A batch before it is compressed: it lives only until {@link #batch} has compressed it. */
    private static final Scratch UNCOMPRESSED = new Scratch();
    /** A batch decompressed for {@link #withBatchMessages}: it lives only until the caller's function returns. */
    private static final Scratch DECOMPRESSED = new Scratch();
    /** Whether this thread is inside {@link #withBatchMessages} (a nested call gets its own array). */
    private static final ThreadLocal<boolean[]> DECOMPRESSED_IN_USE = ThreadLocal.withInitial(() -> new boolean[1]);

    private Entries() {
    }

    /**
     * A batch entry of {@code messages}, compressed with {@code codec} and stamped with the smallest
     * and largest {@code hashB} present. The caller picks messages of one bucket.
     *
     * @param template the outer metadata: producer name, sequence id, publish time and whatever else
     *        the batch carries; batch count, compression, sizes and the stamp are set here
     */
    public static Entry batch(MessageMetadata template, List<Message> messages, CompressionType codec) {
        if (messages.isEmpty()) {
            throw new IllegalArgumentException("a batch needs at least one message");
        }
        Stamp stamp = Stamp.of(messages.get(0).hashB());
        for (Message m : messages) {
            stamp = stamp.including(m.hashB());
        }
        return batch(template, messages, codec, stamp);
    }

    /**
     * {@link #batch(MessageMetadata, List, CompressionType)} for a caller that has the messages' stamp
     * already (the slow path, which hashed every message to group it): the keys are not hashed again.
     *
     * @param stamp the smallest and largest {@code hashB} of {@code messages}
     */
    public static Entry batch(MessageMetadata template, List<Message> messages, CompressionType codec, Stamp stamp) {
        if (messages.isEmpty()) {
            throw new IllegalArgumentException("a batch needs at least one message");
        }
        // Uncompressed, the batch is the payload itself (the codec keeps a view of it): it needs its own array.
        ByteBuffer uncompressed = codec == CompressionType.NONE ? Batch.encode(messages)
                : Batch.encode(messages, UNCOMPRESSED.atLeast(Batch.encodedSize(messages)));
        MessageMetadata md = withoutStampProperty(template)
                .setNumMessagesInBatch(messages.size())
                .setCompression(codec)
                .setUncompressedSize(uncompressed.remaining())
                .setEntryHashMin(stamp.hashMin())
                .setEntryHashMax(stamp.hashMax())
                .build();
        return Entry.of(md, Codec.of(codec).compress(uncompressed));
    }

    /** The template without a {@link Stamp#PROPERTY} it carried from another entry: the stamp is set anew. */
    private static MessageMetadata.Builder withoutStampProperty(MessageMetadata template) {
        MessageMetadata.Builder md = template.toBuilder();
        for (int i = md.getPropertiesCount() - 1; i >= 0; i--) {
            if (md.getProperties(i).getKey().equals(Stamp.PROPERTY)) {
                md.removeProperties(i);
            }
        }
        return md;
    }

    /**
     * A single-message entry, compressed with {@code codec} and stamped with its {@code hashB} (the
     * ordering key's if set, else the key's, else 0).
     */
    public static Entry single(MessageMetadata template, ByteBuffer payload, CompressionType codec) {
        Optional<String> key = template.hasPartitionKey() ? Optional.of(template.getPartitionKey()) : Optional.empty();
        Optional<byte[]> orderingKey = template.hasOrderingKey()
                ? Optional.of(template.getOrderingKey().toByteArray()) : Optional.empty();
        int hashB = KeyHash.hashBOf(KeyHash.ofMessage(key, orderingKey));
        MessageMetadata md = withoutStampProperty(template)
                .clearNumMessagesInBatch()
                .setCompression(codec)
                .setUncompressedSize(payload.remaining())
                .setEntryHashMin(hashB)
                .setEntryHashMax(hashB)
                .build();
        return Entry.of(md, Codec.of(codec).compress(payload));
    }

    /** The decompressed payload, checked against the declared size and the limits. */
    public static ByteBuffer uncompressedPayload(Entry entry, EntryLimits limits) {
        return Codec.of(entry.metadata().getCompression()).decompress(entry.payload(), uncompressedSize(entry, limits));
    }

    /** The declared uncompressed size, checked against the limits. */
    private static int uncompressedSize(Entry entry, EntryLimits limits) {
        MessageMetadata md = entry.metadata();
        int size = md.hasUncompressedSize() || md.getCompression() != CompressionType.NONE
                ? md.getUncompressedSize() : entry.payload().remaining();
        if (size > limits.maxUncompressedBytes()) {
            throw new EntryFormatException(Problem.OVERSIZED_PAYLOAD, "uncompressed_size " + size
                    + " is above the limit of " + limits.maxUncompressedBytes() + " bytes");
        }
        return size;
    }

    /**
     * Calls {@code use} with the messages of a batch entry decompressed into a per-thread buffer rather
     * than a new array, for a caller done with them when {@code use} returns: the slow path, which
     * re-batches and compresses them at once. The messages' payloads, and anything that views them, are
     * invalid once {@code use} returns: what it answers must hold copies (a compressed entry does; an
     * uncompressed one built from the payloads would not).
     */
    public static <T> T withBatchMessages(Entry entry, EntryLimits limits, Function<List<Message>, T> use) {
        if (!entry.isBatch()) {
            throw new IllegalArgumentException("not a batch: " + entry);
        }
        int size = uncompressedSize(entry, limits);
        boolean[] inUse = DECOMPRESSED_IN_USE.get();
        Codec codec = Codec.of(entry.metadata().getCompression());
        if (inUse[0] || !(codec instanceof Codecs.ArrayCodec array)) {
            return use.apply(Batch.decode(codec.decompress(entry.payload(), size),
                    entry.metadata().getNumMessagesInBatch()));
        }
        inUse[0] = true;
        try {
            ByteBuffer uncompressed = array.decompress(entry.payload(), size, DECOMPRESSED.atLeast(size));
            return use.apply(Batch.decode(uncompressed, entry.metadata().getNumMessagesInBatch()));
        } finally {
            inUse[0] = false;
        }
    }

    /**
     * The messages of an entry, decompressed: a batch's own messages, or the single message with
     * its metadata lifted from the outer metadata.
     */
    public static List<Message> messages(Entry entry, EntryLimits limits) {
        ByteBuffer uncompressed = uncompressedPayload(entry, limits);
        MessageMetadata md = entry.metadata();
        if (entry.isBatch()) {
            return Batch.decode(uncompressed, md.getNumMessagesInBatch());
        }
        return List.of(new Message(singleOf(md, uncompressed.remaining()), uncompressed));
    }

    public static List<Message> messages(Entry entry) {
        return messages(entry, EntryLimits.DEFAULT);
    }

    private static SingleMessageMetadata singleOf(MessageMetadata md, int payloadSize) {
        SingleMessageMetadata.Builder single = SingleMessageMetadata.newBuilder()
                .addAllProperties(md.getPropertiesList())
                .setPayloadSize(payloadSize)
                .setSequenceId(md.getSequenceId());
        if (md.hasPartitionKey()) {
            single.setPartitionKey(md.getPartitionKey());
            single.setPartitionKeyB64Encoded(md.getPartitionKeyB64Encoded());
        }
        if (md.hasOrderingKey()) {
            single.setOrderingKey(md.getOrderingKey());
        }
        if (md.hasEventTime()) {
            single.setEventTime(md.getEventTime());
        }
        if (md.hasNullValue()) {
            single.setNullValue(md.getNullValue());
        }
        if (md.hasNullPartitionKey()) {
            single.setNullPartitionKey(md.getNullPartitionKey());
        }
        return single.build();
    }
}
