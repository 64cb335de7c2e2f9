package io.verbatim.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import io.verbatim.config.VerbatimConfig;
import io.verbatim.metadatalog.state.SegmentKey;
import io.verbatim.model.Segment;
import io.verbatim.pulsar.broker.PulsarProcess;
import io.verbatim.runtime.broker.Subscription;
import io.verbatim.runtime.controller.AdminApi;
import io.verbatim.runtime.controller.LeasedOwnership;
import io.verbatim.runtime.status.NodeStatus;
import io.verbatim.testkit.DeliveryChecks;
import io.verbatim.testkit.NetworkConsumer;
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
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * A cluster's broker processes sharing its segments on Pulsar (issue 25), in one JVM: a's three controller
 * replicas and two broker members, b one node. Every segment is acted on by exactly one member; one member
 * closed without draining (what a crash leaves: its lease runs out) loses its segments to the other; a member
 * started again takes a share back; every message produced on either member arrives on b once, and reaches a's
 * own subscription's consumers, connected to every member, as its segments move.
 */
class MultiBrokerRuntimeTest {
    private static final String T = "persistent://public/default/orders";
    private static final String ADMIN = "admin-token";
    private static final AtomicInteger RUN = new AtomicInteger();
    private final List<Node> nodes = new ArrayList<>();
    private final HttpClient http = HttpClient.newBuilder().followRedirects(HttpClient.Redirect.ALWAYS).build();

    private final List<NetworkConsumer> closing = new ArrayList<>();

