package io.verbatim.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.verbatim.config.VerbatimConfig;
import io.verbatim.model.Compression;
import io.verbatim.model.entry.Message;
import io.verbatim.runtime.status.NodeStatus;
import io.verbatim.testkit.DeliveryChecks;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeSet;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * The shape of a node's status (field names, nesting, value types, which optional fields are present) as
 * the node's own status, with the replicators, serializes and as its status endpoint serves it (the same:
 * the runtime's route answers before the exchange's controller-only one); and the
 * admin API's cold marks answer byte for byte. (A failing replicator's fields: {@code NodeStatusTest}.)
 */
class StatusJsonTest {
    private static final VerbatimConfig CONFIG = VerbatimConfig.parse("""
            clusters: [{name: a, token: a-token}, {name: b, token: b-token}]
            topics: [{name: t, initialSegments: 2}]
            replication: {startAt: earliest, retry: {initial: 20ms, max: 200ms}}
            exchange: {antiEntropyInterval: 200ms, retry: {initial: 20ms, max: 200ms}}
            security: {adminToken: s-token}
            """);

    private final Scheduler timer = Schedulers.newParallel("test-timer", 2, true);
    private final Scheduler cpu = Schedulers.newBoundedElastic(2, 1000, "test-cpu");
    private ClusterNode a;
    private ClusterNode b;

    @AfterEach
    void stop() {
        if (a != null) {
            a.close();
        }
        if (b != null) {
            b.close();
        }
        timer.dispose();
        cpu.dispose();
    }

    @Test
    void theNodeStatusKeepsItsShape() throws Exception {
        a = new ClusterNode(CONFIG, "a", timer, cpu).start();
        b = new ClusterNode(CONFIG, "b", timer, cpu).start();
        a.connect(Map.of("b", b.address()));
        a.producer("t", Compression.LZ4).sendNow(List.of(Message.of("k", DeliveryChecks.payload("a", 0))));
        Flux.interval(Duration.ofMillis(20)).filter(t -> b.storage("t").contents().values().stream()
                .anyMatch(entries -> !entries.isEmpty())).blockFirst(Duration.ofSeconds(20));
        a.markCold("t", 0x8000).block();

        assertThat(a.status().block().storage()).as("no data directory: memory only, said in the status")
                .isEqualTo(new NodeStatus.Storage("memory", false, ""));
        ObjectMapper json = new ObjectMapper();
        String node = write("node-status.shape", shape(json.valueToTree(a.status().block())));
        String endpoint = write("status-endpoint.shape", shape(json.readTree(get(a.adminUrl()
                + "/admin/v2/scalable/status"))));
        String coldMarks = write("coldmarks.json", get(a.adminUrl() + "/admin/v2/scalable/coldmarks?topic=t"));
        assertThat(node).isEqualTo(expected("node-status.shape"));
        assertThat(endpoint).isEqualTo(expected("status-endpoint.shape")).isEqualTo(node);
        assertThat(coldMarks).isEqualTo(expected("coldmarks.json"));
    }

    /** Writes {@code actual} under target/status-json (to compare, or to take as the new expectation). */
    private static String write(String name, String actual) throws IOException {
        Path written = Path.of("target", "status-json", name);
        Files.createDirectories(written.getParent());
        Files.writeString(written, actual);
        return actual;
    }

    private static String expected(String name) throws IOException {
        try (InputStream in = StatusJsonTest.class.getResourceAsStream("/status/" + name)) {
            assertThat(in).as("test resource /status/%s", name).isNotNull();
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    /**
     * Field names in order, nesting and value types, one field a line; an array shows each distinct
     * shape of its elements. Values are left out (ages, errors and backlog vary from run to run).
     */
    static String shape(JsonNode node) {
        StringBuilder out = new StringBuilder();
        shape(node, "", out);
        return out.toString();
    }

    private static void shape(JsonNode node, String path, StringBuilder out) {
        if (node.isObject()) {
            out.append(path.isEmpty() ? "." : path).append(" object\n");
            for (Iterator<Map.Entry<String, JsonNode>> i = node.fields(); i.hasNext(); ) {
                Map.Entry<String, JsonNode> e = i.next();
                shape(e.getValue(), path + "." + e.getKey(), out);
            }
        } else if (node.isArray()) {
            out.append(path).append(" array").append(node.isEmpty() ? " (empty)" : "").append('\n');
            TreeSet<String> elements = new TreeSet<>();
            node.forEach(e -> {
                StringBuilder one = new StringBuilder();
                shape(e, path + "[]", one);
                elements.add(one.toString());
            });
            elements.forEach(out::append);
        } else {
            out.append(path).append(' ').append(node.getNodeType().name().toLowerCase(Locale.ROOT))
                    .append('\n');
        }
    }

    private static String get(String url) throws Exception {
        HttpResponse<String> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(url))
                .header("Authorization", "Bearer s-token").timeout(Duration.ofSeconds(10)).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        return r.body();
    }
}
