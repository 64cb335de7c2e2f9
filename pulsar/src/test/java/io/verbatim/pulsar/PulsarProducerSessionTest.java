package io.verbatim.pulsar;

import static org.assertj.core.api.Assertions.assertThat;

import io.verbatim.model.Segment;
import io.verbatim.model.entry.Entry;
import io.verbatim.model.entry.SourcePosition;
import io.verbatim.model.proto.CompressionType;
import io.verbatim.pipeline.ProducerSession;
import io.verbatim.pipeline.ProducerSessionContract;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

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

    /**
     * A session's producer is closed off Pulsar's I/O threads; a new session of the same name (a restarted
     * replicator) waits for that close rather than reach the broker first and be refused as busy.
     */
    @Test
    void aSessionOpenedAsTheLastOneOfItsNameClosesIsNotRefusedAsBusy() {
        Destination d = newDestination();
        for (int i = 0; i < 10; i++) {
            ProducerSession session = d.open("pulsar.repl.east.busy");
            SourcePosition p = SourcePosition.of(1, i);
            assertThat(session.send(stamped(batch(i, 1, CompressionType.NONE), p), p).block(Duration.ofSeconds(30)))
                    .as("send %d, in a session opened as the one before closed", i)
                    .isEqualTo(ProducerSession.Receipt.PERSISTED);
            session.dispose();
        }
        assertThat(d.stored()).hasSize(10);
    }
}
