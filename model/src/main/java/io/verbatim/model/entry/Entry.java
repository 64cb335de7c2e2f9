package io.verbatim.model.entry;

import com.google.protobuf.CodedOutputStream;
import com.google.protobuf.InvalidProtocolBufferException;
import io.verbatim.model.EntryFacts;
import io.verbatim.model.entry.EntryFormatException.Problem;
import io.verbatim.model.proto.KeyValue;
import io.verbatim.model.proto.MessageMetadata;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.util.Optional;

/**
 * One stored Pulsar entry: {@code [0x0e01][CRC32C][metadata size][MessageMetadata][payload]}, where
 * the CRC32C covers everything after itself and the payload is a (possibly compressed) single
 * message or batch. Immutable; the payload is a read-only view of the bytes it was parsed from,
 * never copied.
 */
public final class Entry {
    /** The magic that starts an entry with a CRC32C checksum. */
    public static final short MAGIC_CRC32C = 0x0e01;
    /** The magic of the broker-entry-metadata prefix a broker may put in front (skipped on read). */
    public static final short MAGIC_BROKER_ENTRY_METADATA = 0x0e02;
    private static final int PREFIX_BYTES = 2 + 4;

    private final MessageMetadata metadata;
    /** {@code [metadata size][metadata]}: the part of the checksummed bytes before the payload. */
    private final ByteBuffer header;
    private final ByteBuffer payload;
    private final int checksum;

    private Entry(MessageMetadata metadata, ByteBuffer header, ByteBuffer payload, int checksum) {
        this.metadata = metadata;
        this.header = header.asReadOnlyBuffer();
        this.payload = payload.asReadOnlyBuffer();
        this.checksum = checksum;
    }

    /** A new entry of {@code metadata} and an already compressed {@code payload}, checksummed. */
    public static Entry of(MessageMetadata metadata, ByteBuffer payload) {
        EntryChecks.metadata(metadata);
        ByteBuffer header = header(metadata);
        return new Entry(metadata, header, payload, Crc32c.of(header, payload));
    }

    /** Parses and checksum-verifies an entry with the default limits. */
    public static Entry parse(ByteBuffer bytes) {
        return parse(bytes, EntryLimits.DEFAULT, true);
    }

    /**
     * Parses an entry without reading its payload: the checksum is not verified. This is the
     * replicator's fast path. A corrupt payload is still caught downstream, since a re-stamp derives
     * the new checksum from the old one and so carries the mismatch along.
     */
    public static Entry parseUnverified(ByteBuffer bytes) {
        return parse(bytes, EntryLimits.DEFAULT, false);
    }

    /**
     * Parses an entry. The buffer's position is not moved; the entry keeps a view of its bytes.
     *
     * @throws EntryFormatException naming what was wrong; nothing is partly read
     */
    public static Entry parse(ByteBuffer bytes, EntryLimits limits, boolean verifyChecksum) {
        ByteBuffer in = bytes.duplicate();
        skipBrokerEntryMetadata(in);
        int start = in.position();
        requireRemaining(in, PREFIX_BYTES + 4, "the magic, checksum and metadata size");
        short magic = in.getShort();
        if (magic != MAGIC_CRC32C) {
            throw new EntryFormatException(Problem.BAD_MAGIC, String.format(
                    "expected magic 0x%04x at offset %d, found 0x%04x", MAGIC_CRC32C, start, magic & 0xffff));
        }
        int storedChecksum = in.getInt();
        ByteBuffer checksummed = in.slice();
        if (verifyChecksum) {
            // Before any size is believed: a flipped bit in a size field is corruption, not a huge entry.
            int actual = Crc32c.of(checksummed);
            if (actual != storedChecksum) {
                throw new EntryFormatException(Problem.CHECKSUM_MISMATCH, String.format(
                        "stored CRC32C 0x%08x, computed 0x%08x over %d bytes", storedChecksum, actual,
                        checksummed.remaining()));
            }
        }
        int metadataSize = in.getInt();
        if (metadataSize < 0 || metadataSize > limits.maxMetadataBytes()) {
            throw new EntryFormatException(Problem.OVERSIZED_METADATA, "metadata size " + metadataSize
                    + " is outside 0.." + limits.maxMetadataBytes());
        }
        requireRemaining(in, metadataSize, "the " + metadataSize + "-byte metadata");
        ByteBuffer header = checksummed.slice().limit(4 + metadataSize);
        MessageMetadata metadata = parseMetadata(in.slice().limit(metadataSize));
        EntryChecks.metadata(metadata);
        in.position(in.position() + metadataSize);
        return new Entry(metadata, header, in.slice(), storedChecksum);
    }

    private static void skipBrokerEntryMetadata(ByteBuffer in) {
        if (in.remaining() >= 2 && in.getShort(in.position()) == MAGIC_BROKER_ENTRY_METADATA) {
            requireRemaining(in, 6, "the broker entry metadata prefix");
            in.getShort();
            int size = in.getInt();
            if (size < 0 || size > in.remaining()) {
                throw new EntryFormatException(Problem.TRUNCATED, "broker entry metadata of " + size + " bytes but "
                        + in.remaining() + " bytes left");
            }
            in.position(in.position() + size);
        }
    }

