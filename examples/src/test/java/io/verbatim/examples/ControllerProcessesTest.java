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
import java.util.Optional;
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

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5))
            .followRedirects(HttpClient.Redirect.NORMAL).build();
    /** By process name: east/c1 … east/brokers, west. */
    private final Map<String, Process> processes = new LinkedHashMap<>();
    private final Map<String, Integer> adminPorts = new LinkedHashMap<>();
    private final Map<String, AtomicInteger> produced = new LinkedHashMap<>();
    private Path config;

    @AfterEach
    void killLeftovers() {
        processes.values().forEach(Process::destroyForcibly);
    }

    @Test
    void killingTheControllerLeadersProcessLosesNoLayoutAndNoMessage() throws Exception {
        config = writeConfig();
        produced.put("east", new AtomicInteger());
        produced.put("west", new AtomicInteger());
        for (String r : REPLICAS) {
            start("east/" + r);
        }
        start("east/brokers");
        start("west");
        for (String p : List.copyOf(processes.keySet())) {
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
            processes.get(killed).destroyForcibly(); // SIGKILL, mid-traffic
            assertThat(processes.get(killed).waitFor(30, TimeUnit.SECONDS)).isTrue();
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

        Map<String, MemoryCluster> stored = new LinkedHashMap<>();
        stored.put("east", image("east/brokers", "east"));
        stored.put("west", image("west", "west"));
        Map<String, Long> counts = new LinkedHashMap<>();
        produced.forEach((c, n) -> counts.put(c, (long) n.get()));
        List<Check> checks = ReplicationRecorder.of(stored, true).checks(counts);
        assertThat(checks).allSatisfy(c -> assertThat(c.passed()).as(c.name() + ": " + c.detail()).isTrue());
        assertThat(stored.get("west").layout().activeSegments()).hasSize(4); // both splits reached the peer
        assertThat(stored.get("east").layout().activeSegments()).hasSize(4);

        for (Map.Entry<String, Process> p : processes.entrySet()) {
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

    private Path writeConfig() throws IOException {
        int eastAdmin = freePort();
        int westAdmin = freePort();
        adminPorts.put("east/brokers", eastAdmin);
        adminPorts.put("west", westAdmin);
        StringBuilder y = new StringBuilder("clusters:\n");
        y.append("  - name: east\n    token: east-token\n    controllerSecret: east-inner-secret\n    adminPort: ")
                .append(eastAdmin)
                .append("\n    brokerPorts: [").append(freePort()).append(", ").append(freePort()).append("]")
                .append("\n    raftPort: ").append(freePort())
                .append("\n    controllers:\n");
        for (String r : REPLICAS) {
            int admin = freePort();
            adminPorts.put("east/" + r, admin);
            y.append("      - {id: ").append(r).append(", adminPort: ").append(admin).append(", raftPort: ")
                    .append(freePort()).append("}\n");
        }
        y.append("  - name: west\n    token: west-token\n    adminPort: ").append(westAdmin)
                .append("\n    brokerPorts: [").append(freePort()).append("]\n");
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
        Path file = dir.resolve("controllers.yaml");
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

    private void start(String name) throws IOException {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<String> command = new ArrayList<>(List.of(java, "-Xmx256m", "-XX:+UseSerialGC",
                "-cp", System.getProperty("java.class.path"), Verbatim.class.getName(), "node",
                "--config", config.toString(), "--cluster", name.split("/")[0],
                "--data-dir", dir.resolve("data").resolve(name.replace('/', '-')).toString(), "--drain-timeout", "5s"));
        if (name.contains("/")) {
            command.addAll(List.of("--member", name.split("/")[1]));
        }
        ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(logFile(name).toFile()));
        processes.put(name, pb.start());
    }

    private Path logFile(String name) {
        return dir.resolve(name.replace('/', '-') + ".log");
    }

    private String log(String name) {
        try {
            return Files.readString(logFile(name));
        } catch (IOException e) {
            return "(no log: " + e + ")";
        }
    }

    private void awaitLine(String name, String line) throws InterruptedException {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (System.nanoTime() < deadline) {
            if (log(name).contains(line)) {
                return;
            }
            if (!processes.get(name).isAlive()) {
                throw new AssertionError(name + " exited with " + processes.get(name).exitValue() + ":\n" + log(name));
            }
            Thread.sleep(50);
        }
        throw new AssertionError(name + " did not print '" + line + "' within " + WAIT + ":\n" + log(name));
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
        AtomicInteger counter = produced.get(cluster);
        String process = cluster.equals("east") ? "east/brokers" : cluster;
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
            HttpResponse<String> r = call(process, "POST", "/admin/v2/scalable/produce?topic=" + enc(TOPIC), body.toString());
            assertThat(r.statusCode()).as(cluster + " produce: " + r.body()).isEqualTo(200);
            counter.addAndGet(PER_CALL);
        }
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

    private MemoryCluster image(String process, String cluster) throws IOException, InterruptedException {
        HttpResponse<byte[]> r = http.send(request(process, "GET", "/admin/v2/scalable/image?topic=" + enc(TOPIC), null)
                .build(), HttpResponse.BodyHandlers.ofByteArray());
        assertThat(r.statusCode()).isEqualTo(200);
        ClusterImage image = StateFormat.read(new ByteArrayInputStream(r.body()), cluster).get(TOPIC);
        return MemoryCluster.restore(cluster, TOPIC, image, Schedulers.immediate());
    }

    private HttpResponse<String> call(String process, String method, String path, String body) {
        try {
            return http.send(request(process, method, path, body).build(), HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            throw new AssertionError(process + " " + method + " " + path + ": " + e, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    private HttpRequest.Builder request(String process, String method, String path, String body) {
        return HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + adminPorts.get(process) + path))
                .timeout(Duration.ofSeconds(30)).header("Authorization", "Bearer " + TOKEN)
                .header("Content-Type", "application/json")
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
    }

    private static String enc(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8);
    }
}
