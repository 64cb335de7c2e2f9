package io.verbatim.runtime;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.verbatim.embedded.MemorySegments;
import io.verbatim.model.Compression;
import io.verbatim.model.entry.Message;
import io.verbatim.model.entry.SourcePosition;
import io.verbatim.net.Bodies;
import io.verbatim.net.NetServer;
import io.verbatim.net.Query;
import io.verbatim.net.Role;
import io.verbatim.net.Verdict;
import io.verbatim.pulsar.PulsarStorageException;
import io.verbatim.runtime.controller.AdminApi;
import io.verbatim.runtime.storage.StateFormat;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import reactor.core.publisher.Mono;
import reactor.netty.http.server.HttpServerRequest;
import reactor.netty.http.server.HttpServerResponse;
import reactor.netty.http.server.HttpServerRoutes;

/**
 * A node's topics over HTTP, for applications and operators that do not embed the library:
 * <ul>
 * <li>{@code POST /admin/v2/scalable/produce?topic=T[&compression=LZ4]} with a JSON body
 * {@code {"messages":[{"key":"k","payload":"<base64>"}, …]}} produces the messages as one call of a PIP-486
 * producer (routed by key, batched per bucket, stamped) and answers each entry written;
 * <li>{@code GET /admin/v2/scalable/image?topic=T} answers everything the cluster stores of the topic
 * (layout, entries, cursors, deduplication state) in {@link StateFormat}: what a node keeps across a
 * restart, and what a check of stored data reads;
 * <li>{@code GET /admin/v2/scalable/dedup?topic=T} answers the destination side's deduplication marks (per
 * segment and replicator producer, the highest source position stored), and {@code DELETE
 * /admin/v2/scalable/dedup?topic=T&segment=S&producer=P} removes one (when a mark stands past anything its
 * producer will send, its next entries are stored again).
 * </ul>
 * Each needs the admin role's token. A stopping node refuses new messages (503) rather than lose them.
 */
final class TopicsApi {
    static final String PRODUCE = AdminApi.PREFIX + "produce";
    static final String IMAGE = AdminApi.PREFIX + "image";
    static final String DEDUP = AdminApi.PREFIX + "dedup";
    private static final ObjectMapper JSON = new ObjectMapper();

    private final ClusterNode node;
    private final NetServer net;
    private final int maxBodyBytes;

    /** @param net who may call: the admin token only */
    TopicsApi(ClusterNode node, NetServer net, int maxBodyBytes) {
        this.node = node;
        this.net = net;
        this.maxBodyBytes = maxBodyBytes;
    }

    void register(HttpServerRoutes routes) {
        routes.post(PRODUCE, this::produce).get(IMAGE, this::image).get(DEDUP, this::marks).delete(DEDUP, this::resetMark);
    }

    private Mono<Void> produce(HttpServerRequest request, HttpServerResponse response) {
        return checked(request, response, (topic, params) -> {
            Compression codec;
            try {
                codec = Compression.valueOf(params.getOrDefault("compression", "LZ4").toUpperCase(Locale.ROOT));
            } catch (IllegalArgumentException e) {
                return text(response, 400, "compression '" + params.get("compression")
                        + "' is not one of NONE, LZ4, ZLIB, ZSTD, SNAPPY");
            }
            return Bodies.read(request, maxBodyBytes).flatMap(body -> {
                List<Message> messages;
                try {
                    messages = messages(body);
                } catch (IllegalArgumentException e) {
                    return text(response, 400, String.valueOf(e.getMessage()));
                }
                if (node.stopping()) {
                    return text(response, 503, "cluster " + node.name() + " is stopping: nothing was stored");
                }
                // in memory at once; on Pulsar when the broker answers (never blocking this event loop)
                return node.producer(topic, codec).send(messages).flatMap(written -> {
                    Map<String, Object> answer = new LinkedHashMap<>();
                    answer.put("topic", topic);
                    answer.put("messages", messages.size());
                    answer.put("entries", written.stream().map(SourcePosition::toString).toList());
                    return json(response, 200, answer);
                }).onErrorResume(IllegalStateException.class, e -> text(response, 503, "cluster " + node.name()
                        + " could not store the messages: " + e.getMessage()))
                        .onErrorResume(PulsarStorageException.class, e -> text(response, 503,
                                "cluster " + node.name() + " could not store the messages on its Pulsar: "
                                        + e.getMessage()));
            }).onErrorResume(Bodies.TooLarge.class, e -> Bodies.tooLarge(response, String.valueOf(e.getMessage())));
        });
    }

