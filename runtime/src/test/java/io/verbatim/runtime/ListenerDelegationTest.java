package io.verbatim.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.verbatim.config.VerbatimConfig;
import io.verbatim.metadatalog.server.MemberRole;
import io.verbatim.metadatalog.server.MemberStatus;
import io.verbatim.runtime.controller.DelegationApi;
import io.verbatim.runtime.controller.Delegations;
import io.verbatim.runtime.controller.MetadataLogMetrics;
import io.verbatim.runtime.status.NodeStatus;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import reactor.core.publisher.Flux;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * Listener delegation through the runtime (R-H3 … R-H7): the admin assigns a cluster's listeners (one per
 * broker) to followers over the admin port, the followers feed them, the leader shows who feeds whom in
 * the status and the metrics, and a delegate that dies is revoked: the leader feeds its listener, which
 * still applies every layout change.
 */
class ListenerDelegationTest {
    private static final String CONFIG = """
            clusters: [{name: a, token: a-token, brokers: 2%s}, {name: b, token: b-token}]
            topics: [{name: t, initialSegments: 1, bucketBudget: 4}]
            exchange: {antiEntropyInterval: 300ms, retry: {initial: 20ms, max: 300ms}}
            security: {adminToken: admin-token}
            metadataLog: {enabled: %s, reassignmentInterval: 1s}
            """;
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    private EmbeddedRuntime runtime;

    @AfterEach
    void stop() {
        if (runtime != null) {
            runtime.close();
        }
    }

    @Test
    void followersFeedTheListenersTheAdminAssignsAndTheLeaderShowsWhoFeedsWhom() throws Exception {
        runtime = EmbeddedRuntime.start(VerbatimConfig.parse(CONFIG.formatted("", true)));
        ClusterNode a = runtime.cluster("a");
        String leader = leader(a);
        List<String> followers = List.of("c1", "c2", "c3").stream().filter(v -> !v.equals(leader)).toList();
        String assignment = "{\"b0\": \"" + followers.get(0) + "\", \"b1\": \"" + followers.get(1) + "\"}";
        HttpResponse<String> put = untilNotUnavailable(() -> put(a.adminUrl(), assignment, "admin-token"));
        assertThat(put.statusCode()).as(put.body()).isEqualTo(200);
        JsonNode view = JSON.readTree(put.body());
        assertThat(view.get("leader").asText()).isEqualTo(leader);
        assertThat(view.get("assignment").get("b0").asText()).isEqualTo(followers.get(0));

        // Each follower feeds its listener; the leader's status and meters say so.
        NodeStatus.ListenerFeed b0 = awaitFeed(a, "b0", f -> f.delegated() && f.source().equals(followers.get(0)));
        assertThat(b0.assignedTo()).isEqualTo(followers.get(0));
        awaitFeed(a, "b1", f -> f.delegated() && f.source().equals(followers.get(1)));
        assertThat(member(a, followers.get(0)).feeding()).containsExactly("b0");
        assertThat(member(a, followers.get(1)).feeding()).containsExactly("b1");
        assertThat(gauge(a, MetadataLogMetrics.LISTENER_SOURCE, "b0", followers.get(0))).isEqualTo(1.0);
        assertThat(gauge(a, MetadataLogMetrics.LISTENER_SOURCE, "b0", leader)).isEqualTo(0.0);
        String page = a.registry().scrape();
        assertThat(page).contains("verbatim_raft_listener_source{cluster=\"a\",listener=\"b1\",source=\""
                + followers.get(1) + "\"} 1.0").contains("verbatim_raft_listener_lag{cluster=\"a\",listener=\"b0\"}");

        // A layout change reaches the brokers' listeners through their delegates.
        long epoch = a.layout("t").epoch();
        a.split("t", a.layout("t").activeSegments().get(0).id()).block(Duration.ofSeconds(10));
        long commit = member(a, leader).commitIndex();
        awaitApplied(a, "b0", commit);
        awaitApplied(a, "b1", commit);
        assertThat(a.layout("t").epoch()).isGreaterThan(epoch);
        runtime.awaitQuiet(Duration.ofSeconds(30)).block();
        assertThat(runtime.cluster("b").layout("t").activeSegments()).hasSize(2);

        // The status JSON and the GET view carry the same.
        HttpResponse<String> get = get(a.adminUrl(), null);
        assertThat(get.statusCode()).as(get.body()).isEqualTo(200);
        assertThat(JSON.readTree(get.body()).get("listeners").findValuesAsText("source"))
                .containsExactly(followers.get(0), followers.get(1));
        JsonNode status = JSON.readTree(get(a.adminUrl() + "/admin/v2/scalable/status"));
        assertThat(status.get("listenerFeeds").findValuesAsText("listener")).containsExactly("b0", "b1");
    }

