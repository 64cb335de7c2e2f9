package io.verbatim.bench;

import com.google.protobuf.CodedOutputStream;
import com.google.protobuf.InvalidProtocolBufferException;
import io.verbatim.model.KeyHash;
import io.verbatim.model.Layout;
import io.verbatim.model.Segment;
import io.verbatim.model.Stamp;
import io.verbatim.model.entry.Entry;
import io.verbatim.model.entry.ReplicationStamp;
import io.verbatim.model.proto.CompressionType;
import io.verbatim.model.proto.KeyValue;
import io.verbatim.model.proto.MessageMetadata;
import io.verbatim.model.proto.SingleMessageMetadata;
import io.verbatim.pipeline.StoredEntry;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.zip.CRC32C;
import net.jpountz.lz4.LZ4Compressor;
import net.jpountz.lz4.LZ4Factory;
import net.jpountz.lz4.LZ4SafeDecompressor;

/**
 * P3's yardstick: only the work that re-batching an LZ4 batch entry cannot avoid, done directly with the
 * libraries and without a replicator around it. Per stored entry: read its metadata; decompress the
 * payload with lz4-java's fastest safe decompressor; walk the messages, parsing each one's metadata for
 * its keys; group them by destination (segment, bucket) of the layout, in the slow path's order; and for
 * each group copy its messages' bytes together, compress them with lz4-java's fast compressor (the
 * model's codec and level), and write the part's entry bytes: the metadata with the batch facts, the hash
 * stamp and the replication stamp, the CRC32C, the payload.
 *
 * <p>The parts are byte for byte what the slow path stores at the remote (the benchmark checks that every
 * round), so both sides do the same work. What this side spares is what it need not do: it reuses its
 * scratch buffers, copies a message's bytes without re-encoding its metadata, and writes each part once.
 * Not thread-safe: one instance per thread.
 */
final class BareRebatch {
    private static final LZ4Factory LZ4 = LZ4Factory.fastestInstance();

    /** One re-batched part: the bytes to append to the log of the destination segment {@code segmentId}. */
    record Part(long segmentId, byte[] bytes) {
    }

    private final Layout destination;
    private final int unkeyedSegmentHash;
    private final String localCluster;
    private final LZ4SafeDecompressor decompressor = LZ4.safeDecompressor();
    private final LZ4Compressor compressor = LZ4.fastCompressor();
    private final CRC32C crc = new CRC32C();
    private byte[] stored = new byte[0];
    private byte[] uncompressed = new byte[0];
    private byte[] grouped = new byte[0];
    private byte[] compressed = new byte[0];
    private final List<Group> groups = new ArrayList<>();

    /**
     * @param destination the remote's layout
     * @param unkeyedSegmentHash where an unkeyed message goes: the start of the source segment's range, as
     *        the slow path routes it
     * @param localCluster the name stamped as {@code replicated_from}
     */
    BareRebatch(Layout destination, int unkeyedSegmentHash, String localCluster) {
        this.destination = destination;
        this.unkeyedSegmentHash = unkeyedSegmentHash;
        this.localCluster = localCluster;
    }

    /** The parts of one stored LZ4 batch entry, in the order the slow path sends them. */
    List<Part> parts(StoredEntry entry) {
        Entry parsed = Entry.parseUnverified(entry.bytes());
        MessageMetadata md = parsed.metadata();
        if (!parsed.isBatch() || md.getCompression() != CompressionType.LZ4) {
            throw new IllegalArgumentException("the bare loop re-batches LZ4 batches only, not " + parsed);
        }
        int size = decompress(parsed.payload(), md.getUncompressedSize());
        groupMessages(size, md.getNumMessagesInBatch());
        groups.sort(Comparator.comparingLong(g -> g.order));
        MessageMetadata.Builder base = baseOf(md);
        List<Part> parts = new ArrayList<>(groups.size());
        for (Group g : groups) {
            // numbered by its bucket in its segment (the low half of the order), as the slow path numbers parts
            String position = entry.position().withPart((int) g.order).toProperty();
            parts.add(new Part(g.segmentId, encode(g, base, position)));
        }
        groups.clear();
        return parts;
    }

    /** Decompresses the payload into {@link #uncompressed}; returns its size. */
    private int decompress(ByteBuffer payload, int size) {
        int length = payload.remaining();
        stored = atLeast(stored, length);
        payload.get(stored, 0, length); // a stored entry is a read-only view: LZ4 needs an array
        uncompressed = atLeast(uncompressed, size);
        int produced = decompressor.decompress(stored, 0, length, uncompressed, 0, size);
        if (produced != size) {
            throw new IllegalArgumentException("LZ4 payload gave " + produced + " bytes, not " + size);
        }
        return size;
    }