    @AfterEach
    void stopAll() {
        closing.forEach(NetworkConsumer::dispose);
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
                    controllers:
                      - {id: c1, adminPort: %d, raftPort: %d, secret: c1-secret}
                      - {id: c2, adminPort: %d, raftPort: %d, secret: c2-secret}
                      - {id: c3, adminPort: %d, raftPort: %d, secret: c3-secret}
                    brokerMembers:
                      - {id: broker-1, adminPort: %d, brokerPorts: [%d], raftPort: %d, secret: b1-secret}
                      - {id: broker-2, adminPort: %d, brokerPorts: [%d], raftPort: %d, secret: b2-secret}
                    pulsar: {serviceUrl: '%s', adminUrl: '%s', namespace: public/multi-a-%d}
                  - name: b
                    token: b-token
                    adminPort: %d
                    brokerPorts: [%d]
                    pulsar: {serviceUrl: '%s', adminUrl: '%s', namespace: public/multi-b-%d}
                topics: [{name: %s, initialSegments: 4, bucketBudget: 4}]
                replication: {startAt: earliest, retry: {initial: 50ms, max: 1s, jitter: 0.5}}
                exchange: {antiEntropyInterval: 200ms, retry: {initial: 20ms, max: 500ms, jitter: 0.5}}
                ownership: {lease: 4s, interval: 500ms, minTenure: 0s, drainTimeout: 5s}
                security: {adminToken: %s}
                storage: pulsar
                """.formatted(freePort(), freePort(), freePort(), freePort(), freePort(), freePort(),
                freePort(), freePort(), freePort(), freePort(), freePort(), freePort(),
                broker.serviceUrl(), broker.webUrl(), run, freePort(), freePort(), broker.serviceUrl(), broker.webUrl(),
                run, T, ADMIN));
    }

    private Node start(VerbatimConfig config, String cluster, Optional<String> member, Path dir) {
        Node node = Node.start(config, cluster, member, Optional.of(dir.resolve(cluster + member.map(m -> "-" + m)
                .orElse(""))));
        nodes.add(node);
        return node;
    }

    private static Set<SegmentKey> acting(Node member) {
        return ((LeasedOwnership) member.cluster().ownership()).acting();
    }

    private static Set<SegmentKey> segments(Node member) {
        Set<SegmentKey> out = new HashSet<>();
        member.cluster().layout(T).segments().keySet().forEach(id -> out.add(new SegmentKey(T, id)));
        return out;
    }

    private static void await(String what, Duration within, BooleanSupplier condition) {
        await(() -> what, within, condition);
    }

    private static void await(java.util.function.Supplier<String> what, Duration within, BooleanSupplier condition) {
        Flux.interval(Duration.ofMillis(100)).filter(t -> condition.getAsBoolean()).next()
                .timeout(within, Mono.error(() -> new AssertionError("not within " + within + ": " + what.get()))).block();
    }

    private String get(Node node, String path) throws Exception {
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(node.adminUrl() + path))
                .header("Authorization", "Bearer " + ADMIN).GET().build(), HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        return r.body();
    }

    /** Messages {@code a/from .. a/(to-1)} over the member's produce endpoint, 20 a call. */
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
                // the client kept its connection to the closed member of this JVM, which answers so and closes it
                r = http.send(request, HttpResponse.BodyHandlers.ofString());
            }
            assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        }
    }

    private static void awaitDelivered(DeliveryChecks.ConsumerRecorder recorder, long produced) {
        await("every message on b: " + recorder.checks(Map.of("a", produced)), Duration.ofSeconds(90),
                () -> recorder.checks(Map.of("a", produced)).stream().allMatch(ReplicationChecks.Check::passed));
    }

    @Test
    void eachSegmentHasOneActingMemberAndACrashedMembersSegmentsMoveWithinTheLeaseWithNothingLost(@TempDir Path dir)
            throws Exception {
        VerbatimConfig config = config(TestPulsar.broker());
        for (String c : List.of("c1", "c2", "c3")) {
            start(config, "a", Optional.of(c), dir);
        }
        Node one = start(config, "a", Optional.of("broker-1"), dir);
        Node two = start(config, "a", Optional.of("broker-2"), dir);
        Node b = start(config, "b", Optional.empty(), dir);
        DeliveryChecks.ConsumerRecorder recorder = new DeliveryChecks.ConsumerRecorder("b");
        Subscription s = b.cluster().subscription(T, "checks").consumers(2)
                .onDispatch(d -> recorder.record(d.consumer(), d.segmentId(), d.messages())).subscribe();
        Flux.range(0, s.consumers()).flatMap(s::consumer, s.consumers()).subscribe();
        // a's own subscription, consumed over the network from every member: each segment from the member acting on it
        DeliveryChecks.ConsumerRecorder onA = new DeliveryChecks.ConsumerRecorder("a");
        List<NetworkConsumer> consumers = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
            consumers.add(NetworkConsumer.builder(one.adminUrl(), T, "readers").token(ADMIN).consumer(i, 2)
                    .rediscoverEvery(Duration.ofMillis(500))
                    .start(r -> onA.record(r.consumer(), r.segmentId(), r.messages())));
        }
        closing.addAll(consumers);

        await("the four segments shared, none twice", Duration.ofSeconds(60), () -> {
            Set<SegmentKey> a1 = acting(one);
            Set<SegmentKey> a2 = acting(two);
            Set<SegmentKey> both = new HashSet<>(a1);
            both.retainAll(a2);
            return a1.size() + a2.size() == 4 && both.isEmpty() && !a1.isEmpty() && !a2.isEmpty();
        });
        NodeStatus.Ownership shown = one.cluster().status().block(Duration.ofSeconds(30)).ownership();
        assertThat(shown.member()).isEqualTo("broker-1");
        assertThat(shown.leaseRemainingMs()).isPositive();
        assertThat(shown.acting()).hasSize(acting(one).size());
        assertThat(shown.members()).extracting(NodeStatus.Ownership.Member::id, NodeStatus.Ownership.Member::state)
                .containsExactly(org.assertj.core.groups.Tuple.tuple("broker-1", "ACTIVE"),
                        org.assertj.core.groups.Tuple.tuple("broker-2", "ACTIVE"));
        assertThat(get(one, "/metrics")).contains("verbatim_ownership_acting{").contains(
                "verbatim_ownership_lease_remaining_seconds{");
        Node replica = nodes.get(0);
        assertThat(get(replica, "/metrics")).contains("verbatim_ownership_segments{").contains("owner=\"broker-2\"")
                .contains("verbatim_ownership_moving{");
        produce(one, 0, 100);
        produce(two, 100, 200);
        Segment first = one.cluster().layout(T).activeSegments().get(0);
        // the operator's split, at a member's admin port: redirected to the controller leader
        HttpResponse<String> split = http.send(HttpRequest.newBuilder(URI.create(one.adminUrl() + AdminApi.PREFIX
                + "split?topic=" + URLEncoder.encode(T, StandardCharsets.UTF_8) + "&segment=" + first.id()))
                .header("Authorization", "Bearer " + ADMIN).POST(HttpRequest.BodyPublishers.noBody()).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(split.statusCode()).as(split.body()).isEqualTo(200);
        produce(two, 200, 300);
        awaitDelivered(recorder, 300);

        // broker-2 goes without draining: its lease (4 s) runs out at the leader, which gives broker-1 its segments
        Set<SegmentKey> lost = acting(two);
        long closed = System.nanoTime();
        two.cluster().close();
        nodes.remove(two);
        produce(one, 300, 400);
        // (garbage collection may prune a drained sealed segment meanwhile: what is left of the layout counts)
        await(() -> "broker-1 acts on every segment: " + one.cluster().ownership() + "; layout "
                + one.cluster().layout(T).segments().keySet(), Duration.ofSeconds(30),
                () -> acting(one).equals(segments(one)));
        long unownedMs = (System.nanoTime() - closed) / 1_000_000;
        System.out.printf("broker-2's %d segment(s) went to broker-1 %d ms after it stopped (lease 4 s)%n",
                lost.size(), unownedMs);
        awaitDelivered(recorder, 400);

        Node again = start(config, "a", Optional.of("broker-2"), dir);
        await("broker-2, back, takes a share", Duration.ofSeconds(60), () -> !acting(again).isEmpty());
        produce(again, 400, 500);
        awaitDelivered(recorder, 500);
        assertThat(recorder.checks(Map.of("a", 500L))).allMatch(ReplicationChecks.Check::passed);
        assertThat(recorder.repeats()).as("repeats on b, first: " + recorder.repeatSamples()).isZero();
        // a's consumers followed every move: nothing lost, each key in order; repeats only of what was not
        // acknowledged when broker-2 went (Pulsar's redelivery)
        awaitDelivered(onA, 500);
        assertThat(onA.checks(Map.of("a", 500L))).allMatch(ReplicationChecks.Check::passed);
        System.out.printf("a's network consumers: %d repeat(s) after broker-2's crash, first: %s%n", onA.repeats(),
                onA.repeatSamples());
        assertThat(consumers).allMatch(c -> c.connectedTo().size() == 2);
    }
}
