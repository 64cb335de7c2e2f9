package io.verbatim.model.entry;

import static org.assertj.core.api.Assertions.assertThat;

import io.verbatim.model.Property;
import io.verbatim.model.proto.CompressionType;
import io.verbatim.model.proto.MessageMetadata;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** Entries Verbatim writes are read by Pulsar's code, and the other way round, for every codec. */
class PulsarCompatibilityTest {
    private static final MessageMetadata TEMPLATE = MessageMetadata.newBuilder().setProducerName("verbatim-producer")
            .setSequenceId(0).setPublishTime(1_700_000_000_000L).build();

    @ParameterizedTest
    @EnumSource(CompressionType.class)
    void pulsarReadsTheBatchesVerbatimWrites(CompressionType codec) {
        Property.forAll("Pulsar reads Verbatim's " + codec + " batches", 0x5eed_0100L + codec.getNumber(), 60, r -> {
            List<Sample> samples = Sample.randomBatch(r, 1 + r.nextInt(40), r.nextInt(2048));
            Entry entry = Entries.batch(TEMPLATE, samples.stream().map(Sample::toMessage).toList(), codec);
            PulsarOracle.Read read = PulsarOracle.read(entry.toByteArray());
            assertThat(read.messages()).containsExactlyElementsOf(samples);
            assertThat(read.metadata().getProducerName()).isEqualTo("verbatim-producer");
            assertThat(read.metadata().getNumMessagesInBatch()).isEqualTo(samples.size());
        });
    }

    @ParameterizedTest
    @EnumSource(CompressionType.class)
    void pulsarReadsTheSingleMessagesVerbatimWrites(CompressionType codec) {
        Property.forAll("Pulsar reads Verbatim's " + codec + " singles", 0x5eed_0110L + codec.getNumber(), 60, r -> {
            Sample sample = Sample.random(r, r.nextInt(1000), r.nextInt(4096));
            Entry entry = Entries.single(sample.toSingleMetadata("verbatim-producer"),
                    ByteBuffer.wrap(sample.payload()), codec);
            PulsarOracle.Read read = PulsarOracle.read(entry.toByteArray());
            assertThat(read.metadata().hasNumMessagesInBatch()).isFalse();
            assertThat(read.messages()).containsExactly(sample);
        });
    }

    @ParameterizedTest
    @EnumSource(CompressionType.class)
    void verbatimReadsTheEntriesPulsarWrites(CompressionType codec) {
        Property.forAll("Verbatim reads Pulsar's " + codec + " entries", 0x5eed_0120L + codec.getNumber(), 60, r -> {
            boolean batch = r.nextBoolean();
            List<Sample> samples = Sample.randomBatch(r, batch ? 1 + r.nextInt(40) : 1, r.nextInt(2048));
            Entry entry = Entry.parse(ByteBuffer.wrap(PulsarOracle.write(samples, batch, codec)));
            assertThat(entry.isBatch()).isEqualTo(batch);
            assertThat(entry.metadata().getCompression()).isEqualTo(codec);
            assertThat(entry.facts().isStamped()).isFalse();
            List<Sample> read = Entries.messages(entry).stream().map(Sample::of).toList();
            assertThat(read).containsExactlyElementsOf(samples);
        });
    }

    @ParameterizedTest
    @EnumSource(CompressionType.class)
    void pulsarReadsRestampedEntriesWithIdenticalMessages(CompressionType codec) {
        Property.forAll("restamped " + codec + " entries stay Pulsar entries", 0x5eed_0130L + codec.getNumber(), 40,
                r -> {
                    List<Sample> samples = Sample.randomBatch(r, 1 + r.nextInt(20), r.nextInt(1024));
                    Entry source = Entry.parse(ByteBuffer.wrap(PulsarOracle.write(samples, true, codec)));
                    SourcePosition position = new SourcePosition(r.nextInt(1000), r.nextInt(100000),
                            r.nextBoolean() ? SourcePosition.WHOLE : r.nextInt(8));
                    Entry restamped = source.restamp(new ReplicationStamp("us-east", position));
                    PulsarOracle.Read read = PulsarOracle.read(restamped.toByteArray());
                    assertThat(read.messages()).containsExactlyElementsOf(samples);
                    assertThat(read.metadata().getReplicatedFrom()).isEqualTo("us-east");
                    Map<String, String> props = read.metadata().getPropertiesList().stream()
                            .collect(Collectors.toMap(kv -> kv.getKey(), kv -> kv.getValue()));
                    assertThat(props).containsEntry(ReplicationStamp.SOURCE_POSITION_PROPERTY, position.toProperty());
                });
    }
}
