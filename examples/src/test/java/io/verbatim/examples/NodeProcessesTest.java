package io.verbatim.examples;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.verbatim.embedded.MemorySegments;
import io.verbatim.testkit.ReplicationChecks.Check;
import io.verbatim.testkit.ReplicationRecorder;
import java.io.IOException;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Three clusters as three {@code verbatim node} processes (separate JVMs) on loopback from one YAML:
 * traffic produced to each over HTTP, a split on one, one node stopped with SIGTERM while the others keep
 * producing and replicating, restarted from its data directory; then every message on every cluster, by
 * the same checks the demo runs, on what each node stores (read through its image endpoint).
 */
class NodeProcessesTest {
    private static final String TOPIC = "persistent://public/default/orders";
    /** The admin role's: producing, splitting, reading images. */
    private static final String TOKEN = "node-test-admin-token";
    private static final List<String> CLUSTERS = List.of("us-east", "eu-west", "ap-south");
    private static final int KEYS = 200;
    private static final int PER_CALL = 20;
    private static final Duration WAIT = Duration.ofSeconds(90);
    private static final ObjectMapper JSON = new ObjectMapper();
    /** Where each node's log is kept after the test (relative to the module: {@code examples/target/...}). */
    private static final Path KEPT_LOGS = Path.of("target", "node-logs", "NodeProcessesTest");

    @TempDir
    Path dir;

    private final Map<String, AtomicInteger> produced = new LinkedHashMap<>();
    private NodeProcesses nodes;

    @BeforeEach
    void nodes() {
        nodes = new NodeProcesses(dir, TOKEN, WAIT, false);
    }

    @AfterEach
    void killLeftovers() throws IOException {
        nodes.close();
        nodes.keepLogs(KEPT_LOGS); // the temporary directory goes: a failure's stack traces stay here
    }

    @Test
    void threeNodeProcessesReplicateThroughASplitAndARestartLosingNothing() throws Exception {
        writeConfig();
        CLUSTERS.forEach(c -> produced.put(c, new AtomicInteger()));
        for (String c : CLUSTERS) {
            start(c);
        }
        for (String c : CLUSTERS) {
            awaitLine(c, c + ": ready", 1);
        }
        ExecutorService traffic = Executors.newFixedThreadPool(3);
        try {
            produceEverywhere(traffic, 40);
            HttpResponse<String> split = call("us-east", "POST", "/admin/v2/scalable/split?topic=" + enc(TOPIC)
                    + "&segment=0", null);
            assertThat(split.statusCode()).as(split.body()).isEqualTo(200);

            // Mid-traffic: the others keep producing while eu-west stops on SIGTERM and comes back.
            Future<?> east = traffic.submit(() -> produce("us-east", 60));
            Future<?> south = traffic.submit(() -> produce("ap-south", 60));
            produce("eu-west", 10);
            Process euWest = nodes.process("eu-west");
            euWest.destroy(); // SIGTERM
            assertThat(euWest.waitFor(60, TimeUnit.SECONDS)).as("eu-west stops within a minute").isTrue();
            assertThat(euWest.exitValue()).as("exit code after SIGTERM; log:\n" + log("eu-west")).isZero();
            assertThat(log("eu-west")).contains("eu-west: stopped cleanly");
            assertThat(Files.exists(dir.resolve("data/eu-west/state.pb"))).isTrue();
            start("eu-west");
            awaitLine("eu-west", "eu-west: ready", 2);
            produce("eu-west", 30);
            east.get(2, TimeUnit.MINUTES);
            south.get(2, TimeUnit.MINUTES);
        } finally {
            traffic.shutdownNow();
        }
        awaitQuiet();

        Map<String, MemorySegments> stored = new LinkedHashMap<>();
        for (String c : CLUSTERS) {
            stored.put(c, image(c));
        }
        Map<String, Long> counts = new LinkedHashMap<>();
        produced.forEach((c, n) -> counts.put(c, (long) n.get()));
        List<Check> checks = ReplicationRecorder.of(stored, true).checks(counts);
        assertThat(checks).allSatisfy(c -> assertThat(c.passed()).as(c.name() + ": " + c.detail()).isTrue());
        assertThat(stored.get("eu-west").layout().activeSegments()).hasSize(3); // the split reached it

        for (String c : CLUSTERS) {
            Process p = nodes.process(c);
            p.destroy();
            assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
            assertThat(p.exitValue()).as(c + " exit code; log:\n" + log(c)).isZero();
            // Nothing went wrong that a node had to log as an error (a cut WebSocket, a dropped signal, ...).
            assertThat(NodeProcesses.errors(log(c))).as(c + "'s errors with their stack traces (the whole log is "
                    + "kept in examples/" + KEPT_LOGS.resolve(c + ".log") + ")").isEmpty();
        }
    }

