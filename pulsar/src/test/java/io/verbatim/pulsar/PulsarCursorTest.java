package io.verbatim.pulsar;

import io.verbatim.model.Segment;
import io.verbatim.pipeline.ReplicationCursorContract;
import io.verbatim.pipeline.SourceSegmentLog;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClientException;
import org.apache.pulsar.client.api.Schema;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** A durable subscription read raw passes the cursor contract, on a real broker. */
class PulsarCursorTest extends ReplicationCursorContract {
    private static PulsarFixture pulsar;
    /** Each log's scalable topic, to produce to and seal. */
    private final Map<SourceSegmentLog, String> topics = new HashMap<>();
    private final Segment segment = PulsarFixture.onlySegment();

    @BeforeAll
    static void connect() {
        pulsar = new PulsarFixture("public/cursor-contract");
    }

    @AfterAll
    static void disconnect() {
        pulsar.close();
    }

    @Override
    protected SourceSegmentLog newLog() {
        String topic = pulsar.newTopic("orders");
        pulsar.storage.createSegment(topic, segment).block(Duration.ofSeconds(30));
        SourceSegmentLog log = pulsar.storage.log(topic, segment);
        topics.put(log, topic);
        return log;
    }

    @Override
    protected void append(SourceSegmentLog log, int count) {
        String name = pulsar.storage.segmentTopic(topics.get(log), segment);
        try (Producer<byte[]> producer = pulsar.storage.client().newProducer(Schema.BYTES).topic(name)
                .enableBatching(false).create()) {
            for (int i = 0; i < count; i++) {
                producer.send(new byte[] {(byte) i});
            }
        } catch (PulsarClientException e) {
            throw new IllegalStateException("cannot append to " + name, e);
        }
    }

    @Override
    protected void seal(SourceSegmentLog log) {
        pulsar.storage.seal(topics.get(log), segment).block(Duration.ofSeconds(30));
    }
}
