package io.verbatim.pulsar;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.scurrilous.circe.checksum.Crc32cIntChecksum;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.verbatim.model.entry.Entries;
import io.verbatim.model.entry.Entry;
import io.verbatim.model.entry.Message;
import io.verbatim.model.entry.ReplicationStamp;
import io.verbatim.model.entry.SourcePosition;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.pulsar.client.admin.PulsarAdmin;
import org.apache.pulsar.client.api.CompressionType;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.ProducerBuilder;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.RawMessage;
import org.apache.pulsar.client.api.RawReader;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.api.SubscriptionInitialPosition;
import org.apache.pulsar.client.impl.GeoReplicationProducerImpl;
import org.apache.pulsar.client.impl.MessageIdImpl;
import org.apache.pulsar.client.impl.MessageImpl;
import org.apache.pulsar.client.impl.ProducerBase;
import org.apache.pulsar.client.impl.ProducerBuilderImpl;
import org.apache.pulsar.common.api.proto.MessageIdData;
import org.apache.pulsar.common.api.proto.MessageMetadata;
import org.apache.pulsar.common.policies.data.Policies;
import org.apache.pulsar.common.protocol.Commands;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * Spike for issue 14 on a real Pulsar 4.0.7 standalone broker in this JVM: a producer batch read back
 * as the raw stored entry, then published intact through a replicator producer into a deduplicated
 * namespace, as Pulsar's own geo-replicator does.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class RawEntrySpikeTest {
    private static final String SOURCE_CLUSTER = "east";
    private static final String SOURCE_NS = "public/east";
    private static final String DEST_NS = "public/west";
    private static final long SEGMENT_ID = 7;
    private static final String SOURCE_TOPIC = "persistent://" + SOURCE_NS + "/orders-0000-ffff-" + SEGMENT_ID;
    private static final String DEST_TOPIC = "persistent://" + DEST_NS + "/orders-0000-ffff-" + SEGMENT_ID;
    private static final String REPL_PRODUCER = "pulsar.repl." + SOURCE_CLUSTER + "." + SEGMENT_ID;
    private static final int BATCH = 5;

    private EmbeddedPulsar pulsar;
    private PulsarClient client;
    private PulsarAdmin admin;

    /** The raw stored source entry and its position, read in step 2, published in step 3. */
    private byte[] sourceEntry;
    private long sourceLedger;
    private long sourceEntryId;

    @BeforeAll
    void startBroker() throws Exception {
        pulsar = EmbeddedPulsar.start();
        System.out.printf("[spike] broker started in %d ms (%s, %s)%n", pulsar.startMillis(), pulsar.brokerUrl(),
                pulsar.webUrl());
        client = pulsar.newClient();
        admin = pulsar.newAdmin();
    }

    @AfterAll
    void stopBroker() throws Exception {
        if (client != null) {
            client.close();
        }
        if (admin != null) {
            admin.close();
        }
        if (pulsar != null) {
            pulsar.close();
            System.out.printf("[spike] broker stopped in %d ms%n", pulsar.stopMillis());
        }
        System.out.printf("[spike] test JVM peak RSS (VmHWM) %d MB%n", EmbeddedPulsar.peakRssKb() / 1024);
    }

    @Test
    @Order(1)
    void namespacesWithBrokerDeduplicationOnTheDestination() throws Exception {
        admin.namespaces().createNamespace(SOURCE_NS, Set.of(EmbeddedPulsar.CLUSTER));
        admin.namespaces().createNamespace(DEST_NS, Set.of(EmbeddedPulsar.CLUSTER));
        admin.namespaces().setDeduplicationStatus(DEST_NS, true);
        // the replicator producer expects a non-partitioned destination that exists (as the geo-replicator's does)
        admin.topics().createNonPartitionedTopic(DEST_TOPIC);

        Policies dest = admin.namespaces().getPolicies(DEST_NS);
        assertThat(dest.deduplicationEnabled).isTrue();
        assertThat(admin.namespaces().getPolicies(SOURCE_NS).deduplicationEnabled).isNull();
    }

    @Test
    @Order(2)
    void aBatchedLz4EntryReadBackRaw() throws Exception {
        List<String> values = new ArrayList<>();
        try (Producer<byte[]> producer = client.newProducer(Schema.BYTES)
                .topic(SOURCE_TOPIC)
                .producerName("app-1")
                .enableBatching(true)
                .batchingMaxMessages(BATCH)
                .batchingMaxPublishDelay(10, TimeUnit.SECONDS)
                .compressionType(CompressionType.LZ4)
                .create()) {
            List<CompletableFuture<MessageId>> sends = new ArrayList<>();
            for (int i = 0; i < BATCH; i++) {
                String v = "order-" + i + " " + "x".repeat(200); // compressible
                values.add(v);
                sends.add(producer.newMessage().key("k" + i).value(v.getBytes(StandardCharsets.UTF_8)).sendAsync());
            }
            producer.flush();
            CompletableFuture.allOf(sends.toArray(CompletableFuture[]::new)).get(10, TimeUnit.SECONDS);
        }

        // A durable subscription read as raw: RawReader (pulsar-broker) over a RawConsumerImpl, Exclusive, Earliest.
        RawReader reader = RawReader.create(client, SOURCE_TOPIC, "verbatim.repl.west").get(10, TimeUnit.SECONDS);
        try (RawMessage raw = reader.readNextAsync().get(10, TimeUnit.SECONDS)) {
            ByteBuf stored = raw.getHeadersAndPayload();
            sourceEntry = ByteBufUtil.getBytes(stored, stored.readerIndex(), stored.readableBytes());
            MessageIdData id = raw.getMessageIdData();
            sourceLedger = id.getLedgerId();
            sourceEntryId = id.getEntryId();

            System.out.printf("[spike] raw entry at %d:%d, %d bytes, first 48: %s%n", sourceLedger, sourceEntryId,
                    sourceEntry.length, HexFormat.ofDelimiter(" ").formatHex(sourceEntry, 0,
                            Math.min(48, sourceEntry.length)));

            // Pulsar's own reading: magic + CRC32C, then the metadata
            ByteBuf check = Unpooled.wrappedBuffer(sourceEntry);
            assertThat(Commands.hasChecksum(check)).isTrue();
            int storedCrc = Commands.readChecksum(check); // moves past magic + checksum
            assertThat(Crc32cIntChecksum.computeChecksum(check.slice())).isEqualTo(storedCrc);
            MessageMetadata md = Commands.parseMessageMetadata(Unpooled.wrappedBuffer(sourceEntry));
            System.out.printf("[spike] metadata: producer_name=%s sequence_id=%d publish_time=%d"
                            + " num_messages_in_batch=%d compression=%s uncompressed_size=%d replicated_from=%s"
                            + " highest_sequence_id=%d%n",
                    md.getProducerName(), md.getSequenceId(), md.getPublishTime(), md.getNumMessagesInBatch(),
                    md.getCompression(), md.getUncompressedSize(),
                    md.hasReplicatedFrom() ? md.getReplicatedFrom() : "-", md.getHighestSequenceId());
            assertThat(md.getProducerName()).isEqualTo("app-1");
            assertThat(md.getNumMessagesInBatch()).isEqualTo(BATCH);
            assertThat(md.getCompression()).isEqualTo(org.apache.pulsar.common.api.proto.CompressionType.LZ4);
            assertThat(md.hasReplicatedFrom()).isFalse();

            // Verbatim's reading of the same bytes: checksum verified, the LZ4 batch decoded
            Entry entry = Entry.parse(ByteBuffer.wrap(sourceEntry));
            assertThat(entry.checksum()).isEqualTo(storedCrc);
            assertThat(entry.isBatch()).isTrue();
            List<Message> messages = Entries.messages(entry);
            assertThat(messages).hasSize(BATCH);
            for (int i = 0; i < BATCH; i++) {
                assertThat(messages.get(i).key()).contains("k" + i);
                assertThat(new String(messages.get(i).payloadBytes(), StandardCharsets.UTF_8)).isEqualTo(values.get(i));
            }
            System.out.printf("[spike] verbatim parses it: %s, payload %d bytes (uncompressed %d)%n", entry,
                    entry.payload().remaining(), entry.metadata().getUncompressedSize());

            // the cursor moves only when told: a cumulative acknowledgement of the entry
            reader.acknowledgeCumulativeAsync(raw.getMessageId(), Map.of()).get(10, TimeUnit.SECONDS);
        } finally {
            reader.closeAsync().get(10, TimeUnit.SECONDS);
        }
    }

    @Test
    @Order(3)
    void theCursorResumesAfterItsCumulativeAcknowledgement() throws Exception {
        assertThat(sourceEntry).as("step 2 ran").isNotNull();
        try (Producer<byte[]> producer = client.newProducer(Schema.BYTES).topic(SOURCE_TOPIC).producerName("app-2")
                .enableBatching(false).create()) {
            producer.send("after the ack".getBytes(StandardCharsets.UTF_8));
        }
        // the same durable subscription, reopened: the acknowledged entry is not read again
        RawReader reader = RawReader.create(client, SOURCE_TOPIC, "verbatim.repl.west").get(10, TimeUnit.SECONDS);
        try (RawMessage raw = reader.readNextAsync().get(10, TimeUnit.SECONDS)) {
            Entry entry = Entry.parse(ByteBuffer.wrap(ByteBufUtil.getBytes(raw.getHeadersAndPayload())));
            assertThat(entry.metadata().getProducerName()).isEqualTo("app-2");
            assertThat(entry.isBatch()).isFalse(); // batching off: no num_messages_in_batch
            assertThat(raw.getMessageIdData().getEntryId()).isEqualTo(sourceEntryId + 1);
        } finally {
            reader.closeAsync().get(10, TimeUnit.SECONDS);
        }
    }

    @Test
    @Order(4)
    void theReplicatorPrefixIsReservedForSubscriptions() {
        // PersistentTopic.internalSubscribe refuses subscription names starting with replicatorPrefix
        // ("pulsar.repl"): Verbatim's cursor cannot be named pulsar.repl.<remote> on a real broker.
        assertThatThrownBy(() -> RawReader.create(client, SOURCE_TOPIC, "pulsar.repl.west", true, false)
                .get(10, TimeUnit.SECONDS))
                .hasMessageContaining("reserved subscription name");
    }

    @Test
    @Order(5)
    void theRawEntryPublishedIntactAndItsRepeatDropped() throws Exception {
        assertThat(sourceEntry).as("step 2 ran").isNotNull();
        Entry source = Entry.parse(ByteBuffer.wrap(sourceEntry));
        // Verbatim restamps the stored entry itself: replicated_from + __MSG_PROP_REPL_SOURCE_POSITION
        Entry restamped = source.restamp(new ReplicationStamp(SOURCE_CLUSTER,
                SourcePosition.of(sourceLedger, sourceEntryId)));
        byte[] restampedBytes = restamped.toByteArray();

        Producer<byte[]> producer = replicatorProducer(DEST_TOPIC);
        assertThat(producer).isInstanceOf(GeoReplicationProducerImpl.class);

        MessageId first = publishRaw(producer, restampedBytes);
        System.out.printf("[spike] published intact as %s%n", first);
        assertThat(((MessageIdImpl) first).getLedgerId()).isNotNegative();

        // the same entry again, same producer name, same sequence id and source position: the broker drops it
        MessageId again = publishRaw(producer, restampedBytes);
        System.out.printf("[spike] repeat answered %s%n", again);
        assertThat(again.toString()).startsWith("-1:-1");
        producer.close();

        // a new producer with the same name (a restarted replicator) is deduplicated the same way
        Producer<byte[]> restarted = replicatorProducer(DEST_TOPIC);
        MessageId afterRestart = publishRaw(restarted, restampedBytes);
        System.out.printf("[spike] repeat from a restarted producer answered %s%n", afterRestart);
        assertThat(afterRestart.toString()).startsWith("-1:-1");
        restarted.close();

        // the destination holds exactly one entry: the source's payload bytes, its batch, the restamped metadata
        List<byte[]> stored = readAllRaw(DEST_TOPIC, "verbatim.check");
        assertThat(stored).hasSize(1);
        Entry dest = Entry.parse(ByteBuffer.wrap(stored.get(0)));
        System.out.printf("[spike] destination entry: %s, replicated_from=%s, source position=%s%n", dest,
                dest.metadata().getReplicatedFrom(), dest.sourcePosition().orElse(null));
        assertThat(dest.payload()).isEqualTo(source.payload());
        assertThat(dest.metadata().getNumMessagesInBatch()).isEqualTo(BATCH);
        assertThat(dest.metadata().getProducerName()).isEqualTo("app-1");
        assertThat(dest.metadata().getSequenceId()).isEqualTo(source.metadata().getSequenceId());
        assertThat(dest.metadata().getReplicatedFrom()).isEqualTo(SOURCE_CLUSTER);
        assertThat(dest.sourcePosition()).contains(SourcePosition.of(sourceLedger, sourceEntryId));
        // the whole stored entry is the restamped one, byte for byte (Pulsar re-serialised the same metadata)
        System.out.printf("[spike] destination bytes equal the restamped entry: %s%n",
                Arrays.equals(stored.get(0), restampedBytes));

        // and a plain consumer sees the batch's five messages
        try (Consumer<byte[]> consumer = client.newConsumer(Schema.BYTES).topic(DEST_TOPIC)
                .subscriptionName("app-check").subscriptionInitialPosition(SubscriptionInitialPosition.Earliest)
                .subscribe()) {
            for (int i = 0; i < BATCH; i++) {
                org.apache.pulsar.client.api.Message<byte[]> m = consumer.receive(10, TimeUnit.SECONDS);
                assertThat(m).isNotNull();
                assertThat(m.getKey()).isEqualTo("k" + i);
                consumer.acknowledge(m);
            }
        }
    }

    @Test
    @Order(6)
    void onPulsar407ARepeatAfterTheDestinationReloadsIsStoredAgain() throws Exception {
        assertThat(sourceEntry).as("step 2 ran").isNotNull();
        byte[] restampedBytes = restampedSourceEntry();
        // The V2 watermark (<producer>_LID/_EID) lives in memory and in the dedup snapshot, taken every
        // brokerDeduplicationEntriesInterval (1000) entries; a reload replays the entries after the snapshot
        // but 4.0.7 rebuilds only producer_name -> sequence_id from them, not the watermark.
        admin.topics().unload(DEST_TOPIC);
        Producer<byte[]> producer = replicatorProducer(DEST_TOPIC);
        MessageId id = publishRaw(producer, restampedBytes);
        producer.close();
        List<byte[]> stored = readAllRaw(DEST_TOPIC, "verbatim.check2");
        System.out.printf("[spike] after unload the repeat answered %s; destination holds %d entries%n", id,
                stored.size());
        // Pinned: a duplicate. If this fails, Pulsar now rebuilds the watermark on reload (newer code does).
        assertThat(((MessageIdImpl) id).getLedgerId()).isNotNegative();
        assertThat(stored).hasSize(2);
    }

    @Test
    @Order(7)
    void withASnapshotPerEntryTheRepeatAfterAReloadIsDropped() throws Exception {
        assertThat(sourceEntry).as("step 2 ran").isNotNull();
        byte[] restampedBytes = restampedSourceEntry();
        String topic = DEST_TOPIC + "-snap";
        pulsar.config().setBrokerDeduplicationEntriesInterval(1); // read when the topic loads
        try {
            admin.topics().createNonPartitionedTopic(topic);
            // a subscription before the data: with no subscription and no retention, a reload trims the ledger
            // that only the pulsar.dedup cursor had "consumed" (seen here: the entry was gone after unload)
            admin.topics().createSubscription(topic, "verbatim.check", MessageId.earliest);
            Producer<byte[]> producer = replicatorProducer(topic);
            assertThat(((MessageIdImpl) publishRaw(producer, restampedBytes)).getLedgerId()).isNotNegative();
            producer.close();
            // the snapshot is the dedup cursor's properties: wait for the markDelete that stores it
            String key = REPL_PRODUCER + "_LID";
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            Map<String, Long> props = Map.of();
            while (System.nanoTime() < deadline) {
                var cursor = admin.topics().getInternalStats(topic).cursors.get("pulsar.dedup");
                props = cursor == null || cursor.properties == null ? Map.of() : cursor.properties;
                if (props.containsKey(key)) {
                    break;
                }
                Thread.sleep(50);
            }
            System.out.printf("[spike] dedup snapshot (cursor pulsar.dedup properties): %s%n", props);
            assertThat(props).containsKey(key);

            admin.topics().unload(topic);
            Producer<byte[]> again = replicatorProducer(topic);
            MessageId id = publishRaw(again, restampedBytes);
            again.close();
            System.out.printf("[spike] with a snapshot per entry, the repeat after unload answered %s%n", id);
            assertThat(id.toString()).startsWith("-1:-1");
            assertThat(readAllRaw(topic, "verbatim.check")).hasSize(1);
        } finally {
            pulsar.config().setBrokerDeduplicationEntriesInterval(1000);
        }
    }

    @Test
    @Order(8)
    void publishedIntactWithoutNettyTypes() throws Exception {
        assertThat(sourceEntry).as("step 2 ran").isNotNull();
        // The same publish through MessageImpl.create(MessageMetadata, java.nio.ByteBuffer, Schema, topic): no
        // io.netty type in the caller's code, so it compiles the same against the shaded pulsar-client, whose
        // ByteBuf is org.apache.pulsar.shade.io.netty.buffer.ByteBuf.
        Entry restamped = Entry.parse(ByteBuffer.wrap(sourceEntry))
                .restamp(new ReplicationStamp(SOURCE_CLUSTER, SourcePosition.of(sourceLedger, sourceEntryId)));
        String topic = DEST_TOPIC + "-nio";
        admin.topics().createNonPartitionedTopic(topic);
        admin.topics().createSubscription(topic, "verbatim.check", MessageId.earliest);
        MessageMetadata md = new MessageMetadata();
        md.parseFrom(restamped.metadata().toByteArray()); // Verbatim's protobuf metadata -> Pulsar's LightProto
        Producer<byte[]> producer = replicatorProducer(topic);
        MessageImpl<byte[]> msg = MessageImpl.create(md, restamped.payload(), Schema.BYTES, topic);
        MessageId id = ((ProducerBase<byte[]>) producer).sendAsync(msg).get(10, TimeUnit.SECONDS);
        MessageImpl<byte[]> repeat = MessageImpl.create(md, restamped.payload(), Schema.BYTES, topic);
        MessageId dup = ((ProducerBase<byte[]>) producer).sendAsync(repeat).get(10, TimeUnit.SECONDS);
        producer.close();
        System.out.printf("[spike] netty-free publish: %s, repeat %s%n", id, dup);
        assertThat(dup.toString()).startsWith("-1:-1");
        List<byte[]> stored = readAllRaw(topic, "verbatim.check");
        assertThat(stored).hasSize(1);
        assertThat(stored.get(0)).isEqualTo(restamped.toByteArray());
    }

    private byte[] restampedSourceEntry() {
        return Entry.parse(ByteBuffer.wrap(sourceEntry))
                .restamp(new ReplicationStamp(SOURCE_CLUSTER, SourcePosition.of(sourceLedger, sourceEntryId)))
                .toByteArray();
    }

    private Producer<byte[]> replicatorProducer(String topic) throws Exception {
        ProducerBuilder<byte[]> builder = client.newProducer(Schema.BYTES)
                .topic(topic)
                .producerName(REPL_PRODUCER)
                .enableBatching(false) // each entry, a producer batch included, goes as one message
                .compressionType(CompressionType.NONE) // the payload is already compressed: never again
                .sendTimeout(0, TimeUnit.SECONDS)
                .blockIfQueueFull(true);
        // as AbstractReplicator does: a GeoReplicationProducerImpl, which matches receipts by source position
        ((ProducerBuilderImpl<byte[]>) builder).getConf().setReplProducer(true);
        ((ProducerBuilderImpl<byte[]>) builder).getConf().setNonPartitionedTopicExpected(true);
        return builder.create();
    }

    /** Publishes a stored entry's bytes as one message, its metadata carried: what the geo-replicator does. */
    private static MessageId publishRaw(Producer<byte[]> producer, byte[] entryBytes) throws Exception {
        MessageImpl<byte[]> msg = MessageImpl.deserializeSkipBrokerEntryMetaData(Unpooled.wrappedBuffer(entryBytes));
        return ((ProducerBase<byte[]>) producer).sendAsync(msg).get(10, TimeUnit.SECONDS);
    }

    private List<byte[]> readAllRaw(String topic, String subscription) throws Exception {
        RawReader reader = RawReader.create(client, topic, subscription).get(10, TimeUnit.SECONDS);
        List<byte[]> out = new ArrayList<>();
        try {
            while (reader.hasMessageAvailableAsync().get(10, TimeUnit.SECONDS)) {
                try (RawMessage raw = reader.readNextAsync().get(10, TimeUnit.SECONDS)) {
                    ByteBuf b = raw.getHeadersAndPayload();
                    out.add(ByteBufUtil.getBytes(b, b.readerIndex(), b.readableBytes()));
                }
            }
        } finally {
            reader.closeAsync().get(10, TimeUnit.SECONDS);
        }
        return out;
    }
}
