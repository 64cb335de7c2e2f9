package io.verbatim.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.verbatim.config.VerbatimConfig;
import io.verbatim.embedded.ClusterImage;
import io.verbatim.pipeline.StoredEntry;
import io.verbatim.runtime.storage.StateFormat;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * A node's produce and image endpoints as an application or an operator calls them, a clean stop, and a
 * port in use named by its key.
 */
class NodeEndpointsTest {
    private static final String T = "persistent://public/default/t";
    private static final String TOKEN = "e-token";
    private static final VerbatimConfig CONFIG = VerbatimConfig.parse("""
            clusters: [{name: a, token: a-token}, {name: b, token: b-token}]
            topics: [{name: %s}]
            exchange: {antiEntropyInterval: 200ms, retry: {initial: 20ms, max: 200ms}, maxBodyBytes: 4KiB}
            security: {adminToken: %s}
            """.formatted(T, TOKEN));

    private final Scheduler timer = Schedulers.newParallel("test-timer", 2, true);
    private final Scheduler cpu = Schedulers.newBoundedElastic(2, 1000, "test-cpu");
    private final HttpClient http = HttpClient.newHttpClient();
    private ClusterNode a;

    @AfterEach
    void stop() {
        if (a != null) {
            a.close();
        }
        timer.dispose();
        cpu.dispose();
    }

    private HttpResponse<String> post(String path, String body, String token) throws Exception {
        HttpRequest.Builder r = HttpRequest.newBuilder(URI.create(a.adminUrl() + path)).timeout(Duration.ofSeconds(10))
                .POST(HttpRequest.BodyPublishers.ofString(body));
        if (token != null) {
            r.header("Authorization", token.startsWith("Verbatim ") ? token : "Bearer " + token);
        }
        return http.send(r.build(), HttpResponse.BodyHandlers.ofString());
    }

    private static String produce(String topic) {
        return TopicsApi.PRODUCE + "?topic=" + URLEncoder.encode(topic, StandardCharsets.UTF_8);
    }

    @Test
    void producedMessagesAreStoredAsOneCallOfAProducer() throws Exception {
        a = new ClusterNode(CONFIG, "a", timer, cpu).start();
        HttpResponse<String> r = post(produce(T), """
                {"messages":[{"key":"k1","payload":"YS8w"},{"key":"k2","payload":"YS8x"},{"payload":"YS8y"}]}""", TOKEN);
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        assertThat(r.body()).contains("\"messages\":3");
        long stored = a.storage(T).contents().values().stream().mapToLong(List::size).sum();
        assertThat(stored).isPositive();
        assertThat(r.body()).contains(a.storage(T).contents().values().stream().flatMap(List::stream)
                .map(StoredEntry::position).findFirst().orElseThrow().toString());
    }