    /** Walks the {@code count} messages of the batch and puts each into its destination's group. */
    private void groupMessages(int size, int count) {
        ByteBuffer in = ByteBuffer.wrap(uncompressed, 0, size);
        for (int i = 0; i < count; i++) {
            int start = in.position();
            int mdSize = in.getInt();
            SingleMessageMetadata smd;
            try {
                smd = SingleMessageMetadata.parser().parseFrom(uncompressed, start + 4, mdSize);
            } catch (InvalidProtocolBufferException e) {
                throw new IllegalArgumentException("message " + i + ": " + e.getMessage(), e);
            }
            int length = 4 + mdSize + smd.getPayloadSize();
            in.position(start + length); // throws past the end
            boolean keyed = smd.hasPartitionKey() && !smd.getNullPartitionKey();
            KeyHash key = keyed ? KeyHash.ofBytes(smd.getPartitionKeyBytes().toByteArray()) : null;
            int hashB = smd.hasOrderingKey() && !smd.getOrderingKey().isEmpty()
                    ? KeyHash.ofBytes(smd.getOrderingKey().toByteArray()).hashB()
                    : key != null ? key.hashB() : 0;
            Segment d = destination.activeSegmentFor(key != null ? key.segmentHash() : unkeyedSegmentHash);
            int bucket = d.buckets().bucketOf(hashB);
            groupOf(d, bucket).add(start, length, hashB);
        }
        if (in.hasRemaining()) {
            throw new IllegalArgumentException(in.remaining() + " bytes after the last of " + count + " messages");
        }
    }

    private Group groupOf(Segment d, int bucket) {
        long order = (long) d.range().start() << 32 | bucket;
        for (Group g : groups) {
            if (g.order == order) {
                return g;
            }
        }
        Group g = new Group(order, d.id());
        groups.add(g);
        return g;
    }

    /** The source metadata as every part carries it: batch facts and stamps cleared, replicated_from set. */
    private MessageMetadata.Builder baseOf(MessageMetadata md) {
        MessageMetadata.Builder base = md.toBuilder().clearNumMessagesInBatch().clearCompression()
                .clearUncompressedSize().clearEntryHashMin().clearEntryHashMax().clearTxnidLeastBits()
                .clearTxnidMostBits().setReplicatedFrom(localCluster);
        for (int i = base.getPropertiesCount() - 1; i >= 0; i--) {
            String key = base.getProperties(i).getKey();
            if (key.equals(Stamp.PROPERTY) || key.equals(ReplicationStamp.SOURCE_POSITION_PROPERTY)) {
                base.removeProperties(i);
            }
        }
        return base;
    }

    /** The part's entry bytes: {@code [0x0e01][CRC32C][metadata size][metadata][LZ4 payload]}. */
    private byte[] encode(Group g, MessageMetadata.Builder base, String position) {
        grouped = atLeast(grouped, g.bytes);
        int at = 0;
        for (int i = 0; i < g.count; i++) {
            System.arraycopy(uncompressed, g.starts[i], grouped, at, g.lengths[i]);
            at += g.lengths[i];
        }
        compressed = atLeast(compressed, compressor.maxCompressedLength(g.bytes));
        int payload = compressor.compress(grouped, 0, g.bytes, compressed, 0, compressed.length);
        MessageMetadata md = base.clone().setNumMessagesInBatch(g.count).setCompression(CompressionType.LZ4)
                .setUncompressedSize(g.bytes).setEntryHashMin(g.hashMin).setEntryHashMax(g.hashMax)
                .addProperties(KeyValue.newBuilder().setKey(ReplicationStamp.SOURCE_POSITION_PROPERTY)
                        .setValue(position))
                .build();
        int mdSize = md.getSerializedSize();
        byte[] out = new byte[2 + 4 + 4 + mdSize + payload];
        ByteBuffer.wrap(out).putShort(Entry.MAGIC_CRC32C).putInt(0).putInt(mdSize);
        try {
            CodedOutputStream cos = CodedOutputStream.newInstance(out, 10, mdSize);
            md.writeTo(cos);
            cos.checkNoSpaceLeft();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        System.arraycopy(compressed, 0, out, 10 + mdSize, payload);
        crc.reset();
        crc.update(out, 6, out.length - 6);
        ByteBuffer.wrap(out).putInt(2, (int) crc.getValue());
        return out;
    }

    private static byte[] atLeast(byte[] buffer, int size) {
        return buffer.length >= size ? buffer : new byte[Math.max(size, buffer.length * 2)];
    }

    /** The messages of one destination (segment, bucket): where each lies in the batch, and the stamp. */
    private static final class Group {
        final long order;
        final long segmentId;
        int[] starts = new int[16];
        int[] lengths = new int[16];
        int count;
        int bytes;
        int hashMin = Integer.MAX_VALUE;
        int hashMax = Integer.MIN_VALUE;

        Group(long order, long segmentId) {
            this.order = order;
            this.segmentId = segmentId;
        }

        void add(int start, int length, int hashB) {
            if (count == starts.length) {
                starts = Arrays.copyOf(starts, count * 2);
                lengths = Arrays.copyOf(lengths, count * 2);
            }
            starts[count] = start;
            lengths[count] = length;
            count++;
            bytes += length;
            hashMin = Math.min(hashMin, hashB);
            hashMax = Math.max(hashMax, hashB);
        }
    }
}
