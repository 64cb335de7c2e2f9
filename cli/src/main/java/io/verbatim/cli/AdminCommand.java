package io.verbatim.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import org.jspecify.annotations.Nullable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code verbatim admin}: the manual layout operations, cold marks, deduplication marks and listener delegation
 * on a running node, with the admin token.
 */
@Command(name = "admin", mixinStandardHelpOptions = true,
        description = "Operations on a running node (the admin token from --token or "
                + "VERBATIM_ADMIN_TOKEN; --ca FILE for a node serving TLS; a redirect to the controller leader is "
                + "followed only to the URL's own origin, or with --config FILE to the admin URLs of the URL's "
                + "cluster and its controller replicas; anywhere else it is not followed and the token not sent; an "
                + "answer other than 2xx exits 2): split URL TOPIC SEGMENT | rebucket URL TOPIC SEGMENT N (a lower N is a "
                + "cold mark) | merge URL TOPIC FIRST SECOND (a cold mark: merged once every cluster agrees) | "
                + "coldmarks URL TOPIC (the marks by source) | unmark URL TOPIC BOUNDARY|RANGE (withdraws an "
                + "operator's mark, e.g. 8000 or c000-ffff) | dedup URL TOPIC (the deduplication marks of the "
                + "embedded storage) | dedup-reset URL TOPIC SEGMENT PRODUCER (removes one) | delegations URL (who "
                + "feeds each listener of the "
                + "metadata log) | delegate URL LISTENER=FOLLOWER... (the whole new assignment; 'none' clears it) | "
                + "members URL (the cluster's broker members) | add-member URL ID RAFT_ADDRESS ADMIN_URL INGEST_URL "
                + "VERIFYING_KEY (a broker member the file does not name, its key from `verbatim key public`).")
final class AdminCommand implements Callable<Integer> {
    @Spec
    CommandLine.Model.CommandSpec spec;

    @Parameters(index = "0", paramLabel = "OPERATION",
            description = "split, rebucket, merge, coldmarks, unmark, dedup, dedup-reset, delegations, delegate, "
                    + "members or add-member")
    String operation;

    @Parameters(index = "1", paramLabel = "URL", description = "the node's admin URL")
    String url;

    @Parameters(index = "2..*", paramLabel = "ARG",
            description = "the topic, then segment id(s) and the bucket count of a rebucket; or LISTENER=FOLLOWER")
    List<String> args = new ArrayList<>();

    @Option(names = "--token", description = "the admin token (default: $VERBATIM_ADMIN_TOKEN)")
    @Nullable String token;

    @Option(names = "--ca", paramLabel = "FILE", description = "the CA certificates (PEM) an https node is checked by")
    @Nullable Path ca;

    @Option(names = "--config", paramLabel = "FILE", description = "the nodes' configuration: a redirect is followed "
            + "to the admin URL of the cluster URL belongs to and to its controller replicas' (the token goes there "
            + "too)")
    @Nullable Path config;

    @Override
    public Integer call() throws Exception {
        Optional<Redirects> redirects = Redirects.of(spec, "admin", url, config);
        if (redirects.isEmpty()) {
            return Verbatim.BAD_INPUT;
        }
        this.redirects = redirects.get();
        if (operation.equals("delegations") || operation.equals("delegate")) {
            return delegation();
        }
        if (operation.equals("members") || operation.equals("add-member")) {
            return members();
        }
        if (args.isEmpty()) {
            throw new CommandLine.ParameterException(spec.commandLine(), operation + " needs a TOPIC after the URL");
        }
        String topic = args.get(0);
        List<String> rest = args.subList(1, args.size());
        String query = switch (operation) {
            case "split" -> rest.size() == 1 ? "segment=" + rest.get(0) : null;
            case "rebucket" -> rest.size() == 2 ? "segment=" + rest.get(0) + "&bucketCount=" + rest.get(1) : null;
            case "merge" -> rest.size() == 2 ? "first=" + rest.get(0) + "&second=" + rest.get(1) : null;
            case "coldmarks", "dedup" -> rest.isEmpty() ? "" : null;
            case "dedup-reset" -> rest.size() == 2 ? "segment=" + rest.get(0) + "&producer="
                    + URLEncoder.encode(rest.get(1), StandardCharsets.UTF_8) : null;
            case "unmark" -> rest.size() == 1 ? (rest.get(0).contains("-") ? "range=" : "boundary=") + rest.get(0)
                    : null;
            default -> throw new CommandLine.ParameterException(spec.commandLine(), "operation '" + operation
                    + "' is not one of split, rebucket, merge, coldmarks, unmark, dedup, dedup-reset, delegations, "
                    + "delegate, members, add-member");
        };
        if (query == null) {
            throw new CommandLine.ParameterException(spec.commandLine(), operation + " takes "
                    + switch (operation) {
                        case "split" -> "SEGMENT";
                        case "merge" -> "FIRST SECOND";
                        case "coldmarks", "dedup" -> "nothing";
                        case "dedup-reset" -> "SEGMENT PRODUCER";
                        case "unmark" -> "BOUNDARY or RANGE";
                        default -> "SEGMENT N";
                    } + " after the topic, not " + rest);
        }
        Optional<String> bearer = bearer();
        if (bearer.isEmpty()) {
            return Verbatim.BAD_INPUT;
        }
        String path = switch (operation) {
            case "unmark" -> "coldmarks";
            case "dedup-reset" -> "dedup";
            default -> operation;
        };
        String target = url.replaceAll("/+$", "") + "/admin/v2/scalable/" + path + "?topic="
                + URLEncoder.encode(topic, StandardCharsets.UTF_8) + (query.isEmpty() ? "" : "&" + query);
        HttpRequest.Builder call = HttpRequest.newBuilder(URI.create(target))
                .header("Authorization", "Bearer " + bearer.get());
        call = switch (operation) {
            case "coldmarks", "dedup" -> call.GET();
            case "unmark", "dedup-reset" -> call.DELETE();
            default -> call.POST(HttpRequest.BodyPublishers.noBody());
        };
        return answer(call);
    }