    @Test
    void aDelegateThatDiesIsRevokedAndTheLeaderFeedsItsListenerWhichMissesNoChange() throws Exception {
        runtime = EmbeddedRuntime.start(VerbatimConfig.parse(CONFIG.formatted("", true)));
        ClusterNode a = runtime.cluster("a");
        String leader = leader(a);
        String delegate = List.of("c1", "c2", "c3").stream().filter(v -> !v.equals(leader)).findFirst().orElseThrow();
        HttpResponse<String> put = untilNotUnavailable(() -> put(a.adminUrl(), "{\"b0\": \"" + delegate + "\"}",
                "admin-token"));
        assertThat(put.statusCode()).as(put.body()).isEqualTo(200);
        awaitFeed(a, "b0", f -> f.delegated() && f.source().equals(delegate));

        a.killMetadataMember(delegate);
        NodeStatus.ListenerFeed revoked = awaitFeed(a, "b0", f -> f.revoked() && !f.delegated());
        assertThat(revoked.source()).isEqualTo(leader(a));
        assertThat(revoked.revocationReason()).contains(delegate).contains("not heard");
        assertThat(revoked.revocations()).isGreaterThanOrEqualTo(1);
        Flux.interval(Duration.ofMillis(20)).filter(t -> a.registry().get(MetadataLogMetrics.LISTENER_REVOCATIONS)
                .tag("listener", "b0").functionCounter().count() >= 1).blockFirst(Duration.ofSeconds(5));

        // The listener notices nothing: the two voters left commit, the leader feeds b0 directly.
        Flux.interval(Duration.ofMillis(20)).filter(t -> !a.controller().deferringOwnChanges())
                .blockFirst(Duration.ofSeconds(20));
        a.split("t", a.layout("t").activeSegments().get(0).id()).block(Duration.ofSeconds(10));
        awaitApplied(a, "b0", member(a, leader(a)).commitIndex());
        assertThat(awaitFeed(a, "b0", f -> true).lag()).isZero();
    }

    @Test
    void aBadAssignmentIsRefusedNamingWhatIsWrongAndChangesNothing() throws Exception {
        runtime = EmbeddedRuntime.start(VerbatimConfig.parse(CONFIG.formatted("", true)));
        ClusterNode a = runtime.cluster("a");
        String leader = leader(a);
        String url = a.adminUrl();
        assertThat(put(url, "{\"b0\": \"c2\"}", null).statusCode()).isEqualTo(401);
        HttpResponse<String> broker = put(url, "{\"b0\": \"c2\"}", "a-token");
        assertThat(broker.statusCode()).isEqualTo(403);
        assertThat(put(url, "{\"b0\": ", "admin-token").body()).contains("not JSON");
        assertThat(put(url, "[\"b0\"]", "admin-token").body()).contains("not a JSON object");
        assertThat(put(url, "{\"b0\": 7}", "admin-token").body()).contains("listener b0: 7 is not a member id");
        HttpResponse<String> twice = put(url, "{\"b0\": \"c2\", \"b0\": \"c3\"}", "admin-token");
        assertThat(twice.statusCode()).isEqualTo(400);
        assertThat(twice.body()).contains("listener b0 is given twice");
        HttpResponse<String> unknown = untilNotUnavailable(() -> put(url, "{\"b9\": \"c2\"}", "admin-token"));
        assertThat(unknown.statusCode()).isEqualTo(400);
        assertThat(unknown.body()).contains("b9 is not a listener").contains("[b0, b1]");
        assertThat(put(url, "{\"b0\": \"c9\"}", "admin-token").body()).contains("c9 is not a voter");
        assertThat(put(url, "{\"b0\": \"b1\"}", "admin-token").body()).contains("b1 is not a voter");
        HttpResponse<String> huge = put(url, "{\"b0\": \"" + "c".repeat(DelegationApi.MAX_BODY_BYTES) + "\"}",
                "admin-token");
        assertThat(huge.statusCode()).isEqualTo(413);
        assertThat(Delegations.of(member(a, leader).group())).isEmpty();
        assertThat(awaitFeed(a, "b0", f -> true).delegated()).isFalse();
    }

    @Test
    void withDelegationOffTheLeaderFeedsEveryListenerAndAnAssignmentIsRefused() throws Exception {
        runtime = EmbeddedRuntime.start(VerbatimConfig.parse(CONFIG.formatted("", false)));
        ClusterNode a = runtime.cluster("a");
        String leader = leader(a);
        HttpResponse<String> put = untilNotUnavailable(() -> put(a.adminUrl(), "{\"b0\": \"c2\"}", "admin-token"));
        assertThat(put.statusCode()).isEqualTo(400);
        assertThat(put.body()).contains("listener delegation is off (metadataLog.enabled is false)");
        NodeStatus.ListenerFeed b0 = awaitFeed(a, "b0", f -> true);
        assertThat(b0.source()).isEqualTo(leader);
        assertThat(b0.delegated()).isFalse();
    }

