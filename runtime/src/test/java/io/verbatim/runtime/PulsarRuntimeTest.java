package io.verbatim.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.verbatim.config.VerbatimConfig;
import io.verbatim.model.Compression;
import io.verbatim.model.Outcome;
import io.verbatim.model.Segment;
import io.verbatim.pipeline.ReplicatorMetrics;
import io.verbatim.pulsar.broker.PulsarProcess;
import io.verbatim.runtime.broker.Producer;
import io.verbatim.runtime.broker.Subscription;
import io.verbatim.testkit.DeliveryChecks;
import io.verbatim.testkit.ReplicationChecks;
import io.verbatim.testkit.Traffic;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Issue 14: the runtime with {@code storage: pulsar} on a real broker (a child process): two clusters as two
 * namespaces of one broker, traffic on both, a split on the way, every message delivered once and in key order on
 * both clusters through PIP-486 subscriptions over the segment topics' raw entries.
 */
class PulsarRuntimeTest {
    static final String TOPIC = "persistent://public/default/orders";
    private static PulsarProcess broker;
    private static final AtomicInteger RUN = new AtomicInteger();
    private EmbeddedRuntime runtime;

    @BeforeAll
    static void startBroker() {
        broker = TestPulsar.broker();
    }

    @AfterEach
    void stop() {
        if (runtime != null) {
            runtime.close();
        }
    }

    /** Two clusters on the one broker, each in a namespace of its own for this run. */
    static String config(String serviceUrl, String adminUrl, int run) {
        return """
                clusters:
                  - name: a
                    token: a-token
                    brokers: 2
                    pulsar: {serviceUrl: '%1$s', adminUrl: '%2$s', namespace: public/a-%3$d}
                  - name: b
                    token: b-token
                    pulsar: {serviceUrl: '%1$s', adminUrl: '%2$s', namespace: public/b-%3$d}
                topics:
                  - {name: %4$s, initialSegments: 2, bucketBudget: 4}
                replication:
                  startAt: earliest
                  sendTimeout: 10s
                  retry: {initial: 50ms, max: 1s, jitter: 0.5}
                  sealWait: 5s
                exchange:
                  antiEntropyInterval: 500ms
                  retry: {initial: 20ms, max: 500ms}
                security: {adminToken: e2e-token}
                storage: pulsar
                """.formatted(serviceUrl, adminUrl, run, TOPIC);
    }

