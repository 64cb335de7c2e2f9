package io.verbatim.examples;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.verbatim.embedded.MemorySegments;
import io.verbatim.testkit.ReplicationChecks.Check;
import io.verbatim.testkit.ReplicationRecorder;
import java.io.IOException;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
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
 * A cluster's three controller replicas as three processes and its brokers as a fourth ({@code verbatim
 * node --member}), beside a second cluster as one node process: traffic on both, a split through the
 * brokers' admin port (redirected to the controller leader), then the leader's process killed (SIGKILL)
 * during traffic. A new leader takes over, the committed layout is all there (a second split builds on the
 * first), replication goes on, and every message arrives on both clusters, by the demo's checks.
 */
class ControllerProcessesTest {
    private static final String TOPIC = "persistent://public/default/orders";
    private static final String TOKEN = "controller-test-admin-token";
    private static final List<String> REPLICAS = List.of("c1", "c2", "c3");
    private static final int KEYS = 200;
    private static final int PER_CALL = 20;
    private static final Duration WAIT = Duration.ofSeconds(120);
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;

    private final Map<String, AtomicInteger> produced = new LinkedHashMap<>();
    private NodeProcesses nodes;

    @BeforeEach
    void nodes() {
        nodes = new NodeProcesses(dir, TOKEN, WAIT, true);
    }

    @AfterEach
    void killLeftovers() {
        nodes.close();
    }

    @Test
    void killingTheControllerLeadersProcessLosesNoLayoutAndNoMessage() throws Exception {
        writeConfig();
        produced.put("east", new AtomicInteger());
        produced.put("west", new AtomicInteger());
        for (String r : REPLICAS) {
            start("east/" + r);
        }
        start("east/brokers");
        start("west");
        for (String p : List.copyOf(nodes.processes().keySet())) {
            awaitLine(p, p + ": ready");
        }
        ExecutorService traffic = Executors.newFixedThreadPool(2);
        String killed;
        String successor;
        try {
            produce("east", 20);
            produce("west", 20);
            // A split on the brokers' admin port: redirected to the controller leader, committed there.
            // (409 DEFERRED until the leader holds west's state, R-E5: awaitOk tries again)
            HttpResponse<String> split = awaitOk("east/brokers", "/admin/v2/scalable/split?topic=" + enc(TOPIC)
                    + "&segment=0");
            assertThat(split.body()).contains("\"outcome\":\"applied\"");
            killed = "east/" + awaitLeader(Optional.empty());

            Future<?> east = traffic.submit(() -> produce("east", 60));
            Future<?> west = traffic.submit(() -> produce("west", 60));
            Thread.sleep(300);
            nodes.process(killed).destroyForcibly(); // SIGKILL, mid-traffic
            assertThat(nodes.process(killed).waitFor(30, TimeUnit.SECONDS)).isTrue();
            successor = "east/" + awaitLeader(Optional.of(killed.substring("east/".length())));
            assertThat(successor).isNotEqualTo(killed);

            // The new leader holds the committed split: segment 0 is sealed, and a split of one of its children
            // (ids 2 and 3 after initial segments 0 and 1) is accepted.
            HttpResponse<String> second = awaitOk("east/brokers", "/admin/v2/scalable/split?topic=" + enc(TOPIC)
                    + "&segment=2");
            // epoch 2: the first split's epoch 1 survived the leader
            assertThat(second.body()).contains("\"outcome\":\"applied\"").contains("\"epoch\":2");
            east.get(3, TimeUnit.MINUTES);
            west.get(3, TimeUnit.MINUTES);
            produce("east", 10);
        } finally {
            traffic.shutdownNow();
        }
        awaitQuiet();

        Map<String, MemorySegments> stored = new LinkedHashMap<>();
        stored.put("east", image("east/brokers", "east"));
        stored.put("west", image("west", "west"));
        Map<String, Long> counts = new LinkedHashMap<>();
        produced.forEach((c, n) -> counts.put(c, (long) n.get()));
        List<Check> checks = ReplicationRecorder.of(stored, true).checks(counts);
        assertThat(checks).allSatisfy(c -> assertThat(c.passed()).as(c.name() + ": " + c.detail()).isTrue());
        assertThat(stored.get("west").layout().activeSegments()).hasSize(4); // both splits reached the peer
        assertThat(stored.get("east").layout().activeSegments()).hasSize(4);

        for (Map.Entry<String, Process> p : nodes.processes().entrySet()) {
            if (p.getKey().equals(killed)) {
                continue;
            }
            p.getValue().destroy();
            assertThat(p.getValue().waitFor(60, TimeUnit.SECONDS)).isTrue();
            assertThat(p.getValue().exitValue()).as(p.getKey() + " exit code; log:\n" + log(p.getKey())).isZero();
            assertThat(log(p.getKey()).lines().filter(l -> l.contains(" ERROR ")).toList()).as(p.getKey() + "'s errors")
                    .isEmpty();
        }
        assertThat(log(successor)).contains("taking over as controller");
    }

