package io.verbatim.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.PrintWriter;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.Callable;
import org.jspecify.annotations.Nullable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code verbatim status}: a running node's status JSON, read for people. */
@Command(name = "status", mixinStandardHelpOptions = true,
        description = "A running node's status: its replicators (each failing or stalled one named), per topic "
                + "its layout, per remote the converged and diverged ranges, the last state's age and the "
                + "replication backlog.")
final class StatusCommand implements Callable<Integer> {
    @Spec
    CommandLine.Model.CommandSpec spec;

    @Parameters(paramLabel = "URL", description = "the node's admin URL, e.g. http://127.0.0.1:8080")
    String url;

    @Option(names = "--json", description = "print the status JSON as received")
    boolean json;

    @Option(names = "--token", description = "a token, for a node whose status is not open (security.openStatus: false)")
    @Nullable String token;

    @Option(names = "--ca", paramLabel = "FILE", description = "the CA certificates (PEM) an https node is checked by")
    @Nullable Path ca;

    @Override
    public Integer call() throws Exception {
        PrintWriter out = spec.commandLine().getOut();
        String base = url.replaceAll("/+$", "");
        HttpRequest.Builder call = HttpRequest.newBuilder(URI.create(base + "/admin/v2/scalable/status")).GET();
        if (token != null) {
            call.header("Authorization", "Bearer " + token);
        }
        Optional<HttpResponse<String>> answer = NodeCall.fetch(spec, "status", call, ca, Redirects.NONE);
        if (answer.isEmpty()) {
            return Verbatim.BAD_INPUT;
        }
        HttpResponse<String> response = answer.get();
        if (json) {
            out.println(response.body());
            return 0;
        }
        JsonNode status = new ObjectMapper().readTree(response.body());
        out.printf("cluster %s%s%n", status.path("cluster").asText(),
                status.path("deferringOwnChanges").asBoolean() ? " (deferring its own changes)" : "");
        printStorage(out, status.path("storage"));
        printReplicators(out, status.path("replicators"));
        printOwnership(out, status.path("ownership"));
        status.path("topics").fields().forEachRemaining(t -> {
            JsonNode topic = t.getValue();
            out.printf("topic %s  epoch %d  convergence lag %d ms%n  layout %s%n", t.getKey(),
                    topic.path("epoch").asLong(), topic.path("convergenceLagMillis").asLong(),
                    join(topic.path("layout")));
            topic.path("remotes").fields().forEachRemaining(r -> {
                JsonNode remote = r.getValue();
                long backlog = 0;
                for (JsonNode v : remote.path("replicationBacklog")) {
                    backlog += v.asLong();
                }
                out.printf(Locale.ROOT, "  → %-10s diverged [%s]  converged [%s]  last state %s  backlog %d%n",
                        r.getKey(), join(remote.path("divergedRanges")), join(remote.path("convergedRanges")),
                        remote.has("lastStateAgeMillis") ? remote.path("lastStateAgeMillis").asLong() + " ms ago"
                                : remote.path("state").asText(), backlog);
            });
        });
        return 0;
    }

    /**
     * Who owns the segments of a cluster of many broker processes: this process's member, its lease and what it
     * acts on; each member's state, segments and load; each segment being handed over or without an owner.
     */
    private static void printOwnership(PrintWriter out, JsonNode ownership) {
        if (ownership.isMissingNode() || ownership.path("members").isEmpty()) {
            return; // a cluster of one broker process
        }
        String member = ownership.path("member").asText("");
        out.printf(Locale.ROOT, "ownership  epoch %d%s%n", ownership.path("epoch").asLong(), member.isEmpty() ? ""
                : "  %s: lease %.1f s, acting on %s".formatted(member,
                        ownership.path("leaseRemainingMs").asLong() / 1000.0, join(ownership.path("acting"))));
        for (JsonNode m : ownership.path("members")) {
            long bytes = m.path("bytesPerSecond").asLong(-1);
            out.printf(Locale.ROOT, "  %-12s %-8s %d segment(s)%s%n", m.path("id").asText(), m.path("state").asText(),
                    m.path("segments").asInt(), bytes < 0 ? "" : "  %d B/s".formatted(bytes));
        }
        for (JsonNode seg : ownership.path("moving")) {
            out.printf(Locale.ROOT, "  %s %s%s%n", seg.path("segment").asText(), seg.path("phase").asText(),
                    seg.path("phase").asText().equals("RELEASING")
                            ? " " + seg.path("owner").asText() + " -> " + seg.path("to").asText() : "");
        }
    }

    /** Where the node keeps its segments, whether a crash keeps them, and a failed journal, loudly. */
    private static void printStorage(PrintWriter out, JsonNode storage) {
        String type = storage.path("type").asText("none");
        if (type.equals("none")) {
            return; // a controller replica's status, or a node that keeps no segments
        }
        String failure = storage.path("failure").asText("");
        out.printf("storage %s  %s%s%n", type, storage.path("durable").asBoolean()
                ? "durable" : "not durable (a stop loses what it holds)", failure.isEmpty() ? ""
                : "%n  FAILED: %s: nothing is acknowledged until a restart".formatted(failure));
    }

    /** The replicators' summary, then each failing one and each stalled one (backlog, not moving). */
    private static void printReplicators(PrintWriter out, JsonNode replicators) {
        if (replicators.isMissingNode()) {
            return; // a controller replica's status: no replicators there
        }
        out.printf(Locale.ROOT, "replicators %d  restarts %d  failing %d  stalled %d%n",
                replicators.path("total").asLong(), replicators.path("restarts").asLong(),
                replicators.path("failing").size(), replicators.path("stalled").size());
        for (JsonNode f : replicators.path("failing")) {
            out.printf(Locale.ROOT, "  failing %s  %s, %d failure(s) in a row: %s%n", f.path("id").asText(),
                    f.path("state").asText(), f.path("consecutiveFailures").asLong(), f.path("lastError").asText());
        }
        for (JsonNode r : replicators.path("stalled")) {
            out.printf(Locale.ROOT, "  stalled %s  %s for %.1f s, backlog %d%s%n", r.path("id").asText(),
                    r.path("state").asText(), r.path("stalledForMillis").asLong() / 1000.0,
                    r.path("backlog").asLong(), r.path("lastError").isTextual() ? ", last error: "
                            + r.path("lastError").asText() : "");
        }
    }

    private static String join(JsonNode array) {
        List<String> items = new ArrayList<>();
        array.forEach(n -> items.add(n.asText()));
        return String.join(" ", items);
    }
}
