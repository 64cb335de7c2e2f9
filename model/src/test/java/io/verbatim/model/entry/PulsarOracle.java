package io.verbatim.model.entry;

import com.scurrilous.circe.checksum.Crc32cIntChecksum;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.pulsar.common.api.proto.CompressionType;
import org.apache.pulsar.common.api.proto.KeyValue;
import org.apache.pulsar.common.api.proto.MessageMetadata;
import org.apache.pulsar.common.api.proto.SingleMessageMetadata;
import org.apache.pulsar.common.compression.CompressionCodecProvider;
import org.apache.pulsar.common.protocol.Commands;

/** Pulsar's own classes writing and reading entries: the reference Verbatim is checked against. */
final class PulsarOracle {
    private PulsarOracle() {
    }

    /** What Pulsar reads out of an entry. */
    record Read(MessageMetadata metadata, List<Sample> messages) {
    }

    static CompressionType wire(io.verbatim.model.proto.CompressionType type) {
        return CompressionType.valueOf(type.getNumber());
    }

    /** Pulsar writes a batch (or, with {@code batch=false}, one message) and frames it with CRC32C. */
    static byte[] write(List<Sample> samples, boolean batch, io.verbatim.model.proto.CompressionType type) {
        ByteBuf uncompressed = Unpooled.buffer();
        MessageMetadata md = new MessageMetadata().setProducerName("pulsar-producer").setSequenceId(samples.get(0)
                .sequenceId()).setPublishTime(1_700_000_000_000L);
        if (batch) {
            for (Sample s : samples) {
                Commands.serializeSingleMessageInBatchWithPayload(single(s), Unpooled.wrappedBuffer(s.payload()),
                        uncompressed);
            }
            md.setNumMessagesInBatch(samples.size());
        } else {
            Sample s = samples.get(0);
            uncompressed.writeBytes(s.payload());
            if (s.key() != null) {
                md.setPartitionKey(s.key());
            }
            if (s.orderingKey() != null) {
                md.setOrderingKey(s.orderingKey());
            }
            if (s.eventTime() != 0) {
                md.setEventTime(s.eventTime());
            }
            s.properties().forEach((k, v) -> md.addProperty().setKey(k).setValue(v));
        }
        md.setCompression(wire(type)).setUncompressedSize(uncompressed.readableBytes());
        ByteBuf compressed = CompressionCodecProvider.getCompressionCodec(wire(type)).encode(uncompressed);
        ByteBuf framed = Commands.serializeMetadataAndPayload(Commands.ChecksumType.Crc32c, md, compressed);
        byte[] bytes = new byte[framed.readableBytes()];
        framed.readBytes(bytes);
        return bytes;
    }

    private static SingleMessageMetadata single(Sample s) {
        SingleMessageMetadata smm = new SingleMessageMetadata().setPayloadSize(s.payload().length)
                .setSequenceId(s.sequenceId());
        if (s.key() != null) {
            smm.setPartitionKey(s.key());
        }
        if (s.orderingKey() != null) {
            smm.setOrderingKey(s.orderingKey());
        }
        if (s.eventTime() != 0) {
            smm.setEventTime(s.eventTime());
        }
        s.properties().forEach((k, v) -> smm.addProperty().setKey(k).setValue(v));
        return smm;
    }

    /** Pulsar verifies the checksum, parses the metadata, decompresses and splits the batch. */
    static Read read(byte[] entry) throws IOException {
        ByteBuf buf = Unpooled.wrappedBuffer(entry);
        if (!Commands.hasChecksum(buf)) {
            throw new AssertionError("Pulsar finds no checksum magic");
        }
        int stored = Commands.readChecksum(buf);
        int computed = Crc32cIntChecksum.computeChecksum(buf);
        if (stored != computed) {
            throw new AssertionError(String.format("Pulsar computes CRC32C %08x, entry says %08x", computed, stored));
        }
        MessageMetadata md = Commands.parseMessageMetadata(buf);
        ByteBuf uncompressed = CompressionCodecProvider.getCompressionCodec(md.getCompression())
                .decode(buf, md.getUncompressedSize());
        List<Sample> messages = new ArrayList<>();
        if (md.hasNumMessagesInBatch()) {
            for (int i = 0; i < md.getNumMessagesInBatch(); i++) {
                SingleMessageMetadata smm = new SingleMessageMetadata();
                ByteBuf payload = Commands.deSerializeSingleMessageInBatch(uncompressed, smm, i,
                        md.getNumMessagesInBatch());
                messages.add(new Sample(smm.hasPartitionKey() ? smm.getPartitionKey() : null,
                        smm.hasOrderingKey() ? smm.getOrderingKey() : null, props(smm.getPropertiesList()),
                        smm.getEventTime(), smm.getSequenceId(), bytes(payload)));
            }
        } else {
            messages.add(new Sample(md.hasPartitionKey() ? md.getPartitionKey() : null,
                    md.hasOrderingKey() ? md.getOrderingKey() : null, props(md.getPropertiesList()), md.getEventTime(),
                    md.getSequenceId(), bytes(uncompressed)));
        }
        return new Read(md, messages);
    }

    private static Map<String, String> props(List<KeyValue> kvs) {
        Map<String, String> props = new LinkedHashMap<>();
        kvs.forEach(kv -> props.put(kv.getKey(), kv.getValue()));
        return props;
    }

    private static byte[] bytes(ByteBuf b) {
        byte[] bytes = new byte[b.readableBytes()];
        b.getBytes(b.readerIndex(), bytes);
        return bytes;
    }
}