    // ---- the processes ----------------------------------------------------------------------------

    private void writeConfig() throws IOException {
        int eastAdmin = NodeProcesses.freePort();
        int westAdmin = NodeProcesses.freePort();
        nodes.adminPort("east/brokers", eastAdmin);
        nodes.adminPort("west", westAdmin);
        StringBuilder y = new StringBuilder("clusters:\n");
        y.append("  - name: east\n    token: east-token\n    brokersSecret: east-brokers-secret\n    adminPort: ")
                .append(eastAdmin)
                .append("\n    brokerPorts: [").append(NodeProcesses.freePort()).append(", ").append(NodeProcesses.freePort()).append("]")
                .append("\n    raftPort: ").append(NodeProcesses.freePort())
                .append("\n    controllers:\n");
        for (String r : REPLICAS) {
            int admin = NodeProcesses.freePort();
            nodes.adminPort("east/" + r, admin);
            y.append("      - {id: ").append(r).append(", adminPort: ").append(admin).append(", raftPort: ")
                    .append(NodeProcesses.freePort()).append(", secret: east-").append(r).append("-secret}\n");
        }
        y.append("  - name: west\n    token: west-token\n    adminPort: ").append(westAdmin)
                .append("\n    brokerPorts: [").append(NodeProcesses.freePort()).append("]\n");
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

    private String log(String name) {
        return nodes.log(name);
    }

    private void start(String name) throws IOException {
        nodes.start(name);
    }

    private void awaitLine(String name, String line) throws InterruptedException {
        nodes.awaitLine(name, line, 1);
    }

    /** The replica that reports itself the leader (other than {@code not}), once one does. */
    private String awaitLeader(Optional<String> not) throws Exception {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (System.nanoTime() < deadline) {
            for (String r : REPLICAS) {
                if (not.map(r::equals).orElse(false)) {
                    continue;
                }
                try {
                    JsonNode me = JSON.readTree(call("east/" + r, "GET", "/admin/v2/scalable/status", null).body())
                            .path("metadataLog").path(0);
                    if (me.path("role").asText().equals("LEADER")) {
                        return r;
                    }
                } catch (AssertionError | IOException e) {
                    // not up, or not answering: the next one
                }
            }
            Thread.sleep(100);
        }
        throw new AssertionError("no controller leader within " + WAIT);
    }

    /** POSTs {@code path} until it answers 200 (503 while a leader takes over). */
    private HttpResponse<String> awaitOk(String name, String path) throws InterruptedException {
        long deadline = System.nanoTime() + WAIT.toNanos();
        HttpResponse<String> last = null;
        while (System.nanoTime() < deadline) {
            last = call(name, "POST", path, null);
            if (last.statusCode() == 200) {
                return last;
            }
            Thread.sleep(100);
        }
        throw new AssertionError(path + " did not answer 200 within " + WAIT + ": " + (last == null ? "" : last.statusCode()
                + " " + last.body()));
    }

    // ---- traffic and checks -----------------------------------------------------------------------------

    private void produce(String cluster, int calls) {
        nodes.produce(cluster.equals("east") ? "east/brokers" : cluster, cluster, TOPIC, produced.get(cluster), calls,
                PER_CALL, KEYS);
    }

    private void awaitQuiet() throws Exception {
        long deadline = System.nanoTime() + WAIT.toNanos();
        String last = "";
        while (System.nanoTime() < deadline) {
            List<String> layouts = new ArrayList<>();
            long backlog = 0;
            boolean answered = true;
            for (String p : List.of("east/brokers", "west")) {
                HttpResponse<String> r = call(p, "GET", "/admin/v2/scalable/status", null);
                if (r.statusCode() != 200) {
                    answered = false;
                    last = p + " status " + r.statusCode() + ": " + r.body();
                    continue;
                }
                JsonNode topic = JSON.readTree(r.body()).path("topics").path(TOPIC);
                layouts.add(topic.path("layout").toString());
                for (JsonNode remote : topic.path("remotes")) {
                    for (JsonNode b : remote.path("replicationBacklog")) {
                        backlog += b.asLong();
                    }
                }
            }
            if (answered) {
                last = layouts + " backlog " + backlog;
                if (backlog == 0 && layouts.stream().distinct().count() == 1) {
                    return;
                }
            }
            Thread.sleep(100);
        }
        throw new AssertionError("not quiet within " + WAIT + ": " + last);
    }

    private MemorySegments image(String process, String cluster) throws IOException, InterruptedException {
        return nodes.image(process, cluster, TOPIC);
    }

    private HttpResponse<String> call(String process, String method, String path, String body) {
        return nodes.call(process, method, path, body);
    }

    private static String enc(String s) {
        return NodeProcesses.enc(s);
    }
}
