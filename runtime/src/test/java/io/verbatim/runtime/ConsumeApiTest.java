package io.verbatim.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.verbatim.config.VerbatimConfig;
import io.verbatim.model.Segment;
import io.verbatim.testkit.NetworkConsumer;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.WebSocket;
import java.net.http.WebSocketHandshakeException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * The consume WebSocket as a client of another language would use it: its refusals before the upgrade, each entry
 * a JSON frame, acknowledged by its messageId; what was not acknowledged comes again on the next connection, and
 * a bad acknowledgement is answered, changing nothing.
 */
class ConsumeApiTest {
    private static final String T = "persistent://public/default/t";
    private static final String TOKEN = "c-token";
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final VerbatimConfig CONFIG = VerbatimConfig.parse("""
            clusters: [{name: a, token: a-token}, {name: b, token: b-token}]
            topics: [{name: %s, initialSegments: 1}]
            exchange: {antiEntropyInterval: 200ms, retry: {initial: 20ms, max: 200ms}}
            security: {adminToken: %s}
            """.formatted(T, TOKEN));

    private final Scheduler timer = Schedulers.newParallel("test-timer", 2, true);
    private final Scheduler cpu = Schedulers.newBoundedElastic(2, 1000, "test-cpu");
    private final HttpClient http = HttpClient.newHttpClient();
    private final List<WebSocket> sockets = new ArrayList<>();
    private ClusterNode a;

    @AfterEach
    void stop() {
        sockets.forEach(WebSocket::abort);
        if (a != null) {
            a.close();
        }
        timer.dispose();
        cpu.dispose();
    }

    private String consume(String query) {
        return a.adminUrl().replaceFirst("^http", "ws") + ConsumeApi.PATH + "?topic="
                + URLEncoder.encode(T, StandardCharsets.UTF_8) + query;
    }

    private HttpResponse<String> get(String uri, String token) throws Exception {
        HttpRequest.Builder r = HttpRequest.newBuilder(URI.create(uri.replaceFirst("^ws", "http")))
                .timeout(Duration.ofSeconds(10)).GET();
        if (token != null) {
            r.header("Authorization", "Bearer " + token);
        }
        return http.send(r.build(), HttpResponse.BodyHandlers.ofString());
    }

