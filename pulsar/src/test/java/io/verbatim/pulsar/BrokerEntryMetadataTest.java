package io.verbatim.pulsar;

import static org.assertj.core.api.Assertions.assertThat;

import io.verbatim.model.Layout;
import io.verbatim.model.Segment;
import io.verbatim.model.entry.Entries;
import io.verbatim.model.entry.Entry;
import io.verbatim.pipeline.ReplicationCursor;
import io.verbatim.pipeline.StartAt;
import io.verbatim.pipeline.StoredEntry;
import io.verbatim.pulsar.broker.PulsarProcess;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.Schema;
import org.junit.jupiter.api.Test;

/**
 * A broker that exposes its entry metadata to clients puts it (magic {@code 0x0e02}) in front of every entry it
 * dispatches. The cursor hands over the stored entry without it: otherwise no entry would parse, and the
 * replicator would pass them all over as unroutable.
 */
class BrokerEntryMetadataTest {
    private static final Duration WAIT = Duration.ofSeconds(30);

    @Test
    void theCursorSkipsTheBrokersEntryMetadata() throws Exception {
        Path data = Path.of("target", "pulsar-entry-metadata-" + ProcessHandle.current().pid()).toAbsolutePath();
        PulsarProcess.Options options = PulsarProcess.Options.of(data)
                .withConf("exposingBrokerEntryMetadataToClientEnabled", "true")
                .withConf("brokerEntryMetadataInterceptors",
                        "org.apache.pulsar.common.intercept.AppendIndexMetadataInterceptor");
        try (PulsarProcess broker = PulsarProcess.start(options);
             PulsarStorage storage = PulsarStorage.connect(PulsarStorage.Settings.of(broker.serviceUrl(),
                     broker.webUrl(), "public/default"))) {
            Segment segment = Layout.initial(1, 1, 0).segments().values().iterator().next();
            String topic = "persistent://public/default/indexed";
            storage.createSegment(topic, segment).block(WAIT);
            ReplicationCursor cursor = storage.log(topic, segment).cursor("c", StartAt.EARLIEST).block(WAIT);
            try (Producer<byte[]> producer = storage.client().newProducer(Schema.BYTES)
                    .topic(storage.segmentTopic(topic, segment)).enableBatching(false).create()) {
                for (int i = 0; i < 3; i++) {
                    producer.newMessage().key("k" + i).value(("m" + i).getBytes(StandardCharsets.UTF_8)).send();
                }
            }
            List<StoredEntry> read = cursor.read().take(3).collectList().block(WAIT);
            assertThat(read).hasSize(3);
            for (int i = 0; i < 3; i++) {
                StoredEntry stored = read.get(i);
                assertThat(stored.bytes().getShort(0)).as("the stored entry's magic").isEqualTo((short) 0x0e01);
                Entry entry = Entry.parse(stored.bytes());
                assertThat(new String(Entries.messages(entry).get(0).payloadBytes(), StandardCharsets.UTF_8))
                        .isEqualTo("m" + i);
            }
        }
    }
}
