package io.verbatim.runtime.broker;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.verbatim.embedded.MemorySegments;
import io.verbatim.model.Layout;
import io.verbatim.model.entry.Entries;
import io.verbatim.model.entry.Entry;
import io.verbatim.model.entry.Message;
import io.verbatim.model.entry.ReplicationStamp;
import io.verbatim.model.entry.SourcePosition;
import io.verbatim.model.proto.CompressionType;
import io.verbatim.model.proto.MessageMetadata;
import io.verbatim.pipeline.ProducerSession;
import io.verbatim.runtime.TestNet;
import io.verbatim.runtime.storage.MemoryTopicStorage;
import io.verbatim.runtime.storage.TopicStorage;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.scheduler.Schedulers;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;
import reactor.test.StepVerifier;

/**
 * Issue 23 item 6: a peer's layout stream names its brokers, and a fake eu-west named a broker of its own
 * choosing: it received us-east's credential and 8 entries. A replicator connects to the broker URLs
 * configured for the peer only; one a layout names that is not configured is ignored and counted.
 */
class NetworkRemoteTest {
    private static final String TOPIC = "t";
    private final MemorySegments storage = new MemorySegments("b", Layout.initial(1, 4, 0), Schedulers.parallel());
    /** Whatever reached the address the peer named: "method target authorization". */
    private final List<String> stolen = new CopyOnWriteArrayList<>();
    private final DisposableServer stranger = HttpServer.create().host("127.0.0.1").port(0).handle((req, res) -> {
        stolen.add(req.method() + " " + req.uri() + " " + req.requestHeaders().get("Authorization"));
        return res.sendWebsocket((in, out) -> in.receive().then());
    }).bindNow();
    private final String strangerUrl = "http://127.0.0.1:" + stranger.port();
    private List<String> named = List.of(strangerUrl);
    /** b's broker, configured at a's; its layouts name whatever {@link #named} holds. */
    private final IngestServer broker = new IngestServer("b", 0, t -> t.equals(TOPIC)
            ? Optional.<TopicStorage>of(new MemoryTopicStorage(storage)) : Optional.empty(), () -> named,
            TestNet.server("b"), Set.of("a"), new SimpleMeterRegistry(), IngestServer.Arrival.NONE).start(0);

    @AfterEach
    void stop() {
        broker.stop();
        stranger.disposeNow();
    }

    private static Entry entry(long n) {
        return Entries.batch(MessageMetadata.newBuilder().setProducerName("p").setSequenceId(n).setPublishTime(0).build(),
                List.of(Message.of("k", ("m" + n).getBytes())), CompressionType.NONE)
                .restamp(new ReplicationStamp("a", SourcePosition.of(0, n)));
    }

    @Test
    void aBrokerALayoutNamesThatIsNotConfiguredReceivesNoConnectionAndNoCredential() {
        NetworkRemote remote = new NetworkRemote("b", TOPIC, List.of(broker.baseUrl()), TestNet.client("a"),
                Duration.ZERO, Heartbeat.DEFAULT, Schedulers.parallel());
        try {
            StepVerifier.create(remote.layouts().take(1)).expectNextCount(1).verifyComplete();
            assertThat(remote.ignoredBrokerUrls()).isEqualTo(1);
            assertThat(remote.owner(0)).isEqualTo(broker.baseUrl());
            ProducerSession session = remote.open(0, "pulsar.repl.a.0");
            for (long n = 0; n < 8; n++) {
                StepVerifier.create(session.send(entry(n), SourcePosition.of(0, n)))
                        .expectNext(ProducerSession.Receipt.PERSISTED).verifyComplete();
            }
            session.dispose();
            assertThat(storage.log(0).entries()).as("the configured broker has them").hasSize(8);
            assertThat(stolen).as("nothing reached the broker the peer named").isEmpty();
        } finally {
            remote.close();
        }
    }

    @Test
    void theConfiguredBrokersALayoutNamesKeepItsOrderAndTheOthersAreLeftOut() {
        named = List.of(strangerUrl, broker.baseUrl());
        NetworkRemote remote = new NetworkRemote("b", TOPIC, List.of(broker.baseUrl()), TestNet.client("a"),
                Duration.ZERO, Heartbeat.DEFAULT, Schedulers.parallel());
        try {
            StepVerifier.create(remote.layouts().take(1)).expectNextCount(1).verifyComplete();
            for (long segment = 0; segment < 4; segment++) {
                assertThat(remote.owner(segment)).isEqualTo(broker.baseUrl());
            }
            assertThat(remote.ignoredBrokerUrls()).isEqualTo(1);
            assertThat(stolen).isEmpty();
        } finally {
            remote.close();
        }
    }
}