    @Test
    void theYamlsAssignmentStartsTheLog() throws Exception {
        runtime = EmbeddedRuntime.start(VerbatimConfig.parse(CONFIG.formatted(", delegations: {b0: c1, b1: c2}", true)));
        ClusterNode a = runtime.cluster("a");
        String leader = leader(a);
        assertThat(Delegations.of(member(a, leader).group())).containsEntry("b0", "c1").containsEntry("b1", "c2");
        // a listener assigned to the leader itself is fed by the leader; the other by its follower
        for (String listener : List.of("b0", "b1")) {
            String assigned = listener.equals("b0") ? "c1" : "c2";
            NodeStatus.ListenerFeed f = awaitFeed(a, listener, x -> x.delegated() == !assigned.equals(leader));
            assertThat(f.source()).isEqualTo(assigned.equals(leader) ? leader : assigned);
        }
    }

    @Test
    void anAssignmentIsKeptInTheLogAcrossARestartFromDisk(@TempDir Path dir)
            throws Exception {
        VerbatimConfig config = VerbatimConfig.parse(CONFIG.formatted("", true));
        Scheduler timer = Schedulers.newParallel("restart-timer", 2, true);
        Scheduler cpu = Schedulers.newBoundedElastic(2, 100, "restart-cpu");
        try {
            ClusterNode first = new ClusterNode(config, "a", Optional.of(dir), timer, cpu).start();
            String delegate;
            try {
                String leader = leader(first);
                delegate = List.of("c1", "c2", "c3").stream().filter(v -> !v.equals(leader)).findFirst().orElseThrow();
                HttpResponse<String> put = untilNotUnavailable(() -> put(first.adminUrl(), "{\"b1\": \"" + delegate
                        + "\"}", "admin-token"));
                assertThat(put.statusCode()).as(put.body()).isEqualTo(200);
            } finally {
                first.close();
            }
            // the YAML names no delegation: the log's configuration, which holds the admin's, is what runs
            ClusterNode again = new ClusterNode(config, "a", Optional.of(dir), timer, cpu).start();
            try {
                String leader = leader(again);
                assertThat(Delegations.of(member(again, leader).group())).containsExactly(
                        Map.entry("b1", delegate));
                awaitFeed(again, "b1", f -> f.assignedTo().equals(delegate));
            } finally {
                again.close();
            }
        } finally {
            timer.dispose();
            cpu.dispose();
        }
    }

    // ---- helpers ----------------------------------------------------------------------------------------

    private static String leader(ClusterNode a) {
        return Flux.interval(Duration.ofMillis(20)).map(t -> a.metadataLog().stream()
                        .filter(s -> s.role() == MemberRole.LEADER).findFirst())
                .filter(Optional::isPresent).map(Optional::get).map(MemberStatus::memberId)
                .blockFirst(Duration.ofSeconds(10));
    }

    private static MemberStatus member(ClusterNode a, String id) {
        return a.metadataLog().stream().filter(s -> s.memberId().equals(id)).findFirst().orElseThrow();
    }

    private static NodeStatus.ListenerFeed awaitFeed(ClusterNode a, String listener,
            Predicate<NodeStatus.ListenerFeed> until) {
        return Flux.interval(Duration.ofMillis(20)).onBackpressureDrop()
                .concatMap(t -> a.status().flatMapIterable(NodeStatus::listenerFeeds))
                .filter(f -> f.listener().equals(listener) && until.test(f)).blockFirst(Duration.ofSeconds(15));
    }

    private static void awaitApplied(ClusterNode a, String member, long index) {
        Flux.interval(Duration.ofMillis(20)).filter(t -> member(a, member).appliedIndex() >= index)
                .blockFirst(Duration.ofSeconds(15));
    }

    private static double gauge(ClusterNode a, String name, String listener, String source) {
        return a.registry().get(name).tags("listener", listener, "source", source).gauge().value();
    }

    private interface Call {
        HttpResponse<String> run() throws Exception;
    }

    /** A new leader refuses a configuration change until it committed an entry of its term: try again. */
    private static HttpResponse<String> untilNotUnavailable(Call call) throws Exception {
        HttpResponse<String> r = call.run();
        for (int i = 0; i < 100 && r.statusCode() == 503; i++) {
            Thread.sleep(50);
            r = call.run();
        }
        return r;
    }

    private static HttpResponse<String> put(String base, String body, String token) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(base + DelegationApi.PATH))
                .timeout(Duration.ofSeconds(10)).PUT(HttpRequest.BodyPublishers.ofString(body))
                .header("Content-Type", "application/json");
        if (token != null) {
            b.header("Authorization", "Bearer " + token);
        }
        return HTTP.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    private static HttpResponse<String> get(String base, String token) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(base + DelegationApi.PATH)).timeout(Duration.ofSeconds(10));
        if (token != null) {
            b.header("Authorization", "Bearer " + token);
        }
        return HTTP.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    private static String get(String url) throws Exception {
        return HTTP.send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(10)).build(),
                HttpResponse.BodyHandlers.ofString()).body();
    }
}
