package io.verbatim.runtime;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.verbatim.config.VerbatimConfig;
import io.verbatim.model.Compression;
import io.verbatim.model.Outcome;
import io.verbatim.model.Segment;
import io.verbatim.model.Shape;
import io.verbatim.pipeline.ReplicatorMetrics;
import io.verbatim.runtime.broker.Producer;
import io.verbatim.runtime.broker.Subscription;
import io.verbatim.testkit.DeliveryChecks;
import io.verbatim.testkit.ReplicationChecks;
import io.verbatim.testkit.ReplicationRecorder;
import io.verbatim.testkit.Traffic;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Three clusters on loopback: traffic everywhere, layout changes and an outage on the way, then checks. */
class EmbeddedRuntimeTest {
    static final String TOPIC = "persistent://public/default/orders";
    static final String CONFIG = """
            clusters:
              - {name: a, token: a-token, brokers: 2}
              - {name: b, token: b-token}
              - {name: c, token: c-token}
            topics:
              - {name: %s, initialSegments: 2, bucketBudget: 4}
            replication:
              startAt: earliest
              sendTimeout: 5s
              retry: {initial: 20ms, max: 500ms, jitter: 0.5}
              sealWait: 2s
            exchange:
              antiEntropyInterval: 500ms
              retry: {initial: 20ms, max: 500ms}
            security: {adminToken: e2e-token}
            """.formatted(TOPIC);

    private EmbeddedRuntime runtime;

    @AfterEach
    void stop() {
        if (runtime != null) {
            runtime.close();
        }
    }

    @Test
    void replicatesInEveryDirectionThroughSplitsARebucketAndAnOutage() throws Exception {
        runtime = EmbeddedRuntime.start(VerbatimConfig.parse(CONFIG));
        ReplicationRecorder recorder = ReplicationRecorder.attach(runtime.storages(TOPIC), true);
        Map<String, Subscription> subscriptions = new LinkedHashMap<>();
        Map<String, Producer> producers = new LinkedHashMap<>();
        runtime.clusters().forEach((name, node) -> {
            producers.put(name, node.producer(TOPIC, Compression.LZ4));
            subscriptions.put(name, reading(node.subscribe(TOPIC, "checks", 3, true)));
        });
        Traffic traffic = new Traffic(Traffic.senders(producers, p -> p::sendNow), 300, 0.05, 42);
        ClusterNode a = runtime.cluster("a");
        for (int round = 0; round < 90; round++) {
            traffic.round(40);
            if (round == 20) {
                Segment first = a.layout(TOPIC).activeSegments().get(0);
                assertThat(a.split(TOPIC, first.id()).block()).isInstanceOf(Outcome.Applied.class);
            }
            if (round == 30) {
                runtime.cluster("c").stopIngest(); // replication into c fails for real
            }
            if (round == 45) {
                // Restart only once replication into c has failed for real.
                Flux.interval(Duration.ofMillis(10)).filter(t -> failuresInto("c") > 0).blockFirst(Duration.ofSeconds(10));
                runtime.cluster("c").restartIngest();
            }
            if (round == 60) {
                Segment last = a.layout(TOPIC).activeSegments().get(a.layout(TOPIC).activeSegments().size() - 1);
                assertThat(a.rebucket(TOPIC, last.id(), 8).block()).isInstanceOf(Outcome.Applied.class);
            }
        }
        runtime.awaitQuiet(Duration.ofSeconds(60)).block();

        List<ReplicationChecks.Check> checks = new ArrayList<>(recorder.checks(traffic.produced()));
        subscriptions.forEach((name, s) -> checks.addAll(DeliveryChecks.consumers(name,
                s.deliveries().take(Duration.ofMillis(200))
                        .map(d -> new DeliveryChecks.Delivered(d.consumer(), d.segmentId(), d.messages()))
                        .collectList().block())));
        assertThat(checks).allSatisfy(c -> assertThat(c.passed()).as(c.name() + ": " + c.detail()).isTrue());

        // Every cluster took the split and the rebucket (the finer layout won everywhere).
        for (ClusterNode node : runtime.clusters().values()) {
            assertThat(node.layout(TOPIC).activeSegments()).hasSize(3);
            assertThat(node.layout(TOPIC).activeSegments()).anyMatch(s -> s.buckets().count() == 8);
            ReplicationChecks.Check replicators = ReplicationChecks.replicators(node.name(), node.replicators());
            assertThat(replicators.passed()).as(replicators.detail()).isTrue();
        }
        long verbatim = 0;
        for (ClusterNode node : runtime.clusters().values()) {
            for (String peer : node.peers()) {
                ReplicatorMetrics m = node.replication(TOPIC, peer);
                verbatim += m.verbatimEntries();
            }
        }
        assertThat(verbatim).isPositive();
        assertThat(failuresInto("c")).isPositive(); // the outage happened, and nothing was lost to it
    }