    private static MessageMetadata parseMetadata(ByteBuffer bytes) {
        try {
            return MessageMetadata.parseFrom(bytes);
        } catch (InvalidProtocolBufferException e) {
            throw new EntryFormatException(Problem.MALFORMED_METADATA, "MessageMetadata: " + e.getMessage(), e);
        }
    }

    private static void requireRemaining(ByteBuffer in, int needed, String what) {
        if (in.remaining() < needed) {
            throw new EntryFormatException(Problem.TRUNCATED, "entry ends at offset " + in.limit() + ": "
                    + in.remaining() + " bytes left for " + what + " (" + needed + " needed)");
        }
    }

    private static ByteBuffer header(MessageMetadata metadata) {
        int size = metadata.getSerializedSize();
        byte[] bytes = new byte[4 + size];
        ByteBuffer.wrap(bytes).putInt(size);
        try {
            CodedOutputStream out = CodedOutputStream.newInstance(bytes, 4, size);
            metadata.writeTo(out);
            out.checkNoSpaceLeft();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return ByteBuffer.wrap(bytes);
    }

    public MessageMetadata metadata() {
        return metadata;
    }

    /** The payload as stored (compressed with {@code metadata().getCompression()}): a read-only view. */
    public ByteBuffer payload() {
        return payload.duplicate();
    }

    /** The stored CRC32C. */
    public int checksum() {
        return checksum;
    }

    /** True when {@code num_messages_in_batch} is present, as Pulsar's consumer decides. */
    public boolean isBatch() {
        return metadata.hasNumMessagesInBatch();
    }

    /** True when the entry came from another cluster: it must not be replicated again. */
    public boolean isReplicated() {
        return metadata.hasReplicatedFrom();
    }

    /** The source position a replicator stamped, if any. */
    public Optional<SourcePosition> sourcePosition() {
        for (KeyValue kv : metadata.getPropertiesList()) {
            if (kv.getKey().equals(ReplicationStamp.SOURCE_POSITION_PROPERTY)) {
                return Optional.of(SourcePosition.parse(kv.getValue()));
            }
        }
        return Optional.empty();
    }

    /** What the fit decision may know of this entry. */
    public EntryFacts facts() {
        return EntryChecks.facts(metadata);
    }

    /**
     * This entry as a replicator forwards it: {@code replicated_from} and the source-position property
     * set, transaction ids cleared. Only the metadata is rewritten; the new entry shares this entry's
     * payload bytes, and its checksum is derived from the old one without reading them.
     */
    public Entry restamp(ReplicationStamp stamp) {
        MessageMetadata.Builder md = metadata.toBuilder()
                .setReplicatedFrom(stamp.sourceCluster())
                .clearTxnidLeastBits()
                .clearTxnidMostBits();
        for (int i = md.getPropertiesCount() - 1; i >= 0; i--) {
            if (md.getProperties(i).getKey().equals(ReplicationStamp.SOURCE_POSITION_PROPERTY)) {
                md.removeProperties(i);
            }
        }
        md.addProperties(KeyValue.newBuilder()
                .setKey(ReplicationStamp.SOURCE_POSITION_PROPERTY)
                .setValue(stamp.position().toProperty()));
        MessageMetadata restamped = md.build();
        ByteBuffer newHeader = header(restamped);
        int newChecksum = Crc32c.replaceHead(checksum, Crc32c.of(header), Crc32c.of(newHeader), payload.remaining());
        return new Entry(restamped, newHeader, payload, newChecksum);
    }

    /** The encoded size in bytes. */
    public int encodedSize() {
        return PREFIX_BYTES + header.remaining() + payload.remaining();
    }

    /**
     * The entry as three buffers to write in order (prefix, header, payload), for gathering writes
     * that do not copy the payload.
     */
    public ByteBuffer[] buffers() {
        ByteBuffer prefix = ByteBuffer.allocate(PREFIX_BYTES).putShort(MAGIC_CRC32C).putInt(checksum).flip();
        return new ByteBuffer[] {prefix, header.duplicate(), payload.duplicate()};
    }

    /** The entry's bytes, copied into one array. */
    public byte[] toByteArray() {
        byte[] out = new byte[encodedSize()];
        ByteBuffer.wrap(out).putShort(MAGIC_CRC32C).putInt(checksum).put(header.duplicate()).put(payload.duplicate());
        return out;
    }

    @Override
    public String toString() {
        return "Entry[producer=" + metadata.getProducerName() + ", sequenceId=" + metadata.getSequenceId()
                + ", messages=" + metadata.getNumMessagesInBatch() + ", compression=" + metadata.getCompression()
                + ", bytes=" + encodedSize() + "]";
    }
}
