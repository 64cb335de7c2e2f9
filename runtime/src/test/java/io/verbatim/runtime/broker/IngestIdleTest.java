package io.verbatim.runtime.broker;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.verbatim.embedded.MemorySegments;
import io.verbatim.model.Layout;
import io.verbatim.model.Mutation;
import io.verbatim.model.entry.Entries;
import io.verbatim.model.entry.Entry;
import io.verbatim.model.entry.Message;
import io.verbatim.model.entry.ReplicationStamp;
import io.verbatim.model.entry.SourcePosition;
import io.verbatim.model.proto.CompressionType;
import io.verbatim.model.proto.MessageMetadata;
import io.verbatim.net.NetServer;
import io.verbatim.net.NetworkLimits;
import io.verbatim.pipeline.ProducerSession;
import io.verbatim.runtime.TestNet;
import io.verbatim.runtime.storage.MemoryTopicStorage;
import io.verbatim.runtime.storage.TopicStorage;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.scheduler.Schedulers;
import reactor.netty.http.client.HttpClient;

/** WebSockets and the idle timeout: a quiet healthy one stays (its client pings), a silent one is closed. */
class IngestIdleTest {
    /**
     * The request timeout bounds how long an HTTP request may take to arrive, never how long a WebSocket it
     * upgraded to may live (at 10 s, the default, every session of the demo was cut and logged an ERROR).
     */
    private static final NetworkLimits LIMITS = NetworkLimits.defaults().withIdleTimeout(Duration.ofMillis(600))
            .withRequestTimeout(Duration.ofMillis(300));
    private final MemorySegments storage = new MemorySegments("b", Layout.initial(1, 1, 0), Schedulers.parallel());
    private final NetServer net = TestNet.server("b", LIMITS);
    private final IngestServer server = new IngestServer("b", 0, t -> t.equals("t") ? Optional.<TopicStorage>of(new MemoryTopicStorage(storage)) : Optional.empty(), List::of, net,
            Set.of("a"), new SimpleMeterRegistry(), IngestServer.Arrival.NONE).start(0);
    private final NetworkRemote remote = new NetworkRemote("b", "t", List.of(server.baseUrl()),
            TestNet.client("a", LIMITS), Duration.ZERO, Heartbeat.DEFAULT, Schedulers.parallel());

    @AfterEach
    void stop() {
        remote.close();
        server.stop();
    }

    private static Entry entry(long n) {
        return Entries.batch(MessageMetadata.newBuilder().setProducerName("p").setSequenceId(n).setPublishTime(0).build(),
                List.of(Message.of("k", ("a/" + n).getBytes())), CompressionType.NONE)
                .restamp(new ReplicationStamp("a", SourcePosition.of(0, n)));
    }

    @Test
    void aQuietLayoutStreamAndSessionOutliveTheIdleTimeoutOnTheirPings() throws Exception {
        assertThat(remote.layouts().blockFirst(Duration.ofSeconds(5))).isEqualTo(storage.layout());
        ProducerSession session = remote.open(0, "pulsar.repl.a.0");
        assertThat(session.send(entry(0), SourcePosition.of(0, 0)).block(Duration.ofSeconds(5)))
                .isEqualTo(ProducerSession.Receipt.PERSISTED);
        Thread.sleep(2_000); // more than three idle timeouts of nothing but pings, six request timeouts
        assertThat(session.send(entry(1), SourcePosition.of(0, 1)).block(Duration.ofSeconds(5)))
                .as("the same session, still open").isEqualTo(ProducerSession.Receipt.PERSISTED);
        storage.apply(Mutation.split(0));
        assertThat(remote.layouts().filter(l -> l.epoch() == 1).blockFirst(Duration.ofSeconds(5))).isNotNull();
        assertThat(remote.connects()).as("the layout stream never reconnected").isEqualTo(1);
        assertThat(net.ports().get(0).open()).isEqualTo(2);
        session.dispose();
    }

    @Test
    void aSilentSessionIsClosedAfterTheIdleTimeout() {
        long t0 = System.nanoTime();
        // A client that never pings, as a peer that vanished without closing would be.
        TestNet.client("a", LIMITS).signing(HttpClient.create(), "b")
                .websocket().uri(server.baseUrl() + IngestServer.SESSION_PATH + "?topic=t&segment=0&producer=pulsar.repl.a.0")
                .handle((in, out) -> in.receive().then()).blockLast(Duration.ofSeconds(10));
        long ms = (System.nanoTime() - t0) / 1_000_000;
        assertThat(ms).isBetween(500L, 3_000L);
    }
}