    @Test
    void coldSiblingsMergeOnEveryClusterOnceEachMarksThemAndNothingIsLostOrReordered() {
        runtime = EmbeddedRuntime.start(VerbatimConfig.parse("""
                clusters: [{name: a, token: a-token}, {name: b, token: b-token}]
                topics: [{name: t, initialSegments: 1, bucketBudget: 2}]
                replication: {startAt: earliest, retry: {initial: 20ms, max: 500ms}}
                exchange: {antiEntropyInterval: 300ms, retry: {initial: 20ms, max: 500ms}}
                autoScale:
                  enabled: true
                  interval: 100ms
                  splitCooldown: 1h
                  mergeCooldown: 0s
                  mergeWindow: 1s
                  split: {msgRateIn: 300}
                  merge: {msgRateIn: 1}
                caps: {maxSegments: 2}
                security: {adminToken: merge-token}
                """));
        ClusterNode a = runtime.cluster("a");
        ClusterNode b = runtime.cluster("b");
        ReplicationRecorder recorder = ReplicationRecorder.attach(runtime.storages("t"), true);
        Map<String, Subscription> subscriptions = Map.of("a", reading(a.subscribe("t", "checks", 2, true)), "b",
                reading(b.subscribe("t", "checks", 2, true)));
        Traffic traffic = new Traffic(Map.of("a", a.producer("t", Compression.LZ4)::sendNow, "b",
                b.producer("t", Compression.LZ4)::sendNow), 100, 0, 11);
        // Hot until both clusters split, then quiet: the halves go cold, each cluster marks the boundary,
        // and the exchange merges it everywhere.
        Flux.interval(Duration.ofMillis(20)).takeUntil(t -> a.layout("t").activeSegments().size() == 2
                && b.layout("t").activeSegments().size() == 2).doOnNext(t -> traffic.round(20))
                .blockLast(Duration.ofSeconds(30));
        traffic.round(20);
        Flux.interval(Duration.ofMillis(50)).filter(t -> a.layout("t").activeSegments().size() == 1
                && b.layout("t").activeSegments().size() == 1).blockFirst(Duration.ofSeconds(30));
        traffic.round(20); // into the merged segment
        runtime.awaitQuiet(Duration.ofSeconds(30)).block();

        assertThat(a.policyDecisions()).anyMatch(d -> d.contains("MarkCold[boundary=32768"));
        // The merge is recorded, on both clusters, as agreed by every cluster's cold mark. A fold records its
        // change once the store's commit returned, a moment after the brokers saw the merged layout: wait for it.
        Flux.interval(Duration.ofMillis(10)).filter(t -> Stream.of(a, b).allMatch(n -> n.controller().recentChanges("t")
                .stream().anyMatch(c -> c.what().startsWith("merge")))).blockFirst(Duration.ofSeconds(30));
        assertThat(a.controller().recentChanges("t")).anyMatch(c -> c.what().startsWith("merge") && c.boundary() == 0x8000
                && c.why().equals("cold everywhere")); // the fold's reason for a merge every cluster marked
        assertThat(b.controller().recentChanges("t")).anyMatch(c -> c.what().startsWith("merge"));
        assertThat(Shape.of(a.layout("t"))).isEqualTo(Shape.of(b.layout("t")));
        List<ReplicationChecks.Check> checks = new ArrayList<>(recorder.checks(traffic.produced()));
        subscriptions.forEach((name, s) -> checks.addAll(DeliveryChecks.consumers(name,
                s.deliveries().take(Duration.ofMillis(200))
                        .map(d -> new DeliveryChecks.Delivered(d.consumer(), d.segmentId(), d.messages()))
                        .collectList().block())));
        assertThat(checks).allSatisfy(c -> assertThat(c.passed()).as(c.name() + ": " + c.detail()).isTrue());
    }

