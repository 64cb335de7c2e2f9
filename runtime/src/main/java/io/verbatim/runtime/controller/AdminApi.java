package io.verbatim.runtime.controller;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.verbatim.exchange.ControllerLeader;
import io.verbatim.exchange.Rebucket;
import io.verbatim.metadatalog.server.CommandLostException;
import io.verbatim.metadatalog.server.CommandOutcomeUnknownException;
import io.verbatim.metadatalog.server.NotLeaderException;
import io.verbatim.metadatalog.server.ReadTimeoutException;
import io.verbatim.model.Buckets;
import io.verbatim.model.HashRange;
import io.verbatim.model.Outcome;
import io.verbatim.model.ReplicatedMerge;
import io.verbatim.net.LogText;
import io.verbatim.net.NetServer;
import io.verbatim.net.Query;
import io.verbatim.net.RequestTarget;
import io.verbatim.net.Role;
import io.verbatim.net.Verdict;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.netty.http.server.HttpServerRequest;
import reactor.netty.http.server.HttpServerResponse;
import reactor.netty.http.server.HttpServerRoutes;
import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * The manual layout operations of Pulsar's {@code /admin/v2/scalable} API on a node's admin port, for the
 * admin role ({@code security.adminToken}; a cluster's signature is refused with 403):
 * <ul>
 * <li>{@code POST …/split?topic=T&segment=S};
 * <li>{@code POST …/rebucket?topic=T&segment=S&bucketCount=N} (N a power of two; a higher count applies at
 * once, a lower one is a cold mark, done once every cluster issued it);
 * <li>{@code POST …/merge?topic=T&first=S1&second=S2} (siblings only; a cold mark, merged once every peer
 * agrees);
 * <li>{@code GET …/coldmarks?topic=T} (the marks by source) and {@code DELETE …/coldmarks?topic=T&boundary=HHHH}
 * or {@code &range=SSSS-EEEE} (withdraws an operator's mark).
 * </ul>
 * A split or a raise is the local policy's own change (pushed to every peer at once). Answers are JSON; a
 * refusal names why (400 bad parameters, 401/403 credentials, 404 unknown topic or mark, 409 refused by
 * the layout: sealed segment, caps, a failover's deferral, a layout that kept changing).
 */
public final class AdminApi {
    public static final String PREFIX = "/admin/v2/scalable/";
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Logger LOG = Loggers.getLogger(AdminApi.class);

    private final AdminOperations node;
    private final NetServer net;
    private final Supplier<ControllerLeader> leader;

    /** @param net who may call: the admin token only */
    public AdminApi(AdminOperations node, NetServer net) {
        this(node, net, () -> ControllerLeader.HERE);
    }

    /**
     * @param leader where the cluster's controller leader is: an operation is carried out while it is here,
     *        redirected there (307 to the leader's configured URL, the path normalized, the query as it came) while another replica leads, refused with 503
     *        while none is known
     */
    public AdminApi(AdminOperations node, NetServer net, Supplier<ControllerLeader> leader) {
        this.node = node;
        this.net = net;
        this.leader = leader;
    }

    public void register(HttpServerRoutes routes) {
        routes.post(PREFIX + "split", (req, res) -> handle(req, res, (topic, p) -> node.split(topic,
                        segment(p, "segment")).map(o -> answer(topic, o))))
                .post(PREFIX + "rebucket", (req, res) -> handle(req, res, this::rebucket))
                .post(PREFIX + "merge", (req, res) -> handle(req, res, this::merge))
                .get(PREFIX + "coldmarks", (req, res) -> handle(req, res, (topic, p) -> Mono.just(
                        new Answer(200, node.coldMarks(topic)))))
                .delete(PREFIX + "coldmarks", (req, res) -> handle(req, res, this::withdraw));
    }

    /** What an operation does once the call is authorized and its topic known. */
    private interface Operation {
        Mono<Answer> run(String topic, Map<String, String> params);
    }

    /** @param body a map or a record, serialized as the answer's JSON */
    record Answer(int status, Object body) {
    }

    private Mono<Answer> rebucket(String topic, Map<String, String> params) {
        long id = segment(params, "segment");
        int n = number(params, "bucketCount");
        if (!Buckets.isValidCount(n)) {
            return Mono.just(refusal(400, "bucketCount " + n + " is not a power of two within 1.." + Buckets.MAX_COUNT));
        }
        return node.rebucket(topic, id, n).map(r -> {
            if (r instanceof Rebucket.Now now) {
                return answer(topic, now.outcome());
            }
            Rebucket.MarkedCold cold = (Rebucket.MarkedCold) r;
            Map<String, Object> body = new LinkedHashMap<>();
            body.put("outcome", "marked-cold");
            body.put("range", cold.range().toHexString());
            body.put("bucketCount", cold.bucketCount());
            body.put("note", "lowered on every cluster once each issued it or holds no more there");
            return new Answer(202, body);
        });
    }

    private Mono<Answer> merge(String topic, Map<String, String> params) {
        return node.merge(topic, segment(params, "first"), segment(params, "second")).map(merge -> {
            if (merge instanceof ReplicatedMerge.Refused refused) {
                return refusal(409, refused.why());
            }
            Map<String, Object> body = new LinkedHashMap<>();
            body.put("outcome", "marked-cold");
            body.put("boundary", String.format("%04x", ((ReplicatedMerge.Eligible) merge).boundary()));
            body.put("note", "merged on every cluster once each marks it cold or no longer has it");
            return new Answer(202, body);
        });
    }

    private Mono<Answer> withdraw(String topic, Map<String, String> params) {
        Map<String, Object> body = new LinkedHashMap<>();
        if (params.containsKey("boundary")) {
            int boundary = hex(params, "boundary");
            body.put("boundary", String.format("%04x", boundary));
            return Mono.just(node.unmarkCold(topic, boundary) ? withdrawn(body)
                    : refusal(404, "no operator's cold mark on boundary " + String.format("%04x", boundary)));
        }
        String range = params.get("range");
        if (range == null) {
            throw new IllegalArgumentException("a withdrawal names a boundary=HHHH or a range=SSSS-EEEE");
        }
        HashRange r = HashRange.fromHexString(range);
        body.put("range", r.toHexString());
        return Mono.just(node.unmarkBuckets(topic, r) ? withdrawn(body)
                : refusal(404, "no operator's lowering of range " + r.toHexString()));
    }

    private static Answer withdrawn(Map<String, Object> body) {
        body.put("outcome", "withdrawn");
        return new Answer(200, body);
    }

    private static Answer answer(String topic, Outcome outcome) {
        if (outcome instanceof Outcome.Applied applied) {
            Map<String, Object> body = new LinkedHashMap<>();
            body.put("outcome", "applied");
            body.put("topic", topic);
            body.put("epoch", applied.layout().epoch());
            body.put("created", applied.createdIds());
            return new Answer(200, body);
        }
        Outcome.Refused refused = (Outcome.Refused) outcome;
        Map<String, Object> body = refused(refused.message());
        body.put("reason", refused.reason().name());
        return new Answer(409, body);
    }

    /** A refusal: {@code {"outcome":"refused","error":why}} with its status. */
    static Answer refusal(int status, String why) {
        return new Answer(status, refused(why));
    }

    private static Map<String, Object> refused(String why) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("outcome", "refused");
        body.put("error", why);
        return body;
    }

    /**
     * The answer to a call that is not for here: refused ({@code role} lacking, for {@code what}), redirected to the
     * leader (307), or 503 with no {@code leaderName} known now; {@code null} when this process leads and answers it.
     */
    static @Nullable Mono<Void> notHere(HttpServerRequest request, HttpServerResponse response, NetServer net,
            Role role, String what, ControllerLeader where, String leaderName) {
        if (net.check(request, role, what) instanceof Verdict.Refused r) {
            return send(response, refusal(r.status(), r.reason()));
        }
        if (where instanceof ControllerLeader.At at) {
            return response.status(HttpResponseStatus.TEMPORARY_REDIRECT)
                    .header(HttpHeaderNames.LOCATION, RequestTarget.location(at.baseUrl(), request.uri())).send();
        }
        if (where instanceof ControllerLeader.Unknown unknown) {
            return send(response, refusal(503, "no " + leaderName + " now (" + unknown.why() + "); try again"));
        }
        return null;
    }

    private Mono<Void> handle(HttpServerRequest request, HttpServerResponse response, Operation op) {
        Mono<Void> elsewhere = notHere(request, response, net, Role.ADMIN, "layout operations", leader.get(),
                "controller leader");
        if (elsewhere != null) {
            return elsewhere;
        }
        Map<String, String> params;
        try {
            params = Query.parse(request.uri());
        } catch (Query.BadParameter e) {
            return send(response, refusal(400, String.valueOf(e.getMessage())));
        }
        String topic = params.get("topic");
        if (topic == null || !node.topics().contains(topic)) {
            return send(response, refusal(404, "cluster " + node.cluster() + " has no topic '" + topic + "'"));
        }
        Mono<Answer> answer;
        try {
            answer = op.run(topic, params);
        } catch (IllegalArgumentException e) {
            answer = Mono.just(refusal(400, String.valueOf(e.getMessage())));
        }
        return answer.onErrorResume(IllegalArgumentException.class,
                        e -> Mono.just(refusal(400, String.valueOf(e.getMessage()))))
                .onErrorResume(e -> Mono.just(unavailable(e)))
                .flatMap(a -> send(response, a));
    }

    /**
     * What the metadata log could not do now, said as such: no longer the leader, or a leader change that lost
     * the change (503, try again), or a commit whose outcome is unknown (503: read the layout before trying
     * again); anything else is a 500 naming the error.
     */
    private static Answer unavailable(Throwable e) {
        String why = e.getMessage() == null ? e.toString() : e.getMessage();
        if (e instanceof NotLeaderException
                || e instanceof CommandLostException
                || e instanceof ReadTimeoutException) {
            return refusal(503, "the metadata log could not take the change now (" + why + "); try again");
        }
        if (e instanceof CommandOutcomeUnknownException) {
            return refusal(503, "the change may or may not have been committed (" + why + "); read the layout before "
                    + "trying again");
        }
        LOG.warn("an admin operation failed: {}", LogText.escape(e.toString()));
        return refusal(500, "the operation failed: " + why);
    }

    private static long segment(Map<String, String> params, String name) {
        String v = params.get(name);
        if (v == null || !v.matches("\\d{1,18}")) {
            throw new IllegalArgumentException(name + " '" + v + "' is not a segment id");
        }
        return Long.parseLong(v);
    }

    private static int number(Map<String, String> params, String name) {
        String v = params.get(name);
        if (v == null || !v.matches("\\d{1,9}")) {
            throw new IllegalArgumentException(name + " '" + v + "' is not a positive whole number");
        }
        return Integer.parseInt(v);
    }

    private static int hex(Map<String, String> params, String name) {
        String v = params.get(name);
        if (v == null || !v.matches("[0-9a-fA-F]{1,4}")) {
            throw new IllegalArgumentException(name + " '" + v + "' is not a hash of the ring (hex 0000..ffff)");
        }
        return Integer.parseInt(v, 16);
    }

    /** Answers {@code a} as JSON. */
    static Mono<Void> send(HttpServerResponse response, Answer a) {
        String body;
        try {
            body = JSON.writeValueAsString(a.body());
        } catch (JsonProcessingException e) {
            return Mono.error(e);
        }
        return response.status(HttpResponseStatus.valueOf(a.status()))
                .header(HttpHeaderNames.CONTENT_TYPE, "application/json")
                .sendString(Mono.just(body + "\n"), StandardCharsets.UTF_8).then();
    }
}