    @Test
    void replicatesBothWaysThroughASplitAndDeliversEveryMessageOnceInKeyOrder() throws Exception {
        int run = RUN.incrementAndGet();
        runtime = EmbeddedRuntime.start(VerbatimConfig.parse(config(broker.serviceUrl(), broker.webUrl(), run)));
        Map<String, Producer> producers = new LinkedHashMap<>();
        Map<String, DeliveryChecks.ConsumerRecorder> recorders = new LinkedHashMap<>();
        Map<String, Subscription> subscriptions = new LinkedHashMap<>();
        Map<String, Set<String>> delivered = new ConcurrentHashMap<>();
        Map<String, AtomicInteger> repeats = new ConcurrentHashMap<>();
        runtime.clusters().forEach((name, node) -> {
            producers.put(name, node.producer(TOPIC, Compression.LZ4));
            DeliveryChecks.ConsumerRecorder recorder = new DeliveryChecks.ConsumerRecorder(name);
            recorders.put(name, recorder);
            Set<String> seen = ConcurrentHashMap.newKeySet();
            delivered.put(name, seen);
            AtomicInteger repeated = new AtomicInteger();
            repeats.put(name, repeated);
            Subscription s = node.subscription(TOPIC, "checks").consumers(2).onDispatch(d -> {
                recorder.record(d.consumer(), d.segmentId(), d.messages());
                d.messages().forEach(m -> {
                    if (!seen.add(new String(m.payloadBytes(), StandardCharsets.UTF_8))) {
                        repeated.incrementAndGet();
                    }
                });
            }).subscribe();
            Flux.range(0, s.consumers()).flatMap(s::consumer, s.consumers()).subscribe();
            subscriptions.put(name, s);
        });
        Traffic traffic = new Traffic(Traffic.senders(producers, p -> p::sendNow), 200, 0.05, 7);
        ClusterNode a = runtime.cluster("a");
        long began = System.nanoTime();
        for (int round = 0; round < 30; round++) {
            long t0 = System.nanoTime();
            traffic.round(20);
            long ms = (System.nanoTime() - t0) / 1_000_000;
            if (ms > 1000) {
                System.out.printf("[pulsar-runtime] round %d took %d ms%n", round, ms);
            }
            if (round == 10) {
                Segment first = a.layout(TOPIC).activeSegments().get(0);
                long splitAt = System.nanoTime();
                assertThat(a.split(TOPIC, first.id()).block(Duration.ofSeconds(30))).isInstanceOf(Outcome.Applied.class);
                System.out.printf("[pulsar-runtime] the split took %d ms%n", (System.nanoTime() - splitAt) / 1_000_000);
            }
        }
        System.out.printf("[pulsar-runtime] 30 rounds in %d ms%n", (System.nanoTime() - began) / 1_000_000);
        Map<String, Long> produced = traffic.produced();
        assertThat(produced.values()).allMatch(n -> n == 600);
        runtime.awaitQuiet(Duration.ofSeconds(90)).block();
        // every message of both origins reaches a consumer on both clusters
        Flux.interval(Duration.ofMillis(100)).filter(t -> recorders.values().stream()
                .allMatch(r -> r.checks(produced).stream().allMatch(ReplicationChecks.Check::passed)))
                .next().timeout(Duration.ofSeconds(60), Mono.error(() ->
                        new AssertionError("not every message delivered: " + recorders.values().stream()
                                .flatMap(r -> r.checks(produced).stream()).toList())))
                .block();
        for (DeliveryChecks.ConsumerRecorder r : recorders.values()) {
            assertThat(r.checks(produced)).allMatch(ReplicationChecks.Check::passed);
        }
        System.out.printf("[pulsar-runtime] delivered %s, repeats %s%n", delivered.entrySet().stream()
                .map(e -> e.getKey() + "=" + e.getValue().size()).toList(), repeats);
        assertThat(delivered.values()).allMatch(seen -> seen.size() == 1200);
        for (ClusterNode node : runtime.clusters().values()) {
            assertThat(node.layout(TOPIC).activeSegments()).as("the split reached %s", node.name()).hasSize(3);
            ReplicatorMetrics m = node.replication(TOPIC, node.name().equals("a") ? "b" : "a");
            assertThat(m.verbatimEntries()).as("%s replicated verbatim", node.name()).isPositive();
            assertThat(ReplicationChecks.replicators(node.name(), node.replicators()).passed())
                    .as(ReplicationChecks.replicators(node.name(), node.replicators()).detail()).isTrue();
        }
        // the segments are Pulsar topics in each cluster's namespace, the sealed one terminated, or deleted once
        // garbage collection pruned it (every 10 s by default): the topics are the layout's segments
        HttpClient http = HttpClient.newHttpClient();
        HttpRequest list = HttpRequest.newBuilder(URI.create(broker.webUrl() + "/admin/v2/persistent/public/a-" + run))
                .build();
        Flux.interval(Duration.ofMillis(100)).filter(t -> {
            try {
                String body = http.send(list, HttpResponse.BodyHandlers.ofString()).body();
                return body.split("orders-").length - 1 == a.layout(TOPIC).segments().size();
            } catch (Exception e) {
                return false;
            }
        }).next().timeout(Duration.ofSeconds(20), Mono.empty()).block();
        HttpResponse<String> topics = http.send(list, HttpResponse.BodyHandlers.ofString());
        assertThat(topics.body()).contains("orders-");
        assertThat(topics.body().split("orders-").length - 1).as(topics.body())
                .isEqualTo(a.layout(TOPIC).segments().size()).isBetween(3, 4);
        // in-memory views are refused, naming why
        assertThatThrownBy(() -> a.storage(TOPIC)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("on Pulsar");
        assertThat(a.backlog(TOPIC, "b").values()).allMatch(n -> n == 0);
    }
}
