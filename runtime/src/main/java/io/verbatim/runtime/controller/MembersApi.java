package io.verbatim.runtime.controller;

import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.verbatim.exchange.ControllerLeader;
import io.verbatim.metadatalog.state.RegisteredMember;
import io.verbatim.net.Bodies;
import io.verbatim.net.LogText;
import io.verbatim.net.NetServer;
import io.verbatim.net.Role;
import io.verbatim.net.VerifyingKey;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.URISyntaxException;
import java.util.Iterator;
import java.util.List;
import java.util.Set;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.netty.http.server.HttpServerRequest;
import reactor.netty.http.server.HttpServerResponse;
import reactor.netty.http.server.HttpServerRoutes;

/**
 * A cluster's broker members, on the admin port (issue 25: a member the file does not name is added at run time
 * by the admin):
 * <ul>
 * <li>{@code GET /admin/v2/scalable/members} (the status role): every member the metadata log knows, named in
 * the file or added here, with its state;
 * <li>{@code POST /admin/v2/scalable/members} (the admin role), a JSON object {@code {"id": "broker-4",
 * "raftAddress": "host:port", "adminUrl": "http://host:port", "ingestUrl": "http://host:port",
 * "verifyingKey": "ed25519:..."}} (the key is what {@code verbatim key public} prints for the member's own
 * secret, never the secret): registered in the metadata log, made a listener of it (fed by the voter the
 * default spread picks) and given segments once its process reports. Its process starts with a file that names
 * it; the running members need no edit. Answered 201 with the member once the listener is in the log's
 * configuration.
 * </ul>
 * Answered by the controller replica that leads the log; another process redirects there (307) or, with no
 * leader known, answers 503. A bad body is a 400 naming the field; an id the cluster uses already (a voter, a
 * member), or a cluster on the embedded storage, which runs one broker process, is a 409.
 */
public final class MembersApi {
    public static final String PATH = AdminApi.PREFIX + "members";
    /** A member's description is a few hundred bytes. */
    public static final int MAX_BODY_BYTES = 16 * 1024;
    private static final ObjectMapper JSON = new ObjectMapper().enable(JsonParser.Feature.STRICT_DUPLICATE_DETECTION);
    private static final Set<String> FIELDS = Set.of("id", "raftAddress", "adminUrl", "ingestUrl", "verifyingKey");

    /** The members as the log holds them, where this process leads it. */
    public interface Members {
        /** Why a cluster on the embedded storage takes no broker member. */
        static String embedded(String cluster) {
            return "cluster " + cluster + " is on the embedded storage, which keeps a cluster's segments in one "
                    + "process's memory and data directory (its journal has one writer), so it runs one broker "
                    + "process; use storage.type: pulsar for more";
        }

        /** No member of the log runs here. */
        Members NONE = new Members() {
            @Override
            public List<Member> list() {
                throw new Delegations.Unavailable("no member of the metadata log leads in this process");
            }

            @Override
            public Mono<Member> add(RegisteredMember member) {
                return Mono.error(new Delegations.Unavailable("no member of the metadata log leads in this process"));
            }
        };

        /** A cluster of one broker process ({@code why} it cannot take another): nothing to list, nothing added. */
        static Members oneProcess(String why) {
            return new Members() {
                @Override
                public List<Member> list() {
                    return List.of();
                }

                @Override
                public Mono<Member> add(RegisteredMember member) {
                    return Mono.error(new Conflict(why));
                }
            };
        }

        List<Member> list();

        /**
         * Registers {@code member} and makes it a listener of the log; completes once both are applied here. Fails
         * with {@link Conflict} for an id in use or a cluster that cannot take another process.
         */
        Mono<Member> add(RegisteredMember member);
    }

    /**
     * One member as the endpoint shows it.
     *
     * @param configured whether the file names it (else the admin added it)
     * @param listener whether it is a listener of the log's configuration now
     */
    @JsonPropertyOrder({"id", "state", "configured", "listener", "raftAddress", "adminUrl", "ingestUrl",
            "verifyingKey"})
    public record Member(String id, String state, boolean configured, boolean listener, String raftAddress,
            String adminUrl, String ingestUrl, String verifyingKey) {
    }

    /** What the cluster cannot take: an id in use, or a second broker process on the embedded storage. */
    public static final class Conflict extends RuntimeException {
        private static final long serialVersionUID = 1L;

        public Conflict(String why) {
            super(why);
        }
    }

    private final Members members;
    private final NetServer net;
    private final Supplier<ControllerLeader> leader;

    public MembersApi(Members members, NetServer net, Supplier<ControllerLeader> leader) {
        this.members = members;
        this.net = net;
        this.leader = leader;
    }

