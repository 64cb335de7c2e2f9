package io.verbatim.runtime;

import com.fasterxml.jackson.databind.JsonNode;
import io.verbatim.config.VerbatimConfig;
import io.verbatim.model.Compression;
import io.verbatim.model.Outcome;
import io.verbatim.runtime.broker.Producer;
import io.verbatim.testkit.Traffic;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

/**
 * The live status page in a real headless Chromium (over the DevTools protocol): it loads, it updates as
 * traffic flows, and it shows a split converging on both clusters. Without a Chromium binary the test is
 * skipped, unless {@code VERBATIM_BROWSER_REQUIRED=1} (CI), then it fails. {@code -Dverbatim.screenshot=FILE}
 * saves a screenshot of the page at the end.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class StatusPageBrowserTest {
    private static final Duration WAIT = Duration.ofSeconds(20);
    private static final String CONFIG = """
            clusters: [{name: a, token: a-token, delegations: {b0: c2}}, {name: b, token: b-token}]
            metadataLog: {enabled: true}
            topics: [{name: t, initialSegments: 1, bucketBudget: 2}]
            replication: {startAt: earliest, retry: {initial: 20ms, max: 500ms}}
            exchange: {antiEntropyInterval: 500ms, retry: {initial: 20ms, max: 500ms}}
            security: {adminToken: page-token}
            """;
    /** What the test reads of a page, as JSON: the script's output, not the server's. */
    private static final String READ = """
            (() => {
              const text = sel => { const e = document.querySelector(sel); return e ? e.textContent.trim() : null; };
              const topic = document.querySelector('section.topic[data-topic="t"]');
              const remote = topic && topic.querySelector('table.remotes tbody tr');
              const rate = document.querySelector('#rates tr[data-remote] td.verbatim');
              const verbatim = document.querySelector('#chart polyline#verbatim');
              return {
                cluster: text('#cluster'), polls: Number(document.body.dataset.polls), updated: text('#updated'),
                connection: text('#connection'), deferring: getComputedStyle(document.getElementById('deferring')).display,
                peer: text('#peers tr[data-peer] td.exchange'), replicators: text('#replicators .total'),
                tables: ['#rates', '#peers', '#chart', 'table.remotes'].filter(s => document.querySelector(s)).length,
                epoch: topic && Number(text('section.topic[data-topic="t"] .epoch')),
                layout: topic && text('section.topic[data-topic="t"] .layout'),
                cells: topic ? topic.querySelectorAll('.ring .cell').length : 0,
                remote: remote && remote.dataset.remote,
                converged: remote && remote.querySelector('td.converged').textContent,
                diverged: remote && remote.querySelector('td.diverged').textContent,
                changes: topic ? topic.querySelectorAll('ol.changes li').length : 0,
                rate: rate ? Number(rate.textContent) : -1,
                points: verbatim ? verbatim.getAttribute('points').split(' ').filter(p => p).length : 0,
                changeMarks: document.querySelectorAll('#chart line.change').length,
                members: document.querySelectorAll('#metadata-log tr[data-member]').length,
                leaders: [...document.querySelectorAll('#metadata-log tr[data-member] td.role')]
                  .filter(td => td.textContent === 'leader').length,
                feedsShown: !document.getElementById('listener-feeds').hidden,
                feed: text('#listener-feeds tr[data-listener="b0"] td.source'),
                feedAssigned: text('#listener-feeds tr[data-listener="b0"] td.assigned'),
                external: performance.getEntriesByType('resource').map(r => r.name)
                  .filter(n => !n.startsWith(location.origin)).length
                  + document.querySelectorAll('script[src], link[href], img[src]').length
              };
            })()""";

    private Chromium browser;
    private EmbeddedRuntime runtime;
    private Chromium.Page pageOfA;
    private Chromium.Page pageOfB;

    @BeforeAll
    void start() throws Exception {
        Optional<Path> binary = Chromium.binary();
        if (binary.isEmpty()) {
            String explicit = System.getenv("VERBATIM_CHROMIUM");
            String missing = explicit != null && !explicit.isBlank()
                    ? "no Chromium binary: VERBATIM_CHROMIUM=" + explicit + " is not an executable file"
                    : "no Chromium binary: none of " + Chromium.NAMES + " on the PATH and VERBATIM_CHROMIUM not set "
                            + "(Debian: apt-get install chromium)";
            if ("1".equals(System.getenv("VERBATIM_BROWSER_REQUIRED"))) {
                fail(missing + ", and VERBATIM_BROWSER_REQUIRED=1");
            }
            Assumptions.assumeTrue(false, missing + ": the live status page is not tested in a browser");
        }
        browser = Chromium.launch(binary.get(), WAIT);
        runtime = EmbeddedRuntime.start(VerbatimConfig.parse(CONFIG));
        pageOfA = browser.open(runtime.cluster("a").adminUrl() + "/");
        pageOfB = browser.open(runtime.cluster("b").adminUrl() + "/");
    }

    @AfterAll
    void stop() {
        try {
            if (browser != null) {
                browser.close();
            }
        } finally {
            if (runtime != null) {
                runtime.close();
            }
        }
    }

    @Test
    @Order(1)
    void thePageLoadsWithTheClusterAndItsTablesFromItsOwnOriginOnly() throws Exception {
        JsonNode a = await(pageOfA, "cluster a's page drawn", p -> "a".equals(p.path("cluster").asText())
                && p.path("polls").asInt() > 0 && "t".equals(topicOf(p)));
        assertThat(a.path("tables").asInt()).isEqualTo(4);
        assertThat(a.path("peer").asText()).isEqualTo("answered");
        assertThat(a.path("replicators").asInt()).isEqualTo(runtime.cluster("a").replicators().size()).isPositive();
        assertThat(a.path("connection").asText()).isEqualTo("live");
        assertThat(a.path("members").asInt()).as("three controller replicas and a broker's listener").isEqualTo(4);
        assertThat(a.path("leaders").asInt()).isEqualTo(1);
        // who feeds the broker's listener: its delegate c2 (or c2 as the leader, when it leads)
        assertThat(a.path("feedsShown").asBoolean()).isTrue();
        assertThat(a.path("feed").asText()).matches("c2 \\((delegate|leader)\\)");
        assertThat(a.path("feedAssigned").asText()).isEqualTo("c2");
        assertThat(a.path("deferring").asText()).as("the failover notice, once every peer was heard").isEqualTo("none");
        assertThat(a.path("layout").asText()).isEqualTo("0000-ffff/N2");
        assertThat(a.path("remote").asText()).isEqualTo("b");
        assertThat(a.path("external").asInt()).as("scripts, styles, fonts or images from elsewhere").isZero();
        JsonNode b = await(pageOfB, "cluster b's page drawn", p -> "b".equals(p.path("cluster").asText()));
        assertThat(b.path("remote").asText()).isEqualTo("a");
    }

    @Test
    @Order(2)
    void thePageUpdatesAsTrafficIsProduced() throws Exception {
        JsonNode before = read(pageOfA);
        Producer producer = runtime.cluster("a").producer("t", Compression.LZ4);
        Traffic traffic = new Traffic(Map.of("a", producer::sendNow), 50, 0, 3);
        long deadline = System.nanoTime() + WAIT.toNanos();
        JsonNode now = before;
        while (System.nanoTime() < deadline && !(now.path("rate").asDouble() > 0 && now.path("points").asInt() >= 2)) {
            traffic.send("a", 20);
            Thread.sleep(100);
            now = read(pageOfA);
        }
        assertThat(now.path("rate").asDouble()).as("the verbatim rate toward b, as drawn: %s", now).isPositive();
        assertThat(now.path("points").asInt()).as("the chart's points").isGreaterThanOrEqualTo(2);
        assertThat(now.path("polls").asInt()).isGreaterThan(before.path("polls").asInt());
        assertThat(now.path("updated").asText()).isNotEqualTo("never");
    }

    @Test
    @Order(3)
    void thePageShowsASplitConvergingOnBothClusters() throws Exception {
        ClusterNode a = runtime.cluster("a");
        long segment = a.layout("t").activeSegments().get(0).id();
        assertThat(a.split("t", segment).block(WAIT)).isInstanceOf(Outcome.Applied.class);
        String halves = "0000-7fff/N1 8000-ffff/N1";
        for (Chromium.Page page : new Chromium.Page[] {pageOfA, pageOfB}) {
            JsonNode p = await(page, "the split converged as drawn", v -> halves.equals(v.path("layout").asText())
                    && halves.equals(v.path("converged").asText()) && v.path("diverged").asText().isEmpty());
            assertThat(p.path("cells").asInt()).isEqualTo(2);
            assertThat(p.path("epoch").asLong()).isPositive();
            assertThat(p.path("changes").asInt()).isPositive();
        }
        JsonNode marked = await(pageOfA, "the split marked on the chart", v -> v.path("changeMarks").asInt() > 0);
        assertThat(marked.path("changeMarks").asInt()).isEqualTo(1);
        String screenshot = System.getProperty("verbatim.screenshot");
        if (screenshot != null) {
            new Traffic(Map.of("a", a.producer("t", Compression.LZ4)::sendNow), 50, 0, 4).send("a", 50);
            Thread.sleep(2500);
            pageOfA.screenshot(Path.of(screenshot));
        }
    }

    private static String topicOf(JsonNode p) {
        return p.path("epoch").isNumber() ? "t" : null;
    }

    private static JsonNode read(Chromium.Page page) throws Exception {
        return page.evaluate(READ);
    }

    /** Reads the page every 200 ms until {@code done}, for at most {@link #WAIT}. */
    private static JsonNode await(Chromium.Page page, String what, Predicate<JsonNode> done) throws Exception {
        return awaitValue(what, () -> read(page), done);
    }

    private static <T> T awaitValue(String what, Callable<T> read, Predicate<T> done) throws Exception {
        long deadline = System.nanoTime() + WAIT.toNanos();
        T last = read.call();
        while (!done.test(last)) {
            if (System.nanoTime() > deadline) {
                fail(what + ": not within " + WAIT + "; the page shows " + last);
            }
            Thread.sleep(200);
            last = read.call();
        }
        return last;
    }
}
