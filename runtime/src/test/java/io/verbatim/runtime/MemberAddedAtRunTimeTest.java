package io.verbatim.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import io.verbatim.config.VerbatimConfig;
import io.verbatim.metadatalog.state.SegmentKey;
import io.verbatim.pulsar.broker.PulsarProcess;
import io.verbatim.runtime.broker.Subscription;
import io.verbatim.runtime.controller.LeasedOwnership;
import io.verbatim.runtime.controller.MembersApi;
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
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * A broker member the running cluster's file does not name, added at run time by the admin (issue 25): cluster a
 * runs its three controller replicas and broker-1 from a file naming broker-1 only; the admin registers broker-2
 * ({@code POST /admin/v2/scalable/members}, at broker-1's admin port, redirected to the leader), whose process
 * starts from a file that names it; it becomes a listener of the metadata log (fed by a follower: delegation is
 * on), its reports are taken, it is given
 * a share of the segments, and what is produced through it arrives on b once. Bad registrations are refused
 * with what was wrong, and change nothing.
 */
class MemberAddedAtRunTimeTest {
    private static final String T = "persistent://public/default/orders";
    private static final String ADMIN = "admin-token";
    private static final AtomicInteger RUN = new AtomicInteger();
    private final List<Node> nodes = new ArrayList<>();
    private final HttpClient http = HttpClient.newBuilder().followRedirects(HttpClient.Redirect.ALWAYS).build();

    @AfterEach
    void stopAll() {
        nodes.forEach(n -> n.stop(Duration.ofSeconds(5)));
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    /** The file naming broker-1 only (what the running members start from) and the one naming broker-2 too. */
    private static List<VerbatimConfig> configs(PulsarProcess broker, int[] b2) throws IOException {
        int run = RUN.incrementAndGet() * 100 + (int) (ProcessHandle.current().pid() % 100);
        int[] p = new int[11];
        for (int i = 0; i < p.length; i++) {
            p[i] = freePort();
        }
        String template = """
                clusters:
                  - name: a
                    token: a-token
                    controllers:
                      - {id: c1, adminPort: %d, raftPort: %d, secret: c1-secret}
                      - {id: c2, adminPort: %d, raftPort: %d, secret: c2-secret}
                      - {id: c3, adminPort: %d, raftPort: %d, secret: c3-secret}
                    brokerMembers:
                      - {id: broker-1, adminPort: %d, brokerPorts: [%d], raftPort: %d, secret: b1-secret}
                %s
                    pulsar: {serviceUrl: '%s', adminUrl: '%s', namespace: public/added-a-%d}
                  - name: b
                    token: b-token
                    adminPort: %d
                    brokerPorts: [%d]
                    pulsar: {serviceUrl: '%s', adminUrl: '%s', namespace: public/added-b-%d}
                topics: [{name: %s, initialSegments: 4, bucketBudget: 4}]
                replication: {startAt: earliest, retry: {initial: 50ms, max: 1s, jitter: 0.5}}
                exchange: {antiEntropyInterval: 200ms, retry: {initial: 20ms, max: 500ms, jitter: 0.5}}
                ownership: {lease: 4s, interval: 500ms, minTenure: 0s, drainTimeout: 5s}
                metadataLog: {enabled: true}
                security: {adminToken: %s}
                storage: pulsar
                """;
        String second = "      - {id: broker-2, adminPort: %d, brokerPorts: [%d], raftPort: %d, secret: b2-secret}"
                .formatted(b2[0], b2[1], b2[2]);
        List<VerbatimConfig> out = new ArrayList<>();
        for (String extra : List.of("", second)) {
            out.add(VerbatimConfig.parse(template.formatted(p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7], p[8],
                    extra, broker.serviceUrl(), broker.webUrl(), run, p[9], p[10], broker.serviceUrl(), broker.webUrl(),
                    run, T, ADMIN)));
        }
        return out;
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

    private static void await(String what, Duration within, BooleanSupplier condition) {
        Flux.interval(Duration.ofMillis(100)).filter(t -> condition.getAsBoolean()).next()
                .timeout(within, Mono.error(() -> new AssertionError("not within " + within + ": " + what))).block();
    }

    private HttpResponse<String> call(Node node, String method, String path, String body, String token)
            throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create(node.adminUrl() + path))
                .header("Authorization", "Bearer " + token).header("Content-Type", "application/json")
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody()
                        : HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
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
            HttpResponse<String> r = call(node, "POST", TopicsApi.PRODUCE + "?topic=" + URLEncoder.encode(T,
                    StandardCharsets.UTF_8), body.toString(), ADMIN);
            assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        }
    }

    @Test
    void theAdminAddsABrokerMemberTheFileDoesNotNameAndItTakesAShareWithNothingLost(@TempDir Path dir)
            throws Exception {
        int[] b2 = {freePort(), freePort(), freePort()};
        List<VerbatimConfig> configs = configs(TestPulsar.broker(), b2);
        VerbatimConfig running = configs.get(0);
        VerbatimConfig naming = configs.get(1);
        for (String c : List.of("c1", "c2", "c3")) {
            start(running, "a", Optional.of(c), dir);
        }
        Node one = start(running, "a", Optional.of("broker-1"), dir);
        Node b = start(running, "b", Optional.empty(), dir);
        DeliveryChecks.ConsumerRecorder recorder = new DeliveryChecks.ConsumerRecorder("b");
        Subscription s = b.cluster().subscription(T, "checks").consumers(2)
                .onDispatch(d -> recorder.record(d.consumer(), d.segmentId(), d.messages())).subscribe();
        Flux.range(0, s.consumers()).flatMap(s::consumer, s.consumers()).subscribe();
        await("broker-1 acts on the four segments", Duration.ofSeconds(60), () -> acting(one).size() == 4);
        produce(one, 0, 100);

        String key = naming.security().members(naming.cluster("a"), "broker-2").get("broker-2").verifying().form();
        String member = """
                {"id": "broker-2", "raftAddress": "127.0.0.1:%d", "adminUrl": "http://127.0.0.1:%d",
                 "ingestUrl": "http://127.0.0.1:%d", "verifyingKey": "%s"}""".formatted(b2[2], b2[0], b2[1], key);
        // refused, with what was wrong, changing nothing
        assertThat(call(one, "POST", MembersApi.PATH, member, "a-token").statusCode()).isIn(401, 403);
        HttpResponse<String> bad = call(one, "POST", MembersApi.PATH, member.replace(key, "ed25519:AAAA"), ADMIN);
        assertThat(bad.statusCode()).isEqualTo(400);
        assertThat(bad.body()).contains("verifyingKey");
        HttpResponse<String> taken = call(one, "POST", MembersApi.PATH, member.replace("\"broker-2\"", "\"c2\""),
                ADMIN);
        assertThat(taken.statusCode()).as(taken.body()).isEqualTo(409);
        assertThat(taken.body()).contains("c2 is a controller replica");
        assertThat(call(one, "POST", MembersApi.PATH, member.replace("raftAddress", "raft"), ADMIN).body())
                .contains("unknown field 'raft'");

        HttpResponse<String> added = call(one, "POST", MembersApi.PATH, member, ADMIN);
        assertThat(added.statusCode()).as(added.body()).isEqualTo(201);
        assertThat(added.body()).contains("\"id\":\"broker-2\"").contains("\"listener\":true")
                .contains("\"configured\":false");
        HttpResponse<String> delegations = call(one, "GET", "/admin/v2/metadata/delegations", null, ADMIN);
        assertThat(delegations.body()).as("fed by a follower").containsPattern("\"broker-2\":\"c[123]\"");
        assertThat(call(one, "POST", MembersApi.PATH, member, ADMIN).statusCode()).as("the same again: it goes on "
                + "where an earlier call stopped").isEqualTo(201);
        HttpResponse<String> other = call(one, "POST", MembersApi.PATH, member.replace(":" + b2[2], ":" + (b2[2] + 1)),
                ADMIN);
        assertThat(other.statusCode()).as(other.body()).isEqualTo(409);
        assertThat(other.body()).contains("broker-2 is registered already");

        Node two = start(naming, "a", Optional.of("broker-2"), dir);
        await("broker-2 takes a share", Duration.ofSeconds(60), () -> !acting(two).isEmpty()
                && acting(one).size() + acting(two).size() == 4);
        assertThat(acting(one)).doesNotContainAnyElementsOf(acting(two));
        HttpResponse<String> listed = call(one, "GET", MembersApi.PATH, null, ADMIN);
        assertThat(listed.statusCode()).isEqualTo(200);
        assertThat(listed.body()).contains("\"id\":\"broker-1\"").contains("\"id\":\"broker-2\",\"state\":\"ACTIVE\"");

        produce(two, 100, 200);
        produce(one, 200, 300);
        await("every message on b: " + recorder.checks(Map.of("a", 300L)), Duration.ofSeconds(90),
                () -> recorder.checks(Map.of("a", 300L)).stream().allMatch(ReplicationChecks.Check::passed));
        assertThat(recorder.repeats()).as("repeats on b, first: " + recorder.repeatSamples()).isZero();
    }
}
