package io.verbatim.pulsar;

import static org.assertj.core.api.Assertions.assertThat;

import io.verbatim.model.Segment;
import io.verbatim.model.entry.Entries;
import io.verbatim.model.entry.Entry;
import io.verbatim.model.entry.ReplicationStamp;
import io.verbatim.model.entry.SourcePosition;
import io.verbatim.model.proto.CompressionType;
import io.verbatim.model.proto.MessageMetadata;
import io.verbatim.pipeline.ProducerSession;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;

/**
 * One entry replicated into a storage's segment the way a replicator does it (prepared namespace, created
 * segment topic, a {@code pulsar.repl.<source>.<segment>} session, the entry stamped with its source position),
 * then read back raw through a cursor: the whole path over the storage's clients, data and admin.
 */
final class OneEntry {
    private static final Duration WAIT = Duration.ofSeconds(30);

    private OneEntry() {
    }

    /** Replicates one entry into a fresh topic of {@code storage} and checks it is stored with its bytes. */
    static void replicateAndReadBack(PulsarStorage storage, String what) {
        storage.prepareNamespace().block(WAIT);
        PulsarFixture fixture = new PulsarFixture(storage);
        String topic = fixture.newTopic(what);
        Segment segment = PulsarFixture.onlySegment();
        storage.createSegment(topic, segment).block(WAIT);
        SourcePosition position = SourcePosition.of(7, 0);
        MessageMetadata template = MessageMetadata.newBuilder().setProducerName("app").setSequenceId(0)
                .setPublishTime(1_700_000_000_000L).build();
        Entry entry = Entries.single(template, ByteBuffer.wrap(("one entry over " + what)
                .getBytes(StandardCharsets.UTF_8)), CompressionType.NONE)
                .restamp(new ReplicationStamp("east", position));
        ProducerSession session = storage.session(topic, segment, "pulsar.repl.east." + segment.id());
        try {
            assertThat(session.send(entry, position).block(WAIT)).isEqualTo(ProducerSession.Receipt.PERSISTED);
        } finally {
            session.dispose();
        }
        List<Entry> stored = fixture.stored(topic, segment);
        assertThat(stored).hasSize(1);
        assertThat(stored.get(0).payload()).isEqualTo(entry.payload());
        assertThat(stored.get(0).metadata().getReplicatedFrom()).isEqualTo("east");
    }
}