    /**
     * Issue 23's crash cases across processes: us-east stops cleanly and restarts, takes a split, and is then
     * killed (SIGKILL) while its peers replicate into it; restarted from its data directory, it has everything it
     * acknowledged, hands out no source position it handed out before (its peers would drop those entries as
     * duplicates), keeps the split topic's entries, and every message is on every cluster.
     */
    @Test
    void aNodeKilledAfterARestartAndASplitLosesNothingItAcknowledged() throws Exception {
        writeConfig();
        CLUSTERS.forEach(c -> produced.put(c, new AtomicInteger()));
        for (String c : CLUSTERS) {
            start(c);
        }
        for (String c : CLUSTERS) {
            awaitLine(c, c + ": ready", 1);
        }
        ExecutorService traffic = Executors.newFixedThreadPool(3);
        try {
            produceEverywhere(traffic, 10);
            Process east = nodes.process("us-east");
            east.destroy(); // SIGTERM: a clean stop
            assertThat(east.waitFor(60, TimeUnit.SECONDS)).isTrue();
            start("us-east");
            awaitLine("us-east", "us-east: ready", 2);
            produce("us-east", 10);
            HttpResponse<String> split = call("us-east", "POST", "/admin/v2/scalable/split?topic=" + enc(TOPIC)
                    + "&segment=0", null);
            assertThat(split.statusCode()).as(split.body()).isEqualTo(200);

            Future<?> west = traffic.submit(() -> produce("eu-west", 60));
            Future<?> south = traffic.submit(() -> produce("ap-south", 60));
            produce("us-east", 10);
            nodes.process("us-east").destroyForcibly(); // SIGKILL, with the peers' entries arriving
            assertThat(nodes.process("us-east").waitFor(30, TimeUnit.SECONDS)).isTrue();
            start("us-east");
            awaitLine("us-east", "us-east: ready", 3);
            assertThat(log("us-east")).contains("did not stop cleanly");
            produce("us-east", 10);
            west.get(2, TimeUnit.MINUTES);
            south.get(2, TimeUnit.MINUTES);
        } finally {
            traffic.shutdownNow();
        }
        awaitQuiet();

        Map<String, MemorySegments> stored = new LinkedHashMap<>();
        for (String c : CLUSTERS) {
            stored.put(c, image(c));
        }
        Map<String, Long> counts = new LinkedHashMap<>();
        produced.forEach((c, n) -> counts.put(c, (long) n.get()));
        List<Check> checks = ReplicationRecorder.of(stored, true).checks(counts);
        assertThat(checks).allSatisfy(c -> assertThat(c.passed()).as(c.name() + ": " + c.detail()).isTrue());
        assertThat(stored.get("us-east").layout().activeSegments()).hasSize(3);
    }

    // ---- the nodes ------------------------------------------------------------------------------

    private void writeConfig() throws IOException {
        StringBuilder y = new StringBuilder("clusters:\n");
        for (String c : CLUSTERS) {
            int admin = NodeProcesses.freePort();
            nodes.adminPort(c, admin);
            y.append("  - name: ").append(c).append("\n    token: ").append(c).append("-token")
                    .append("\n    adminPort: ").append(admin)
                    .append("\n    brokerPorts: [").append(NodeProcesses.freePort()).append(", ").append(NodeProcesses.freePort()).append("]\n");
        }
        y.append("""
                topics:
                  - name: %s
                    initialSegments: 2
                    bucketBudget: 4
                replication:
                  startAt: earliest
                  sendTimeout: 5s
                  retry: { initial: 20ms, max: 500ms, jitter: 0.5 }
                exchange:
                  antiEntropyInterval: 1s
                  retry: { initial: 20ms, max: 500ms, jitter: 0.5 }
                security:
                  adminToken: %s
                storage:
                  deleteConsumed: false
                  pruneSealed: false
                """.formatted(TOPIC, TOKEN));
        nodes.config(y.toString());
    }

    // ---- traffic ----------------------------------------------------------------------------------

    private void produceEverywhere(ExecutorService traffic, int calls) throws Exception {
        List<Future<?>> all = new ArrayList<>();
        for (String c : CLUSTERS) {
            all.add(traffic.submit(() -> produce(c, calls)));
        }
        for (Future<?> f : all) {
            f.get(2, TimeUnit.MINUTES);
        }
    }

    /** {@code calls} produce calls of {@link #PER_CALL} messages {@code origin/counter} each. */
    private void produce(String cluster, int calls) {
        nodes.produce(cluster, cluster, TOPIC, produced.get(cluster), calls, PER_CALL, KEYS);
    }

    // ---- checks -------------------------------------------------------------------------------------

    /** Until every cluster holds the same layout and no replication backlog is left anywhere. */
    private void awaitQuiet() throws Exception {
        long deadline = System.nanoTime() + WAIT.toNanos();
        String last = "";
        while (System.nanoTime() < deadline) {
            List<String> layouts = new ArrayList<>();
            long backlog = 0;
            for (String c : CLUSTERS) {
                JsonNode topic = JSON.readTree(call(c, "GET", "/admin/v2/scalable/status", null).body())
                        .path("topics").path(TOPIC);
                layouts.add(topic.path("layout").toString());
                for (JsonNode remote : topic.path("remotes")) {
                    for (JsonNode b : remote.path("replicationBacklog")) {
                        backlog += b.asLong();
                    }
                }
            }
            last = layouts + " backlog " + backlog;
            if (backlog == 0 && layouts.stream().distinct().count() == 1) {
                return;
            }
            Thread.sleep(100);
        }
        throw new AssertionError("not quiet within " + WAIT + ": " + last);
    }

    private MemorySegments image(String cluster) throws IOException, InterruptedException {
        return nodes.image(cluster, cluster, TOPIC);
    }

    private HttpResponse<String> call(String cluster, String method, String path, String body) {
        return nodes.call(cluster, method, path, body);
    }

    private String log(String cluster) {
        return nodes.log(cluster);
    }

    private void start(String cluster) throws IOException {
        nodes.start(cluster);
    }

    private void awaitLine(String cluster, String line, int times) throws InterruptedException {
        nodes.awaitLine(cluster, line, times);
    }

    private static String enc(String s) {
        return NodeProcesses.enc(s);
    }
}
