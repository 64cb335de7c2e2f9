package io.verbatim.pulsar;

import io.verbatim.model.Segment;
import io.verbatim.model.entry.Entry;
import io.verbatim.pipeline.ProducerSession;
import io.verbatim.pipeline.ProducerSessionContract;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** Replicator producers into a deduplicated namespace pass the producer session contract, on a real broker. */
class PulsarProducerSessionTest extends ProducerSessionContract {
    private static PulsarFixture pulsar;
    private final Segment segment = PulsarFixture.onlySegment();

    @BeforeAll
    static void connect() {
        pulsar = new PulsarFixture("public/session-contract");
    }

    @AfterAll
    static void disconnect() {
        pulsar.close();
    }

    @Override
    protected Destination newDestination() {
        String topic = pulsar.newTopic("orders");
        pulsar.storage.createSegment(topic, segment).block(Duration.ofSeconds(30));
        return new Destination() {
            @Override
            public ProducerSession open(String producerName) {
                return pulsar.storage.session(topic, segment, producerName);
            }

            @Override
            public List<Entry> stored() {
                return pulsar.stored(topic, segment);
            }

            @Override
            public void seal() {
                pulsar.storage.seal(topic, segment).block(Duration.ofSeconds(30));
            }
        };
    }
}