    /** Its consumers read as fast as they can: a consumer nobody reads holds dispatch back once its queue is full. */
    static Subscription reading(Subscription s) {
        Flux.range(0, s.consumers()).flatMap(s::consumer, s.consumers()).subscribe();
        return s;
    }

    private long failuresInto(String cluster) {
        return runtime.clusters().values().stream().filter(n -> !n.name().equals(cluster))
                .mapToLong(n -> n.replication(TOPIC, cluster).sendFailures()).sum();
    }

    @Test
    void theLocalPolicySplitsAHotSegmentAndTheStatusPageAndMetricsShowIt() throws Exception {
        runtime = EmbeddedRuntime.start(VerbatimConfig.parse("""
                clusters: [{name: a, token: a-token}, {name: b, token: b-token}]
                topics: [{name: t, initialSegments: 1, bucketBudget: 2}]
                replication: {startAt: earliest, retry: {initial: 20ms, max: 500ms}}
                exchange: {antiEntropyInterval: 500ms, retry: {initial: 20ms, max: 500ms}}
                autoScale:
                  enabled: true
                  interval: 200ms
                  splitCooldown: 10s
                  split: {msgRateIn: 300}
                  merge: {msgRateIn: 1}
                caps: {maxSegments: 2}
                subscriptions: {receiverQueueSize: 5}
                security: {adminToken: policy-token}
                """));
        ClusterNode a = runtime.cluster("a");
        Traffic traffic = new Traffic(Map.of("a", a.producer("t", Compression.ZSTD)::sendNow), 100, 0, 7);
        Flux.interval(Duration.ofMillis(20)).takeUntil(t -> a.layout("t").activeSegments().size() == 2)
                .doOnNext(t -> traffic.send("a", 20)).blockLast(Duration.ofSeconds(30));
        runtime.awaitQuiet(Duration.ofSeconds(30)).block();
        // a split on its own load; b may have split first on the replicated load: one layout either way.
        List<String> decisions = new ArrayList<>(a.policyDecisions());
        decisions.addAll(runtime.cluster("b").policyDecisions());
        assertThat(decisions).anyMatch(d -> d.contains("Split[segmentId=0, reason=msgRateIn]"));
        assertThat(runtime.cluster("b").layout("t").activeSegments()).hasSize(2);
        // Subscribed once split (more consumers than segments would have split for that reason). Nobody reads
        // "stalled": its consumer's queue fills to the configured 5 and the rest waits in its cursors.
        Subscription stalled = a.subscribe("t", "stalled", 1);
        Subscription small = a.subscription("t", "small").consumers(2).receiverQueueSize(2).subscribe();
        assertThat(stalled.receiverQueueSize()).isEqualTo(5);
        assertThat(small.receiverQueueSize()).isEqualTo(2);
        assertThatThrownBy(() -> a.subscribe("t", "stalled", 1)).hasMessageContaining("subscription 'stalled' of "
                + "topic t is open already on cluster a");
        Flux.interval(Duration.ofMillis(10)).filter(t -> stalled.queueDepth(0) == 5).blockFirst(Duration.ofSeconds(10));

        // The live page is served as it is; what it draws is the status and rates JSON (the browser test reads
        // it as drawn).
        assertThat(get(a.adminUrl() + "/")).startsWith("200:").contains("<span id=\"cluster\">").contains("<script>");
        JsonNode toB = json(a.adminUrl() + "/admin/v2/scalable/status").path("topics").path("t").path("remotes").path("b");
        // The split children get N/2 = 1, as a lone cluster's would: b still holding the parent's N = 2
        // counts 1 on each half, so the join does not raise them back.
        assertThat(toB.path("convergedRanges").toString()).isEqualTo("[\"0000-7fff/N1\",\"8000-ffff/N1\"]");
        assertThat(toB.path("divergedRanges").isArray()).isTrue();
        assertThat(toB.path("divergedRanges")).isEmpty();
        // Rates appear once the node has two samples a second apart.
        JsonNode withRates = Flux.interval(Duration.ofMillis(100)).map(t -> json(a.adminUrl() + "/admin/v2/scalable/rates"))
                .filter(r -> r.path("current").has("b")).blockFirst(Duration.ofSeconds(10));
        assertThat(withRates.path("current").path("b").path("verbatim").isNumber()).isTrue();
        assertThat(withRates.path("remotes").path("b").path("verbatim").size())
                .isEqualTo(withRates.path("atMillis").size()).isPositive();
        // The split is on the rates' time axis, when a committed it (its own, or folded from b's).
        JsonNode split = withRates.path("layoutChanges").get(0);
        assertThat(split.path("topic").asText()).isEqualTo("t");
        assertThat(split.path("what").asText()).isEqualTo("split 0000-ffff-0");
        assertThat(split.path("atMillis").asLong()).isBetween(withRates.path("nowMillis").asLong() - 60_000,
                withRates.path("nowMillis").asLong());

        String metrics = get(a.adminUrl() + "/metrics");
        assertThat(metrics).startsWith("200:")
                .containsPattern("verbatim_replication_entries_total\\{[^}]*path=\"verbatim\"[^}]*remote_cluster=\"b\"")
                .contains("verbatim_exchange_diverged_ranges{cluster=\"a\"}")
                .contains("verbatim_budget_utilization{broker=\"0\",cluster=\"a\"}")
                .contains("verbatim_replication_inflight_bytes{broker=\"0\",cluster=\"a\"}")
                .contains("verbatim_topic_active_segments{cluster=\"a\",topic=\"t\"} 2.0")
                .contains("verbatim_ingest_entries_total")
                .contains("verbatim_subscription_queue_depth_entries{cluster=\"a\",consumer=\"0\",subscription=\"stalled\","
                        + "topic=\"t\"} 5.0")
                .containsPattern("verbatim_subscription_backlog_entries\\{cluster=\"a\",subscription=\"stalled\","
                        + "topic=\"t\"} [1-9][0-9]*\\.0")
                .contains("verbatim_subscription_queue_depth_entries{cluster=\"a\",consumer=\"1\",subscription=\"small\"");
        small.dispose();
        assertThat(get(a.adminUrl() + "/metrics")).doesNotContain("subscription=\"small\"");
        assertThat(get(a.adminUrl() + "/admin/v2/scalable/status")).startsWith("200:").contains("\"convergedRanges\"");
        ClusterNode decider = a.policyDecisions().isEmpty() ? runtime.cluster("b") : a;
        assertThat(get(decider.adminUrl() + "/metrics"))
                .containsPattern("verbatim_autoscale_decisions_total\\{[^}]*kind=\"split\"");
    }

    static String uncheckedGet(String url) {
        try {
            return get(url);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    static JsonNode json(String url) {
        try {
            String answer = get(url);
            assertThat(answer).startsWith("200:");
            return new ObjectMapper().readTree(answer.substring("200:".length()));
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    static String get(String url) throws Exception {
        HttpResponse<String> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(url))
                .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
        return r.statusCode() + ":" + r.body();
    }
}