    /** The metadata log's listener delegation: read it, or put the admin's whole new assignment. */
    private int delegation() throws Exception {
        Optional<String> bearer = bearer();
        if (bearer.isEmpty()) {
            return Verbatim.BAD_INPUT;
        }
        HttpRequest.Builder call = HttpRequest.newBuilder(URI.create(url.replaceAll("/+$", "")
                + "/admin/v2/metadata/delegations")).header("Authorization", "Bearer " + bearer.get());
        if (operation.equals("delegations")) {
            if (!args.isEmpty()) {
                throw new CommandLine.ParameterException(spec.commandLine(), "delegations takes nothing after the "
                        + "URL, not " + args);
            }
            return answer(call.GET());
        }
        Map<String, String> assignment = new LinkedHashMap<>();
        boolean none = args.size() == 1 && args.get(0).equals("none");
        for (String a : none ? List.<String>of() : args) {
            String[] kv = a.split("=", -1);
            if (kv.length != 2 || kv[0].isBlank() || kv[1].isBlank()) {
                throw new CommandLine.ParameterException(spec.commandLine(), "'" + a + "' is not LISTENER=FOLLOWER "
                        + "(e.g. b0=c2; 'none' clears the assignment)");
            }
            if (assignment.put(kv[0], kv[1]) != null) {
                throw new CommandLine.ParameterException(spec.commandLine(), "listener " + kv[0] + " is given "
                        + "twice (expected each listener once: the later would silently win)");
            }
        }
        if (assignment.isEmpty() && !none) {
            throw new CommandLine.ParameterException(spec.commandLine(), "delegate takes LISTENER=FOLLOWER... or "
                    + "'none' after the URL");
        }
        String body = new ObjectMapper().writeValueAsString(assignment);
        return answer(call.header("Content-Type", "application/json").PUT(HttpRequest.BodyPublishers.ofString(body)));
    }

    /** The cluster's broker members: list them, or add one the file does not name. */
    private int members() throws Exception {
        List<String> fields = List.of("id", "raftAddress", "adminUrl", "ingestUrl", "verifyingKey");
        boolean add = operation.equals("add-member");
        if (add ? args.size() != fields.size() : !args.isEmpty()) {
            throw new CommandLine.ParameterException(spec.commandLine(), add
                    ? "add-member takes ID RAFT_ADDRESS ADMIN_URL INGEST_URL VERIFYING_KEY after the URL, not " + args
                    : "members takes nothing after the URL, not " + args);
        }
        Optional<String> bearer = bearer();
        if (bearer.isEmpty()) {
            return Verbatim.BAD_INPUT;
        }
        HttpRequest.Builder call = HttpRequest.newBuilder(URI.create(url.replaceAll("/+$", "")
                + "/admin/v2/scalable/members")).header("Authorization", "Bearer " + bearer.get());
        if (!add) {
            return answer(call.GET());
        }
        Map<String, String> member = new LinkedHashMap<>();
        for (int i = 0; i < fields.size(); i++) {
            member.put(fields.get(i), args.get(i));
        }
        String body = new ObjectMapper().writeValueAsString(member);
        return answer(call.header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body)));
    }

    private Optional<String> bearer() {
        String bearer = token != null ? token : System.getenv("VERBATIM_ADMIN_TOKEN");
        if (bearer == null || bearer.isBlank()) {
            spec.commandLine().getErr().println("verbatim admin: no token: pass --token or set VERBATIM_ADMIN_TOKEN");
            return Optional.empty();
        }
        return Optional.of(bearer);
    }

    private Redirects redirects = Redirects.NONE;

    private int answer(HttpRequest.Builder call) {
        Optional<HttpResponse<String>> response = NodeCall.fetch(spec, "admin", call, ca, redirects);
        if (response.isEmpty()) {
            return Verbatim.BAD_INPUT;
        }
        spec.commandLine().getOut().println(response.get().body().trim());
        return 0;
    }
}
