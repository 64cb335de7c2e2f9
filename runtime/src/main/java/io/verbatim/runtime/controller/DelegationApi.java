package io.verbatim.runtime.controller;

import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.exc.StreamReadException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.verbatim.exchange.ControllerLeader;
import io.verbatim.metadatalog.server.MemberStatus;
import io.verbatim.net.Bodies;
import io.verbatim.net.LogText;
import io.verbatim.net.NetServer;
import io.verbatim.net.Role;
import io.verbatim.runtime.status.NodeStatus;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.netty.http.server.HttpServerRequest;
import reactor.netty.http.server.HttpServerResponse;
import reactor.netty.http.server.HttpServerRoutes;

/**
 * The admin's listener delegation of the cluster's metadata log, on the admin port (the review's decision:
 * the admin assigns, through a configuration change, nothing is chosen automatically):
 * <ul>
 * <li>{@code GET /admin/v2/metadata/delegations} (the status role): the assignment and, per listener, who
 * feeds it now, whether its delegation is revoked and why, how often, and its lag;
 * <li>{@code PUT /admin/v2/metadata/delegations} (the admin role), a JSON object {@code {"b0": "c2", …}}
 * (listener to the voter that feeds it; {@code {}} clears): the whole new assignment, committed in the log
 * as a configuration change (Ratis' {@code setConf}), answered with the view once applied on the leader.
 * </ul>
 * Answered by the replica that leads the log; another redirects there (307) or, with no leader known,
 * answers 503. A bad body or assignment is a 400 naming the entry at fault (a listener given twice too); a
 * change the log cannot take now is a 503.
 */
public final class DelegationApi {
    public static final String PATH = "/admin/v2/metadata/delegations";
    /** An assignment names at most a few hundred listeners: a body past this is refused. */
    public static final int MAX_BODY_BYTES = 64 * 1024;
    /** A listener given twice is refused, not taken at its last value. */
    private static final ObjectMapper JSON = new ObjectMapper().enable(JsonParser.Feature.STRICT_DUPLICATE_DETECTION);

    /** The log as this process runs it. */
    public interface Log {
        /** No member of the log runs here. */
        Log NONE = new Log() {
            @Override
            public Optional<MemberStatus> leading() {
                return Optional.empty();
            }

            @Override
            public Mono<Void> assign(Map<String, String> assignment) {
                return Mono.error(new Delegations.Unavailable("no member of the metadata log leads in this process"));
            }
        };

        /** The status of the member here that leads the log, if one does. */
        Optional<MemberStatus> leading();

        /** Proposes {@code assignment} (listener -> follower) as the log's delegation; completes once applied. */
        Mono<Void> assign(Map<String, String> assignment);
    }

    /**
     * What the endpoint answers.
     *
     * @param leader the member that answered (the log's leader)
     * @param assignment the admin's assignment in the log's configuration
     * @param listeners each listener's feed now
     */
    @JsonPropertyOrder({"leader", "assignment", "listeners"})
    record View(String leader, Map<String, String> assignment, List<NodeStatus.ListenerFeed> listeners) {
        static View of(MemberStatus leader) {
            return new View(leader.memberId(), Delegations.of(leader.group()), Delegations.feeds(leader));
        }
    }

    private final Log log;
    private final NetServer net;
    private final Supplier<ControllerLeader> leader;

    public DelegationApi(Log log, NetServer net, Supplier<ControllerLeader> leader) {
        this.log = log;
        this.net = net;
        this.leader = leader;
    }

    public void register(HttpServerRoutes routes) {
        routes.get(PATH, (req, res) -> handle(req, res, Role.STATUS, "the metadata log's delegations",
                        () -> Mono.just(view())))
                .put(PATH, (req, res) -> handle(req, res, Role.ADMIN, "changing the metadata log's delegations",
                        () -> Bodies.read(req, MAX_BODY_BYTES).map(DelegationApi::assignment)
                                .flatMap(a -> log.assign(a).then(Mono.fromSupplier(this::view)))));
    }

    private Object view() {
        return log.leading().<Object>map(View::of).orElseThrow(() -> new Delegations.Unavailable(
                "this member no longer leads the metadata log"));
    }

    /** The body as an assignment: a JSON object of member ids. */
    static Map<String, String> assignment(byte[] body) {
        JsonNode root;
        try {
            root = JSON.readTree(body);
        } catch (StreamReadException e) {
            if (e.getProcessor() != null && e.getOriginalMessage().startsWith("Duplicate field")) {
                String listener = e.getProcessor().getParsingContext().getCurrentName();
                throw new IllegalArgumentException("listener " + LogText.escape(listener, 64) + " is given twice "
                        + "(expected each listener once: the later would silently win)");
            }
            throw new IllegalArgumentException("the body is not JSON (expected an object of listener to follower, "
                    + "e.g. {\"b0\": \"c2\"}): " + e.getOriginalMessage());
        } catch (JacksonException e) {
            throw new IllegalArgumentException("the body is not JSON (expected an object of listener to follower, "
                    + "e.g. {\"b0\": \"c2\"}): " + e.getOriginalMessage());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        if (root == null || !root.isObject()) {
            throw new IllegalArgumentException("the body is not a JSON object (expected listener to follower, "
                    + "e.g. {\"b0\": \"c2\"}; {} clears the assignment)");
        }
        Map<String, String> out = new LinkedHashMap<>();
        for (Iterator<Map.Entry<String, JsonNode>> it = root.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            if (!e.getValue().isTextual() || e.getValue().asText().isBlank()) {
                throw new IllegalArgumentException("listener " + e.getKey() + ": " + e.getValue()
                        + " is not a member id (expected the voter that feeds it)");
            }
            out.put(e.getKey(), e.getValue().asText());
        }
        return out;
    }

    private Mono<Void> handle(HttpServerRequest request, HttpServerResponse response, Role role, String what,
            Supplier<Mono<Object>> op) {
        Mono<Void> elsewhere = AdminApi.notHere(request, response, net, role, what, leader.get(),
                "metadata log leader");
        if (elsewhere != null) {
            return elsewhere;
        }
        return Mono.defer(op).flatMap(body -> send(response, 200, body))
                .onErrorResume(Bodies.TooLarge.class, e -> Bodies.tooLarge(response, String.valueOf(e.getMessage())))
                .onErrorResume(IllegalArgumentException.class, e -> refuse(response, 400, e.getMessage()))
                .onErrorResume(e -> refuse(response, 503, "the metadata log cannot take the change now ("
                        + (e.getMessage() == null ? e.toString() : e.getMessage()) + "); try again"));
    }

    private static Mono<Void> send(HttpServerResponse response, int status, Object body) {
        return AdminApi.send(response, new AdminApi.Answer(status, body));
    }

    private static Mono<Void> refuse(HttpServerResponse response, int status, @Nullable String why) {
        return AdminApi.send(response, AdminApi.refusal(status, String.valueOf(why)));
    }
}