    private void produce(int from, int to) throws Exception {
        for (int i = from; i < to; i++) {
            String payload = Base64.getEncoder().encodeToString(("m/" + i).getBytes(StandardCharsets.UTF_8));
            HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(a.adminUrl() + TopicsApi.PRODUCE
                    + "?topic=" + URLEncoder.encode(T, StandardCharsets.UTF_8)))
                    .header("Authorization", "Bearer " + TOKEN)
                    .POST(HttpRequest.BodyPublishers.ofString("{\"messages\":[{\"key\":\"k\",\"payload\":\"" + payload
                            + "\"}]}")).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        }
    }

    /** A connection's frames, one JSON object each. */
    private final class Frames implements WebSocket.Listener {
        final BlockingQueue<JsonNode> frames = new LinkedBlockingQueue<>();
        private final StringBuilder partial = new StringBuilder();

        @Override
        public CompletionStage<?> onText(WebSocket socket, CharSequence data, boolean last) {
            partial.append(data);
            if (last) {
                try {
                    frames.add(JSON.readTree(partial.toString()));
                } catch (java.io.IOException e) {
                    throw new CompletionException(e);
                }
                partial.setLength(0);
            }
            socket.request(1);
            return CompletableFuture.completedFuture(null);
        }

        JsonNode next() throws InterruptedException {
            JsonNode f = frames.poll(10, TimeUnit.SECONDS);
            assertThat(f).as("a frame within 10 s").isNotNull();
            return f;
        }
    }

    private WebSocket connect(String query, Frames frames) {
        WebSocket socket = http.newWebSocketBuilder().header("Authorization", "Bearer " + TOKEN)
                .buildAsync(URI.create(consume(query)), frames).join();
        sockets.add(socket);
        return socket;
    }

    private static String payload(JsonNode frame) {
        return new String(Base64.getDecoder().decode(frame.path("messages").get(0).path("payload").asText()),
                StandardCharsets.UTF_8);
    }

    @Test
    void whatIsRefusedBeforeTheUpgradeIsNamed() throws Exception {
        a = new ClusterNode(CONFIG, "a", timer, cpu).start();
        assertThat(get(consume("&subscription=s"), null).statusCode()).isEqualTo(401);
        assertThat(get(consume("&subscription=s"), "wrong").statusCode()).isEqualTo(403);
        HttpResponse<String> r = get(consume("&subscription=s&consumer=2&of=2"), TOKEN);
        assertThat(r.statusCode()).isEqualTo(400);
        assertThat(r.body()).contains("consumer: '2' is out of range").contains("[0, 1]");
        r = get(consume("&subscription=s&of=0"), TOKEN);
        assertThat(r.statusCode()).isEqualTo(400);
        assertThat(r.body()).contains("of: '0' is out of range");
        r = get(consume("&subscription=s&receiverQueueSize=x"), TOKEN);
        assertThat(r.statusCode()).isEqualTo(400);
        assertThat(r.body()).contains("receiverQueueSize: 'x'");
        r = get(consume(""), TOKEN);
        assertThat(r.statusCode()).isEqualTo(400);
        assertThat(r.body()).contains("subscription's name");
        r = get(a.adminUrl() + ConsumeApi.PATH + "?topic=nope&subscription=s", TOKEN);
        assertThat(r.statusCode()).isEqualTo(404);
        assertThat(r.body()).contains("no topic 'nope'");
        r = get(consume("&subscription=s"), TOKEN);
        assertThat(r.statusCode()).isEqualTo(426);
        assertThat(r.body()).contains("is a WebSocket endpoint");
    }

    @Test
    void entriesComeAsFramesAndWhatWasNotAcknowledgedComesAgainOnTheNextConnection() throws Exception {
        a = new ClusterNode(CONFIG, "a", timer, cpu).start();
        produce(0, 5);
        Frames first = new Frames();
        WebSocket socket = connect("&subscription=s&consumer=0&of=1", first);
        List<JsonNode> got = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            got.add(first.next());
        }
        assertThat(got.stream().map(ConsumeApiTest::payload)).containsExactly("m/0", "m/1", "m/2", "m/3", "m/4");
        assertThat(got.get(0).path("messages").get(0).path("key").asText()).isEqualTo("k");
        // the same consumer twice, or the subscription with another count of consumers, while it is open here
        for (String query : List.of("&subscription=s&consumer=0&of=1", "&subscription=s&consumer=0&of=2")) {
            assertThatThrownBy(() -> connect(query, new Frames())).cause()
                    .isInstanceOfSatisfying(WebSocketHandshakeException.class,
                            e -> assertThat(e.getResponse().statusCode()).isEqualTo(409));
        }
        for (int i : new int[] {0, 1, 3}) {
            socket.sendText("{\"messageId\":\"" + got.get(i).path("messageId").asText() + "\"}", true).join();
        }
        socket.sendText("not json", true).join();
        assertThat(first.next().path("error").asText()).startsWith("not JSON");
        socket.sendText("{\"messageId\":\"9:9:9\"}", true).join();
        assertThat(first.next().path("error").asText()).contains("'9:9:9' is not one this connection has");
        Segment only = a.layout(T).activeSegments().get(0);
        assertThat(a.topicStorage(T).backlog(only.id(), "s")).as("2 is not acknowledged: 3 waits behind it")
                .isEqualTo(3);
        socket.sendClose(WebSocket.NORMAL_CLOSURE, "bye").join();

        Frames second = new Frames();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        WebSocket again = null;
        while (again == null) { // the first connection's close reaches the process in its own time
            try {
                again = connect("&subscription=s&consumer=0&of=1", second);
            } catch (CompletionException e) {
                assertThat(System.nanoTime()).as("reconnected within 10 s: " + e).isLessThan(deadline);
                Thread.sleep(50);
            }
        }
        List<String> redelivered = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
            JsonNode f = second.next();
            redelivered.add(payload(f));
            again.sendText("{\"messageId\":\"" + f.path("messageId").asText() + "\"}", true).join();
        }
        assertThat(redelivered).as("3 was acknowledged: it waited only for 2").containsExactly("m/2", "m/4");
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (a.topicStorage(T).backlog(only.id(), "s") > 0 && System.nanoTime() < until) {
            Thread.sleep(20);
        }
        assertThat(a.topicStorage(T).backlog(only.id(), "s")).isZero();
        assertThat(second.frames.poll(300, TimeUnit.MILLISECONDS)).as("nothing more").isNull();
    }

    /** The test kit's network consumer on a cluster of one process: it lists no members, so the seed is the one. */
    @Test
    void theTestKitsNetworkConsumerReadsEveryEntryOnceAndAcknowledgesIt() throws Exception {
        a = new ClusterNode(CONFIG, "a", timer, cpu).start();
        produce(0, 20);
        List<String> got = new java.util.concurrent.CopyOnWriteArrayList<>();
        NetworkConsumer c = NetworkConsumer.builder(a.adminUrl(), T, "kit").token(TOKEN)
                .start(r -> got.add(new String(r.messages().get(0).payloadBytes(), StandardCharsets.UTF_8)));
        try {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (got.size() < 20 && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            assertThat(got).containsExactlyElementsOf(java.util.stream.IntStream.range(0, 20).mapToObj(i -> "m/" + i)
                    .toList());
            assertThat(c.connectedTo()).containsExactly(a.adminUrl());
            Segment only = a.layout(T).activeSegments().get(0);
            while (a.topicStorage(T).backlog(only.id(), "kit") > 0 && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            assertThat(a.topicStorage(T).backlog(only.id(), "kit")).isZero();
        } finally {
            c.dispose();
        }
    }
}
