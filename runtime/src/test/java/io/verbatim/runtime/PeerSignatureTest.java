package io.verbatim.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import io.verbatim.config.ClusterUrls;
import io.verbatim.config.VerbatimConfig;
import io.verbatim.exchange.ExchangeServer;
import io.verbatim.model.Compression;
import io.verbatim.model.entry.Message;
import io.verbatim.runtime.broker.IngestServer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.scheduler.Scheduler;

/**
 * Issue 23 item 4, measured: eu-west replayed the token us-east had shown it at ap-south, poisoned a dedup
 * mark there and pushed a layout "as us-east". Clusters now sign each call for the cluster it goes to: what
 * us-east sends eu-west (recorded here by a proxy on the path, every exchange push and ingest handshake) is
 * refused at ap-south, and at eu-west a second time; no secret crosses the wire.
 */
class PeerSignatureTest {
    private static final String T = "t";
    private final Scheduler timer = Threads.timer();
    private final Scheduler cpu = Threads.cpu();
    private final List<AutoCloseable> open = new ArrayList<>();

    @AfterEach
    void stop() throws Exception {
        for (int i = open.size() - 1; i >= 0; i--) {
            open.get(i).close();
        }
        timer.dispose();
        cpu.dispose();
    }

    private <T extends AutoCloseable> T opened(T closeable) {
        open.add(closeable);
        return closeable;
    }

    @Test
    void whatUsEastSendsEuWestIsRefusedAtApSouthAndAtEuWestASecondTime() throws Exception {
        VerbatimConfig config = VerbatimConfig.parse("""
                clusters:
                  - {name: us-east, token: east-token}
                  - {name: eu-west, token: west-token}
                  - {name: ap-south, token: south-token}
                topics: [{name: t, initialSegments: 2, bucketBudget: 4}]
                replication: {startAt: earliest, retry: {initial: 20ms, max: 300ms}}
                exchange: {antiEntropyInterval: 300ms, retry: {initial: 20ms, max: 300ms}}
                security: {adminToken: admin-token}
                """);
        ClusterNode east = opened(new ClusterNode(config, "us-east", timer, cpu).start());
        ClusterNode west = opened(new ClusterNode(config, "eu-west", timer, cpu).start());
        ClusterNode south = opened(new ClusterNode(config, "ap-south", timer, cpu).start());
        // us-east reaches eu-west's admin port and its broker through the proxy
        RecordingProxy westAdmin = opened(new RecordingProxy(west.adminUrl()));
        RecordingProxy westBroker = opened(new RecordingProxy(west.brokerUrls().get(0)));
        east.connect(Map.of("eu-west", new ClusterUrls(westAdmin.url(), List.of(westBroker.url())),
                "ap-south", south.address()));
        west.connect(Map.of("us-east", east.address(), "ap-south", south.address()));
        south.connect(Map.of("us-east", east.address(), "eu-west", west.address()));
        east.producer(T, Compression.NONE).send(List.of(Message.of("k", "us-east/0".getBytes())))
                .block(Duration.ofSeconds(10));
        // replication through the proxy works: the entry reaches eu-west over a recorded session
        Flux.interval(Duration.ofMillis(20)).filter(t -> west.caughtUp() && east.caughtUp()
                && stored(west) == 1 && stored(south) == 1).blockFirst(Duration.ofSeconds(30));

        RecordingProxy.Seen push = westAdmin.seen().stream().filter(s -> s.target().equals(ExchangeServer.EXCHANGE_PATH))
                .reduce((a, b) -> b).orElseThrow();
        RecordingProxy.Seen session = westBroker.seen().stream()
                .filter(s -> s.target().startsWith(IngestServer.SESSION_PATH)).findFirst().orElseThrow();
        assertThat(westAdmin.seen()).as("no secret crossed the wire")
                .allSatisfy(s -> assertThat(s.authorization()).startsWith("Verbatim ").doesNotContain("east-token"));
        assertThat(session.target()).contains("producer=pulsar.repl.us-east.");
        long southEpoch = south.layout(T).epoch();

        // at ap-south: the exchange push and the session, each as us-east made it
        assertThat(replay(south.adminUrl(), push)).startsWith("403: ")
                .contains("signed for cluster eu-west, not for ap-south");
        assertThat(replay(south.brokerUrls().get(0), session)).startsWith("403: ")
                .contains("signed for cluster eu-west, not for ap-south");
        // at eu-west, where each was taken once already
        assertThat(replay(west.adminUrl(), push)).startsWith("403: ").contains("replays a signature of cluster us-east");
        assertThat(replay(west.brokerUrls().get(0), session)).startsWith("403: ")
                .contains("replays a signature of cluster us-east");
        // us-east's secret as a bearer token, what an earlier version showed every peer: refused
        assertThat(call(south.adminUrl(), "POST", ExchangeServer.EXCHANGE_PATH, "Bearer east-token", push.body()))
                .startsWith("403: ").contains("clusters sign their calls");

        assertThat(south.layout(T).epoch()).as("nothing pushed as us-east").isEqualTo(southEpoch);
        assertThat(south.registry().get("verbatim.ingest.entries").tag("result", "forbidden").counter().count()).isZero();
        assertThat(stored(south)).isEqualTo(1);
    }

    private static long stored(ClusterNode node) {
        return node.storage(T).contents().values().stream().mapToLong(List::size).sum();
    }

    /** {@code status: body} of {@code seen} presented again at {@code base}, as it was sent. */
    private static String replay(String base, RecordingProxy.Seen seen) throws Exception {
        return call(base, seen.method(), seen.target(), seen.authorization(), seen.body());
    }

    private static String call(String base, String method, String target, String authorization, byte[] body)
            throws Exception {
        // a WebSocket's handshake as the session's was; a push with its body
        String upgrade = method.equals("GET") ? "Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n"
                + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n" : "Connection: close\r\n";
        String head = method + " " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: " + authorization + "\r\n"
                + upgrade + "Content-Length: " + body.length + "\r\n\r\n";
        String answer = RawHttp.send(base, head + new String(body, StandardCharsets.ISO_8859_1));
        return RawHttp.status(answer) + ": " + answer.substring(answer.indexOf("\r\n\r\n") + 4);
    }
}