    public void register(HttpServerRoutes routes) {
        routes.get(PATH, (req, res) -> handle(req, res, Role.STATUS, "the broker members",
                        () -> Mono.fromSupplier(members::list).map(l -> new AdminApi.Answer(200, l))))
                .post(PATH, (req, res) -> handle(req, res, Role.ADMIN, "adding a broker member",
                        () -> Bodies.read(req, MAX_BODY_BYTES).map(MembersApi::member).flatMap(members::add)
                                .map(m -> new AdminApi.Answer(201, m))));
    }

    /** The body as a member to add, ACTIVE; a 400 naming the field at fault otherwise. */
    static RegisteredMember member(byte[] body) {
        JsonNode root;
        try {
            root = JSON.readTree(body);
        } catch (JacksonException e) {
            throw new IllegalArgumentException("the body is not JSON (expected an object with " + FIELDS + "): "
                    + e.getOriginalMessage());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        if (root == null || !root.isObject()) {
            throw new IllegalArgumentException("the body is not a JSON object (expected one with " + FIELDS + ")");
        }
        for (Iterator<String> it = root.fieldNames(); it.hasNext(); ) {
            String name = it.next();
            if (!FIELDS.contains(name)) {
                throw new IllegalArgumentException("unknown field '" + LogText.escape(name, 64) + "' (expected "
                        + FIELDS + ")");
            }
        }
        String id = text(root, "id");
        String raft = text(root, "raftAddress");
        checkHostPort(raft);
        String admin = url(root, "adminUrl");
        String ingest = url(root, "ingestUrl");
        String key = text(root, "verifyingKey");
        try {
            key = VerifyingKey.parse(key).form();
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("verifyingKey: " + e.getMessage() + " (expected what `verbatim key "
                    + "public` prints for the member's secret)");
        }
        try {
            return new RegisteredMember(id, RegisteredMember.State.ACTIVE, raft, ingest, admin, key);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("id: " + e.getMessage());
        }
    }

    private static String text(JsonNode root, String field) {
        JsonNode v = root.get(field);
        if (v == null || !v.isTextual() || v.asText().isBlank()) {
            throw new IllegalArgumentException(field + " is " + (v == null ? "missing" : "not a non-empty string: "
                    + LogText.escape(v.toString(), 64)));
        }
        return v.asText();
    }

    private static void checkHostPort(String address) {
        int colon = address.lastIndexOf(':');
        boolean ok = colon > 0 && colon < address.length() - 1;
        String host = ok ? address.substring(0, colon) : "";
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
        }
        ok = ok && !host.isEmpty();
        if (ok) {
            try {
                int port = Integer.parseInt(address.substring(colon + 1));
                ok = port > 0 && port <= 65_535;
            } catch (NumberFormatException e) {
                ok = false;
            }
        }
        if (!ok) {
            throw new IllegalArgumentException("raftAddress '" + LogText.escape(address, 64) + "' is not host:port");
        }
    }

    private static String url(JsonNode root, String field) {
        String value = text(root, field);
        try {
            URI uri = new URI(value);
            if (!("http".equals(uri.getScheme()) || "https".equals(uri.getScheme())) || uri.getHost() == null
                    || uri.getPort() < 1) {
                throw new URISyntaxException(value, "not http(s)://host:port");
            }
        } catch (URISyntaxException e) {
            throw new IllegalArgumentException(field + " '" + LogText.escape(value, 64) + "' is not an http(s)://host:port"
                    + " URL");
        }
        return value;
    }

    private Mono<Void> handle(HttpServerRequest request, HttpServerResponse response, Role role, String what,
            Supplier<Mono<AdminApi.Answer>> op) {
        Mono<Void> elsewhere = AdminApi.notHere(request, response, net, role, what, leader.get(),
                "metadata log leader");
        if (elsewhere != null) {
            return elsewhere;
        }
        return Mono.defer(op).flatMap(answer -> AdminApi.send(response, answer))
                .onErrorResume(Bodies.TooLarge.class, e -> Bodies.tooLarge(response, String.valueOf(e.getMessage())))
                .onErrorResume(Conflict.class, e -> refuse(response, 409, e.getMessage()))
                .onErrorResume(IllegalArgumentException.class, e -> refuse(response, 400, e.getMessage()))
                .onErrorResume(e -> refuse(response, 503, "the metadata log cannot take the change now ("
                        + (e.getMessage() == null ? e.toString() : e.getMessage()) + "); try again"));
    }

    private static Mono<Void> refuse(HttpServerResponse response, int status, @Nullable String why) {
        return AdminApi.send(response, AdminApi.refusal(status, String.valueOf(why)));
    }
}
