package io.verbatim.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import io.verbatim.config.VerbatimConfig;
import io.verbatim.model.Outcome;
import io.verbatim.model.Segment;
import io.verbatim.pulsar.broker.PulsarProcess;
import io.verbatim.runtime.broker.Subscription;
import io.verbatim.testkit.DeliveryChecks;
import io.verbatim.testkit.ReplicationChecks;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Issue 14: {@code verbatim node} on Pulsar: one cluster per node on its configured ports, messages produced over
 * the node's HTTP produce endpoint, a split, then a clean stop and a restart of the producing node on its data
 * directory. What the other cluster's subscription receives is every message once, in key order: the layouts come
 * back from the metadata log, the cursors from Pulsar's durable subscriptions.
 */
class PulsarNodeTest {
    private static final String T = "persistent://public/default/orders";
    private static final String ADMIN = "admin-token";
    private static final AtomicInteger RUN = new AtomicInteger();
    private final List<Node> nodes = new ArrayList<>();
    private final HttpClient http = HttpClient.newHttpClient();

    @AfterEach
    void stopAll() {
        nodes.forEach(n -> n.stop(Duration.ofSeconds(5)));
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    private static VerbatimConfig config(PulsarProcess broker) throws IOException {
        int run = RUN.incrementAndGet() * 100 + (int) (ProcessHandle.current().pid() % 100);
        return VerbatimConfig.parse("""
                clusters:
                  - name: a
                    token: a-token
                    adminPort: %d
                    brokerPorts: [%d]
                    pulsar: {serviceUrl: '%s', adminUrl: '%s', namespace: public/node-a-%d}
                  - name: b
                    token: b-token
                    adminPort: %d
                    brokerPorts: [%d]
                    pulsar: {serviceUrl: '%s', adminUrl: '%s', namespace: public/node-b-%d}
                topics: [{name: %s, initialSegments: 2, bucketBudget: 4}]
                replication: {startAt: earliest, retry: {initial: 50ms, max: 1s, jitter: 0.5}}
                exchange: {antiEntropyInterval: 200ms, retry: {initial: 20ms, max: 500ms, jitter: 0.5}}
                security: {adminToken: %s}
                storage: pulsar
                """.formatted(freePort(), freePort(), broker.serviceUrl(), broker.webUrl(), run,
                freePort(), freePort(), broker.serviceUrl(), broker.webUrl(), run, T, ADMIN));
    }

    /** Messages {@code a/from .. a/(to-1)} over the node's produce endpoint, 20 a call. */
    private void produce(Node node, int from, int to) throws Exception {
        for (int start = from; start < to; start += 20) {
            StringBuilder body = new StringBuilder("{\"messages\":[");
            for (int i = start; i < Math.min(to, start + 20); i++) {
                body.append(i == start ? "" : ",").append("{\"key\":\"key-").append(i % 37).append("\",\"payload\":\"")
                        .append(Base64.getEncoder().encodeToString(DeliveryChecks.payload("a", i))).append("\"}");
            }
            body.append("]}");
            HttpRequest request = HttpRequest.newBuilder(URI.create(node.adminUrl() + TopicsApi.PRODUCE
                    + "?topic=" + URLEncoder.encode(T, StandardCharsets.UTF_8))).timeout(Duration.ofSeconds(30))
                    .header("Authorization", "Bearer " + ADMIN)
                    .POST(HttpRequest.BodyPublishers.ofString(body.toString())).build();
            HttpResponse<String> r = http.send(request, HttpResponse.BodyHandlers.ofString());
            if (r.statusCode() == 503 && r.body().contains("port is stopping")) {
                // the client kept its connection to the stopped node of this JVM, which answers so and closes it
                r = http.send(request, HttpResponse.BodyHandlers.ofString());
            }
            assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        }
    }

    private static void awaitDelivered(DeliveryChecks.ConsumerRecorder recorder, long produced) {
        Flux.interval(Duration.ofMillis(100))
                .filter(t -> recorder.checks(Map.of("a", produced)).stream().allMatch(ReplicationChecks.Check::passed))
                .next().timeout(Duration.ofSeconds(90), Mono.error(() -> new AssertionError(
                        "not delivered: " + recorder.checks(Map.of("a", produced)))))
                .block();
    }

    @Test
    void aNodeOnPulsarRestartsOnItsDataDirectoryAndTheOtherClusterReceivesEveryMessageOnce(@TempDir Path dir)
            throws Exception {
        PulsarProcess broker = TestPulsar.broker();
        VerbatimConfig config = config(broker);
        Node a = Node.start(config, "a", Optional.of(dir.resolve("a")));
        nodes.add(a);
        Node b = Node.start(config, "b", Optional.of(dir.resolve("b")));
        nodes.add(b);
        DeliveryChecks.ConsumerRecorder recorder = new DeliveryChecks.ConsumerRecorder("b");
        Subscription s = b.cluster().subscription(T, "checks").consumers(2).onDispatch(d -> recorder.record(d.consumer(), d.segmentId(), d.messages())).subscribe();
        Flux.range(0, s.consumers()).flatMap(s::consumer, s.consumers()).subscribe();

        produce(a, 0, 100);
        Segment first = a.cluster().layout(T).activeSegments().get(0);
        assertThat(a.cluster().split(T, first.id()).block(Duration.ofSeconds(60))).isInstanceOf(Outcome.Applied.class);
        produce(a, 100, 200);
        awaitDelivered(recorder, 200);
        long epoch = a.cluster().layout(T).epoch();

        a.stop(Duration.ofSeconds(30));
        nodes.remove(a);
        Node again = Node.start(config, "a", Optional.of(dir.resolve("a")));
        nodes.add(again);
        assertThat(again.cluster().layout(T).epoch()).as("the layout from the metadata log").isEqualTo(epoch);
        produce(again, 200, 300);
        awaitDelivered(recorder, 300);

        assertThat(recorder.checks(Map.of("a", 300L))).allMatch(ReplicationChecks.Check::passed);
        assertThat(recorder.repeats()).as("repeats on b").isZero();
        assertThat(b.cluster().layout(T).activeSegments()).hasSize(3);
    }
}
