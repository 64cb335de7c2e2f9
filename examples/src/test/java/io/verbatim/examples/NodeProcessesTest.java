package io.verbatim.examples;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.verbatim.pipeline.memory.ClusterImage;
import io.verbatim.pipeline.memory.MemoryCluster;
import io.verbatim.pipeline.memory.ReplicationChecks.Check;
import io.verbatim.pipeline.memory.ReplicationRecorder;
import io.verbatim.runtime.StateFormat;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import reactor.core.scheduler.Schedulers;

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

    @TempDir
    Path dir;

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private final Map<String, Process> processes = new LinkedHashMap<>();
    private final Map<String, Integer> adminPorts = new LinkedHashMap<>();
    private final Map<String, AtomicInteger> produced = new LinkedHashMap<>();
    private Path config;

    @AfterEach
    void killLeftovers() {
        processes.values().forEach(Process::destroyForcibly);
    }

    @Test
    void threeNodeProcessesReplicateThroughASplitAndARestartLosingNothing() throws Exception {
        config = writeConfig();
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
            Process euWest = processes.get("eu-west");
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

        Map<String, MemoryCluster> stored = new LinkedHashMap<>();
        for (String c : CLUSTERS) {
            stored.put(c, image(c));
        }
        Map<String, Long> counts = new LinkedHashMap<>();
        produced.forEach((c, n) -> counts.put(c, (long) n.get()));
        List<Check> checks = ReplicationRecorder.of(stored, true).checks(counts);
        assertThat(checks).allSatisfy(c -> assertThat(c.passed()).as(c.name() + ": " + c.detail()).isTrue());
        assertThat(stored.get("eu-west").layout().activeSegments()).hasSize(3); // the split reached it

        for (String c : CLUSTERS) {
            Process p = processes.get(c);
            p.destroy();
            assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
            assertThat(p.exitValue()).as(c + " exit code; log:\n" + log(c)).isZero();
            // Nothing went wrong that a node had to log as an error (a cut WebSocket, a dropped signal, ...).
            assertThat(log(c).lines().filter(l -> l.contains(" ERROR ")).toList()).as(c + "'s errors").isEmpty();
        }
    }

    // ---- the nodes ------------------------------------------------------------------------------

    private Path writeConfig() throws IOException {
        StringBuilder y = new StringBuilder("clusters:\n");
        for (String c : CLUSTERS) {
            int admin = freePort();
            adminPorts.put(c, admin);
            y.append("  - name: ").append(c).append("\n    token: ").append(c).append("-token")
                    .append("\n    adminPort: ").append(admin)
                    .append("\n    brokerPorts: [").append(freePort()).append(", ").append(freePort()).append("]\n");
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
        Path file = dir.resolve("nodes.yaml");
        Files.writeString(file, y);
        return file;
    }

    /** Every port handed out in this JVM: a port freed again may be handed out twice by the system. */
    private static final java.util.Set<Integer> TAKEN = java.util.concurrent.ConcurrentHashMap.newKeySet();

    private static int freePort() throws IOException {
        while (true) {
            try (ServerSocket s = new ServerSocket(0)) {
                if (TAKEN.add(s.getLocalPort())) {
                    return s.getLocalPort();
                }
            }
        }
    }

    private void start(String cluster) throws IOException {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        ProcessBuilder pb = new ProcessBuilder(java, "-Xmx256m", "-XX:+UseSerialGC",
                "-cp", System.getProperty("java.class.path"), Verbatim.class.getName(), "node",
                "--config", config.toString(), "--cluster", cluster,
                "--data-dir", dir.resolve("data").resolve(cluster).toString(), "--drain-timeout", "5s")
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(logFile(cluster).toFile()));
        processes.put(cluster, pb.start());
    }

    private Path logFile(String cluster) {
        return dir.resolve(cluster + ".log");
    }

    private String log(String cluster) {
        try {
            return Files.readString(logFile(cluster));
        } catch (IOException e) {
            return "(no log: " + e + ")";
        }
    }

    /** Waits until {@code line} appears {@code times} times in the node's log, or its process ends. */
    private void awaitLine(String cluster, String line, int times) throws InterruptedException {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (System.nanoTime() < deadline) {
            String log = log(cluster);
            if (log.split(java.util.regex.Pattern.quote(line), -1).length - 1 >= times) {
                return;
            }
            if (!processes.get(cluster).isAlive()) {
                throw new AssertionError(cluster + " exited with " + processes.get(cluster).exitValue() + ":\n" + log);
            }
            Thread.sleep(50);
        }
        throw new AssertionError(cluster + " did not print '" + line + "' within " + WAIT + ":\n" + log(cluster));
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
        AtomicInteger counter = produced.get(cluster);
        for (int i = 0; i < calls; i++) {
            StringBuilder body = new StringBuilder("{\"messages\":[");
            int first = counter.get();
            for (int m = 0; m < PER_CALL; m++) {
                int n = first + m;
                String payload = Base64.getEncoder().encodeToString((cluster + "/" + n).getBytes(StandardCharsets.UTF_8));
                body.append(m == 0 ? "" : ",").append("{\"key\":\"k").append(n * 7919 % KEYS).append("\",\"payload\":\"")
                        .append(payload).append("\"}");
            }
            body.append("]}");
            HttpResponse<String> r = call(cluster, "POST", "/admin/v2/scalable/produce?topic=" + enc(TOPIC), body.toString());
            assertThat(r.statusCode()).as(cluster + " produce: " + r.body()).isEqualTo(200);
            counter.addAndGet(PER_CALL);
        }
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

    private MemoryCluster image(String cluster) throws IOException, InterruptedException {
        HttpResponse<byte[]> r = http.send(request(cluster, "GET", "/admin/v2/scalable/image?topic=" + enc(TOPIC), null)
                .build(), HttpResponse.BodyHandlers.ofByteArray());
        assertThat(r.statusCode()).isEqualTo(200);
        ClusterImage image = StateFormat.read(new ByteArrayInputStream(r.body()), cluster).get(TOPIC);
        return MemoryCluster.restore(cluster, TOPIC, image, Schedulers.immediate());
    }

    private HttpResponse<String> call(String cluster, String method, String path, String body) {
        try {
            return http.send(request(cluster, method, path, body).build(), HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            throw new AssertionError(cluster + " " + method + " " + path + ": " + e, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    private HttpRequest.Builder request(String cluster, String method, String path, String body) {
        return HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + adminPorts.get(cluster) + path))
                .timeout(Duration.ofSeconds(30)).header("Authorization", "Bearer " + TOKEN)
                .header("Content-Type", "application/json")
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
    }

    private static String enc(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8);
    }
}