    private Mono<Void> image(HttpServerRequest request, HttpServerResponse response) {
        return checked(request, response, (topic, params) -> {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            try {
                var memory = node.topicStorage(topic).memory();
                if (memory.isEmpty()) {
                    return text(response, 409, "cluster " + node.name() + " keeps topic '" + topic + "' on Pulsar "
                            + "(storage.type pulsar): its segments are Pulsar topics, read them there");
                }
                StateFormat.write(out, node.name(), Map.of(topic, memory.get().image()), node.nowMs());
            } catch (IOException e) {
                return text(response, 500, String.valueOf(e.getMessage()));
            }
            return response.status(200).header(HttpHeaderNames.CONTENT_TYPE, "application/x-protobuf")
                    .sendByteArray(Mono.just(out.toByteArray())).then();
        });
    }

    private Mono<Void> marks(HttpServerRequest request, HttpServerResponse response) {
        return inMemory(request, response, (topic, memory, params) -> {
            List<Map<String, Object>> marks = new ArrayList<>();
            memory.marks().forEach((key, d) -> d.persisted().ifPresent(p -> {
                String[] k = key.split("/", 2);
                Map<String, Object> m = new LinkedHashMap<>();
                m.put("segment", Long.parseLong(k[0]));
                m.put("producer", k[1]);
                m.put("position", p.toString());
                m.put("session", d.session());
                marks.add(m);
            }));
            Map<String, Object> answer = new LinkedHashMap<>();
            answer.put("topic", topic);
            answer.put("marks", marks);
            return json(response, 200, answer);
        });
    }

    private Mono<Void> resetMark(HttpServerRequest request, HttpServerResponse response) {
        return inMemory(request, response, (topic, memory, params) -> {
            String segment = params.get("segment");
            String producer = params.get("producer");
            if (segment == null || !segment.matches("\\d{1,18}")) {
                return text(response, 400, "segment '" + segment + "' is not a segment id");
            }
            if (producer == null || producer.isEmpty()) {
                return text(response, 400, "a reset needs the producer whose mark it removes (producer=...)");
            }
            return resetDurably(memory, Long.parseLong(segment), producer).flatMap(reset -> {
                if (!reset) {
                    return text(response, 404, "topic '" + topic + "' has no deduplication mark of producer '"
                            + producer + "' on segment " + segment);
                }
                Map<String, Object> answer = new LinkedHashMap<>();
                answer.put("topic", topic);
                answer.put("segment", Long.parseLong(segment));
                answer.put("producer", producer);
                answer.put("reset", true);
                return json(response, 200, answer);
            }).onErrorResume(IllegalStateException.class, e -> text(response, 503, "cluster " + node.name()
                    + " could not keep the reset: " + e.getMessage()));
        });
    }

    /**
     * Removes the mark and answers whether there was one once the journal made the removal durable: a reset
     * answered is one a crash keeps.
     */
    static Mono<Boolean> resetDurably(MemorySegments memory, long segment, String producer) {
        return Mono.fromCallable(() -> memory.resetMark(segment, producer))
                .flatMap(reset -> reset ? memory.durable().thenReturn(true) : Mono.just(false));
    }

    /** What a checked call on a topic kept in memory goes on to do. */
    private interface MemoryCall {
        Mono<Void> run(String topic, MemorySegments memory, Map<String, String> params);
    }

