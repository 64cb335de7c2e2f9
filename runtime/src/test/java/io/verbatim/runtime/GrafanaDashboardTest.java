package io.verbatim.runtime;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.verbatim.config.VerbatimConfig;
import io.verbatim.model.Compression;
import io.verbatim.model.Outcome;
import io.verbatim.testkit.Traffic;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code config/grafana/verbatim.json} charts only what a running runtime exports: every metric name in
 * its PromQL expressions (and its variables' queries) is a series of a real scrape, after traffic, a
 * split that re-batches, a subscription and a GC.
 */
class GrafanaDashboardTest {
    static final Path DASHBOARD = Path.of("..", "config", "grafana", "verbatim.json");
    private static final Pattern IDENTIFIER = Pattern.compile("[a-zA-Z_:][a-zA-Z0-9_:]*");
    private static final Pattern LABEL_VALUES = Pattern.compile("label_values\\(\\s*([a-zA-Z_:][a-zA-Z0-9_:]*)\\s*,");
    private static final Set<String> KEYWORDS = Set.of("and", "or", "unless", "bool", "offset", "by", "without",
            "on", "ignoring", "group_left", "group_right");
    /** What the dashboard must chart, whatever else it does (issue 11). */
    private static final List<String> REQUIRED = List.of("verbatim_replication_entries_total",
            "verbatim_replication_bytes_total", "verbatim_exchange_diverged_ranges",
            "verbatim_exchange_convergence_lag_seconds", "verbatim_exchange_calls_total", "verbatim_budget_utilization",
            "verbatim_budget_throttled_seconds_total", "verbatim_replication_sealed_pinned",
            "verbatim_replication_backlog_entries", "verbatim_ingest_entries_total", "verbatim_replication_restarts_total",
            "verbatim_replication_failing", "verbatim_replication_stalled", "verbatim_replication_stalled_seconds",
            "verbatim_subscription_queue_depth_entries",
            "verbatim_subscription_backlog_entries", "jvm_memory_used_bytes", "jvm_gc_pause_seconds_count",
            "process_cpu_usage", "verbatim_raft_commit_index", "verbatim_raft_listener_lag",
            "verbatim_raft_listener_source", "verbatim_raft_listener_revocations_total");

    /** The metric names a PromQL expression reads: not functions, labels, strings, ranges or keywords. */
    static Set<String> metricNames(String expr) {
        Set<String> out = new TreeSet<>();
        Matcher lv = LABEL_VALUES.matcher(expr);
        while (lv.find()) {
            out.add(lv.group(1));
        }
        String s = expr.replaceAll("label_values\\([^)]*\\)", " ")
                .replaceAll("\"(\\\\.|[^\"\\\\])*\"", " ")
                .replaceAll("\\{[^}]*}", " ")
                .replaceAll("\\[[^]]*]", " ")
                .replaceAll("\\b(by|without|on|ignoring|group_left|group_right)\\s*\\([^)]*\\)", " ")
                .replaceAll("\\$\\{?\\w+}?", " ");
        Matcher m = IDENTIFIER.matcher(s);
        while (m.find()) {
            String name = m.group();
            boolean call = s.substring(m.end()).matches("(?s)\\s*\\(.*");
            if (!call && !KEYWORDS.contains(name) && !name.matches("\\d.*")) {
                out.add(name);
            }
        }
        return out;
    }

    @Test
    void metricNamesAreThoseAnExpressionReadsNotItsFunctionsLabelsOrVariables() {
        assertThat(metricNames("sum by (cluster, path) (rate(verbatim_replication_entries_total{cluster=~\"$cluster\","
                + "path=\"verbatim\"}[$__rate_interval])) / on (cluster) group_left max(jvm_x) > bool 0"))
                .containsExactly("jvm_x", "verbatim_replication_entries_total");
        assertThat(metricNames("label_values(verbatim_topic_active_segments, cluster)"))
                .containsExactly("verbatim_topic_active_segments");
        assertThat(metricNames("rate(jvm_gc_pause_seconds_sum[5m]) / rate(jvm_gc_pause_seconds_count[5m])"))
                .containsExactly("jvm_gc_pause_seconds_count", "jvm_gc_pause_seconds_sum");
    }

    @Test
    void everyMetricTheDashboardChartsExistsInARealScrape() throws Exception {
        JsonNode dashboard = new ObjectMapper().readTree(Files.readString(DASHBOARD));
        List<String> expressions = expressions(dashboard);
        Set<String> charted = new TreeSet<>();
        expressions.forEach(e -> charted.addAll(metricNames(e)));
        assertThat(charted).containsAll(REQUIRED);
        assertThat(dashboard.path("templating").path("list").findValuesAsText("type")).contains("datasource");

        Set<String> scraped = scrapeAfterTraffic();
        for (String expr : expressions) {
            assertThat(scraped).as("the series of '%s'", expr).containsAll(metricNames(expr));
        }
    }

    private static List<String> expressions(JsonNode dashboard) {
        List<String> out = new ArrayList<>();
        for (JsonNode panel : dashboard.path("panels")) {
            List<JsonNode> all = new ArrayList<>(List.of(panel));
            panel.path("panels").forEach(all::add); // a collapsed row holds its panels
            for (JsonNode p : all) {
                p.path("targets").forEach(t -> out.add(t.path("expr").asText()));
            }
        }
        assertThat(out).as("expressions of the dashboard").isNotEmpty().doesNotContain("");
        for (JsonNode variable : dashboard.path("templating").path("list")) {
            if (variable.path("type").asText().equals("query")) {
                out.add(variable.path("definition").asText());
            }
        }
        return out;
    }

    /**
     * Two clusters: traffic from a while b's ingest is down, b splits, b's ingest comes back (a's entries of
     * the parent straddle b's halves: re-batched under the budget), a subscription on a, a GC.
     */
    private static Set<String> scrapeAfterTraffic() throws Exception {
        try (EmbeddedRuntime runtime = EmbeddedRuntime.start(VerbatimConfig.parse("""
                clusters: [{name: a, brokers: 2, token: a-token}, {name: b, token: b-token}]
                topics: [{name: t, initialSegments: 1, bucketBudget: 2}]
                replication: {startAt: earliest, retry: {initial: 20ms, max: 200ms}}
                exchange: {antiEntropyInterval: 300ms, retry: {initial: 20ms, max: 200ms}}
                security: {adminToken: dashboard-token}
                """))) {
            ClusterNode a = runtime.cluster("a");
            ClusterNode b = runtime.cluster("b");
            EmbeddedRuntimeTest.reading(a.subscribe("t", "dashboard", 2));
            Traffic traffic = new Traffic(Map.of("a", a.producer("t", Compression.LZ4)::sendNow, "b",
                    b.producer("t", Compression.LZ4)::sendNow), 200, 0, 5);
            b.stopIngest();
            traffic.round(50);
            traffic.round(50);
            assertThat(b.split("t", b.layout("t").activeSegments().get(0).id()).block(Duration.ofSeconds(10)))
                    .isInstanceOf(Outcome.Applied.class);
            Flux.interval(Duration.ofMillis(20)).filter(t -> a.layout("t").activeSegments().size() == 2)
                    .blockFirst(Duration.ofSeconds(10));
            b.restartIngest();
            traffic.round(50);
            Flux.interval(Duration.ofMillis(50)).filter(t -> a.replication("t", "b").rebatchedEntries() > 0)
                    .blockFirst(Duration.ofSeconds(30));
            runtime.awaitQuiet(Duration.ofSeconds(30)).block();
            System.gc(); // the GC pause timer exists from the first pause on
            Set<String> names = Flux.interval(Duration.ofMillis(100)).map(t -> scrape(a, b))
                    .filter(n -> n.contains("jvm_gc_pause_seconds_count")).blockFirst(Duration.ofSeconds(10));
            return names;
        }
    }

    private static Set<String> scrape(ClusterNode... nodes) {
        Set<String> names = new TreeSet<>();
        for (ClusterNode node : nodes) {
            String body = EmbeddedRuntimeTest.uncheckedGet(node.adminUrl() + "/metrics");
            assertThat(body).startsWith("200:");
            body.substring(4).lines().filter(l -> !l.isBlank() && !l.startsWith("#"))
                    .forEach(l -> names.add(l.split("[{ ]", 2)[0]));
        }
        return names;
    }
}
