package io.verbatim.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import io.verbatim.config.VerbatimConfig;
import io.verbatim.model.Layout;
import io.verbatim.model.Outcome;
import io.verbatim.model.Segment;
import io.verbatim.model.Shape;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;

/**
 * The admin endpoints under load and across mismatched caps: concurrent splits, rebuckets and merges on
 * two clusters re-plan on conflicts (never a 500), and the clusters converge within the caps.
 */
class AdminLoadTest {
    private EmbeddedRuntime runtime;

    @AfterEach
    void stop() {
        if (runtime != null) {
            runtime.close();
        }
    }

    /** Defect 8: 880 concurrent calls on two clusters answered 500s and left the layouts apart for good. */
    @Test
    void concurrentAdminCallsOnTwoClustersConvergeWithinTheCaps() throws Exception {
        runtime = EmbeddedRuntime.start(VerbatimConfig.parse("""
                clusters: [{name: a, token: a-token}, {name: b, token: b-token}]
                topics: [{name: t, initialSegments: 1, bucketBudget: 4}]
                exchange: {antiEntropyInterval: 300ms, retry: {initial: 20ms, max: 300ms}}
                caps: {maxSegments: 16, maxEntryBucketsPerSegment: 32}
                security: {adminToken: load-token}
                """));
        HttpClient http = HttpClient.newHttpClient();
        Random random = new Random(8);
        Map<Integer, Integer> statuses = new ConcurrentHashMap<>();
        List<CompletableFuture<?>> calls = new ArrayList<>();
        for (int i = 0; i < 880; i++) {
            ClusterNode node = runtime.cluster(i % 2 == 0 ? "a" : "b");
            Layout layout = node.layout("t");
            List<Segment> active = layout.activeSegments();
            Segment s = active.get(random.nextInt(active.size()));
            String query = switch (random.nextInt(4)) {
                case 0, 1 -> "split?topic=t&segment=" + s.id();
                case 2 -> "rebucket?topic=t&segment=" + s.id() + "&bucketCount=" + (s.buckets().count() * 2);
                default -> {
                    Segment next = active.get((active.indexOf(s) + 1) % active.size());
                    yield "merge?topic=t&first=" + s.id() + "&second=" + next.id();
                }
            };
            HttpRequest request = HttpRequest.newBuilder(URI.create(node.adminUrl() + "/admin/v2/scalable/" + query))
                    .header("Authorization", "Bearer load-token").POST(HttpRequest.BodyPublishers.noBody())
                    .timeout(Duration.ofSeconds(30)).build();
            calls.add(http.sendAsync(request, HttpResponse.BodyHandlers.ofString())
                    .thenAccept(r -> statuses.merge(r.statusCode(), 1, Integer::sum)));
            if (calls.size() % 40 == 0) {
                CompletableFuture.allOf(calls.toArray(CompletableFuture[]::new)).join(); // bursts of 40 at once
            }
        }
        CompletableFuture.allOf(calls.toArray(CompletableFuture[]::new)).join();
        assertThat(statuses.keySet()).as("answers %s", statuses).allMatch(s -> s == 200 || s == 202 || s == 409);
        assertThat(statuses.get(200)).isPositive();

        Flux.interval(Duration.ofMillis(50)).filter(t -> runtime.converged("t")).blockFirst(Duration.ofSeconds(60));
        Shape a = Shape.of(runtime.cluster("a").layout("t"));
        assertThat(Shape.of(runtime.cluster("b").layout("t"))).isEqualTo(a);
        assertThat(a.cells()).hasSizeLessThanOrEqualTo(16).allMatch(c -> c.buckets().count() <= 32);
    }

    @Test
    void aCapMismatchIsNamedWithBothValuesAndNoClusterPassesTheSmallerCap() throws Exception {
        runtime = EmbeddedRuntime.start(VerbatimConfig.parse("""
                clusters:
                  - {name: a, token: a-token, caps: {maxSegments: 4}}
                  - {name: b, token: b-token, caps: {maxSegments: 8}}
                topics: [{name: t, initialSegments: 1, bucketBudget: 4}]
                exchange: {antiEntropyInterval: 300ms, retry: {initial: 20ms, max: 300ms}}
                security: {adminToken: caps-token}
                """));
        ClusterNode b = runtime.cluster("b");
        for (int i = 0; i < 6; i++) {
            Segment widest = b.layout("t").activeSegments().stream()
                    .max((x, y) -> Integer.compare(x.range().size(), y.range().size())).orElseThrow();
            Outcome o = b.split("t", widest.id()).block();
            if (i >= 3) {
                assertThat(o).isInstanceOfSatisfying(Outcome.Refused.class,
                        r -> assertThat(r.reason()).isEqualTo(Outcome.Refusal.EXCEEDS_CAPS));
            }
        }
        Flux.interval(Duration.ofMillis(50)).filter(t -> runtime.converged("t")).blockFirst(Duration.ofSeconds(30));
        assertThat(runtime.cluster("a").layout("t").activeSegments()).hasSize(4);
        assertThat(b.layout("t").activeSegments()).hasSize(4);
        String status = EmbeddedRuntimeTest.get(runtime.cluster("a").adminUrl() + "/admin/v2/scalable/status");
        assertThat(status).contains("b maxSegments 8 differs from the local 4");
        String metrics = EmbeddedRuntimeTest.get(runtime.cluster("a").adminUrl() + "/metrics");
        assertThat(metrics).contains("verbatim_exchange_cap_mismatches{cluster=\"a\"} 1.0")
                .contains("verbatim_exchange_peer_cap{cap=\"maxSegments\",cluster=\"a\",peer=\"b\"} 8.0")
                .contains("verbatim_exchange_local_cap{cap=\"maxSegments\",cluster=\"a\"} 4.0");
    }
}