    private Mono<Void> inMemory(HttpServerRequest request, HttpServerResponse response, MemoryCall call) {
        return checked(request, response, (topic, params) -> {
            var memory = node.topicStorage(topic).memory();
            if (memory.isEmpty()) {
                return text(response, 409, "cluster " + node.name() + " keeps topic '" + topic + "' on Pulsar "
                        + "(storage.type pulsar): deduplication is the broker's there (pulsar-admin topics)");
            }
            return call.run(topic, memory.get(), params);
        });
    }

    /** {@code {"messages":[{"key":…,"payload":base64}]}}; anything else is refused naming what is wrong. */
    static List<Message> messages(byte[] body) {
        JsonNode root;
        try {
            root = JSON.readTree(body);
        } catch (JacksonException e) {
            throw new IllegalArgumentException("the body is not JSON: " + e.getOriginalMessage());
        } catch (IOException e) {
            throw new IllegalArgumentException("the body is not JSON: " + e.getMessage());
        }
        JsonNode list = root == null ? null : root.get("messages");
        if (list == null || !list.isArray() || list.isEmpty()) {
            throw new IllegalArgumentException("the body needs \"messages\": a non-empty list of {\"key\", \"payload\"}");
        }
        List<Message> out = new ArrayList<>();
        for (int i = 0; i < list.size(); i++) {
            JsonNode m = list.get(i);
            String where = "messages[" + i + "]";
            if (!m.isObject()) {
                throw new IllegalArgumentException(where + " is not an object");
            }
            for (Iterator<String> it = m.fieldNames(); it.hasNext(); ) {
                String f = it.next();
                if (!f.equals("key") && !f.equals("payload")) {
                    throw new IllegalArgumentException(where + "." + f + " is not a field of a message (key, payload)");
                }
            }
            JsonNode payload = m.get("payload");
            if (payload == null || !payload.isTextual()) {
                throw new IllegalArgumentException(where + ".payload is missing (expected base64 text)");
            }
            byte[] bytes;
            try {
                bytes = Base64.getDecoder().decode(payload.asText());
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(where + ".payload is not base64: " + e.getMessage());
            }
            JsonNode key = m.get("key");
            if (key != null && !key.isNull() && !key.isTextual()) {
                throw new IllegalArgumentException(where + ".key is not text");
            }
            out.add(key == null || key.isNull() ? Message.unkeyed(bytes) : Message.of(key.asText(), bytes));
        }
        return out;
    }

    /** What a checked call goes on to do. */
    private interface Call {
        Mono<Void> run(String topic, Map<String, String> params);
    }

    private Mono<Void> checked(HttpServerRequest request, HttpServerResponse response, Call call) {
        if (net.check(request, Role.ADMIN, "producing, reading a topic's image and its deduplication marks")
                instanceof Verdict.Refused r) {
            return text(response, r.status(), r.reason());
        }
        Map<String, String> params;
        try {
            params = Query.parse(request.uri());
        } catch (Query.BadParameter e) {
            return text(response, 400, String.valueOf(e.getMessage()));
        }
        String topic = params.get("topic");
        if (topic == null || !node.topics().contains(topic)) {
            return text(response, 404, "cluster " + node.name() + " has no topic '" + topic + "'");
        }
        return call.run(topic, params);
    }

    private static Mono<Void> json(HttpServerResponse response, int status, Map<String, Object> body) {
        try {
            return response.status(status).header(HttpHeaderNames.CONTENT_TYPE, "application/json")
                    .sendString(Mono.just(JSON.writeValueAsString(body) + "\n"), StandardCharsets.UTF_8).then();
        } catch (IOException e) {
            return Mono.error(e);
        }
    }

    private static Mono<Void> text(HttpServerResponse response, int status, String message) {
        return response.status(HttpResponseStatus.valueOf(status))
                .header(HttpHeaderNames.CONTENT_TYPE, "text/plain; charset=utf-8")
                .sendString(Mono.just(message + "\n"), StandardCharsets.UTF_8).then();
    }
}