    /** Each bad call, its status and words of what the answer names; none stores anything. */
    @Test
    void badProduceCallsAreRefusedNamingWhatIsWrongAndStoreNothing() throws Exception {
        a = new ClusterNode(CONFIG, "a", timer, cpu).start();
        Map<String, Object[]> calls = new LinkedHashMap<>();
        calls.put("no token", new Object[] {produce(T), "{\"messages\":[{\"payload\":\"YQ==\"}]}", null, 401, "token"});
        calls.put("wrong token", new Object[] {produce(T), "{\"messages\":[{\"payload\":\"YQ==\"}]}", "nope", 403, "not valid"});
        calls.put("a cluster's secret", new Object[] {produce(T), "{\"messages\":[{\"payload\":\"YQ==\"}]}", "b-token", 403,
                "clusters sign their calls"});
        calls.put("a cluster's signature", new Object[] {produce(T), "{\"messages\":[{\"payload\":\"YQ==\"}]}",
                TestNet.signed("b", "a", "POST", "http://a" + produce(T)), 403, "needs the admin token"});
        calls.put("unknown topic", new Object[] {produce("persistent://x/y/z"), "{\"messages\":[{\"payload\":\"YQ==\"}]}", TOKEN, 404, "no topic"});
        calls.put("not json", new Object[] {produce(T), "{messages", TOKEN, 400, "not JSON"});
        calls.put("no messages", new Object[] {produce(T), "{\"messages\":[]}", TOKEN, 400, "non-empty list"});
        calls.put("bad base64", new Object[] {produce(T), "{\"messages\":[{\"payload\":\"***\"}]}", TOKEN, 400, "messages[0].payload is not base64"});
        calls.put("unknown field", new Object[] {produce(T), "{\"messages\":[{\"payload\":\"YQ==\",\"ttl\":3}]}", TOKEN, 400, "messages[0].ttl"});
        calls.put("key not text", new Object[] {produce(T), "{\"messages\":[{\"payload\":\"YQ==\",\"key\":7}]}", TOKEN, 400, "key is not text"});
        calls.put("bad codec", new Object[] {produce(T) + "&compression=GZIP", "{\"messages\":[{\"payload\":\"YQ==\"}]}", TOKEN, 400, "GZIP"});
        calls.put("too large", new Object[] {produce(T), "{\"messages\":[{\"payload\":\"" + "A".repeat(8192) + "\"}]}", TOKEN, 413, "limit of 4096"});
        for (var call : calls.entrySet()) {
            Object[] c = call.getValue();
            HttpResponse<String> r = post((String) c[0], (String) c[1], (String) c[2]);
            assertThat(r.statusCode()).as(call.getKey() + ": " + r.body()).isEqualTo(c[3]);
            assertThat(r.body()).as(call.getKey()).contains((String) c[4]);
        }
        assertThat(a.storage(T).contents().values()).allMatch(List::isEmpty);
    }

    @Test
    void theImageIsWhatTheClusterStores() throws Exception {
        a = new ClusterNode(CONFIG, "a", timer, cpu).start();
        post(produce(T), "{\"messages\":[{\"key\":\"k\",\"payload\":\"YS8w\"}]}", TOKEN);
        HttpResponse<byte[]> r = http.send(HttpRequest.newBuilder(URI.create(a.adminUrl() + TopicsApi.IMAGE + "?topic="
                + URLEncoder.encode(T, StandardCharsets.UTF_8))).header("Authorization", "Bearer " + TOKEN)
                .build(), HttpResponse.BodyHandlers.ofByteArray());
        assertThat(r.statusCode()).isEqualTo(200);
        ClusterImage image = StateFormat.read(new ByteArrayInputStream(r.body()), "a").get(T);
        assertThat(image.layout()).isEqualTo(a.layout(T));
        assertThat(image.segments().stream().mapToInt(s -> s.entries().size()).sum()).isEqualTo(1);
        assertThat(image.segments().get(0).cursors()).containsKey("pulsar.repl.b");
    }

    @Test
    void aStoppingNodeTakesNoMoreMessagesAndHandsBackItsState() throws Exception {
        a = new ClusterNode(CONFIG, "a", timer, cpu).start();
        post(produce(T), "{\"messages\":[{\"key\":\"k\",\"payload\":\"YS8w\"}]}", TOKEN);
        Map<String, ClusterImage> images = a.stop(Duration.ofMillis(200)); // b never answers: the drain times out
        assertThat(images.get(T).segments().stream().mapToInt(s -> s.entries().size()).sum()).isEqualTo(1);
        assertThat(a.stopping()).isTrue();
        int status;
        try {
            status = post(produce(T), "{\"messages\":[{\"payload\":\"YQ==\"}]}", TOKEN).statusCode();
        } catch (IOException closed) {
            status = 0; // the admin port is closed
        }
        assertThat(status).as("refused, or nobody answers").isIn(0, 503);
        assertThat(a.storage(T).contents().values().stream().mapToInt(List::size).sum()).isEqualTo(1);
    }

    @Test
    void aPortInUseIsNamedByItsKey() throws Exception {
        try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
            VerbatimConfig config = VerbatimConfig.parse("""
                    clusters: [{name: a, adminPort: %d, token: a-token}, {name: b, token: b-token}]
                    """.formatted(taken.getLocalPort()));
            assertThatThrownBy(() -> new ClusterNode(config, "a", timer, cpu).start())
                    .hasMessageStartingWith("clusters[0].adminPort: cannot listen on 127.0.0.1:" + taken.getLocalPort())
                    .hasMessageContaining("in use");
        }
    }
}
