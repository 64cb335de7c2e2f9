package io.verbatim.examples;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.verbatim.examples.FaultTable.Drain;
import java.io.IOException;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.TimeUnit;

/**
 * Each direction's drain after a heal, from every node's status: the time until the source's replication
 * backlog toward the destination is 0 and both hold the same layout of the topic.
 */
final class DrainWatch {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Duration STATUS_TIMEOUT = Duration.ofSeconds(3);

    private final NodeProcesses nodes;
    private final List<String> clusters;
    private final String topic;

    DrainWatch(NodeProcesses nodes, List<String> clusters, String topic) {
        this.nodes = nodes;
        this.clusters = List.copyOf(clusters);
        this.topic = topic;
    }

    /**
     * One node's status of the topic: its layout, its backlog toward each peer, and its stalled or failing
     * replicators ({@code id state}, for a direction that does not drain).
     */
    private record Status(String layout, Map<String, Long> backlog, List<String> stuck) {
        /** The stuck replicators toward {@code peer}. */
        String stuckToward(String peer) {
            List<String> toward = stuck.stream().filter(r -> r.contains("-->" + peer + " ")).toList();
            return toward.isEmpty() ? "" : "; replicators " + toward;
        }
    }

    private Optional<Status> status(String cluster) {
        try {
            HttpResponse<String> r = nodes.call(cluster, "GET", "/admin/v2/scalable/status", null, STATUS_TIMEOUT);
            if (r.statusCode() != 200) {
                return Optional.empty();
            }
            JsonNode whole = JSON.readTree(r.body());
            List<String> stuck = new ArrayList<>();
            for (String kind : List.of("stalled", "failing")) {
                for (JsonNode one : whole.path("replicators").path(kind)) {
                    stuck.add(one.path("id").asText() + " " + one.path("state").asText() + " (" + kind + ")");
                }
            }
            JsonNode status = whole.path("topics").path(topic);
            Map<String, Long> backlog = new LinkedHashMap<>();
            status.path("remotes").properties().forEach(remote -> {
                long sum = 0;
                for (JsonNode b : remote.getValue().path("replicationBacklog")) {
                    sum += b.asLong();
                }
                backlog.put(remote.getKey(), sum);
            });
            return Optional.of(new Status(status.path("layout").toString(), backlog, stuck));
        } catch (IOException e) {
            return Optional.empty();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Optional.empty();
        }
    }

    /**
     * Polls every node's status until each direction's backlog is 0 and both its ends hold the same layout, or
     * {@code deadlineAfter} has passed since {@code healedAt} ({@link System#nanoTime}).
     */
    List<Drain> await(long healedAt, Duration deadlineAfter) throws InterruptedException {
        Map<String, OptionalLong> drained = new LinkedHashMap<>();
        Map<String, String> last = new LinkedHashMap<>();
        for (String from : clusters) {
            for (String to : clusters) {
                if (!from.equals(to)) {
                    drained.put(from + ">" + to, OptionalLong.empty());
                    last.put(from + ">" + to, "no status yet");
                }
            }
        }
        long deadline = healedAt + deadlineAfter.toNanos();
        while (drained.values().stream().anyMatch(OptionalLong::isEmpty) && System.nanoTime() < deadline) {
            Map<String, Optional<Status>> statuses = new LinkedHashMap<>();
            clusters.forEach(c -> statuses.put(c, status(c)));
            long now = System.nanoTime();
            for (String from : clusters) {
                for (String to : clusters) {
                    String key = from + ">" + to;
                    if (from.equals(to) || drained.get(key).isPresent()) {
                        continue;
                    }
                    Optional<Status> a = statuses.get(from);
                    Optional<Status> b = statuses.get(to);
                    if (a.isEmpty() || b.isEmpty()) {
                        last.put(key, (a.isEmpty() ? from : to) + " does not answer its status");
                        continue;
                    }
                    long backlog = a.get().backlog().getOrDefault(to, -1L);
                    boolean sameLayout = a.get().layout().equals(b.get().layout());
                    if (backlog == 0 && sameLayout) {
                        drained.put(key, OptionalLong.of(TimeUnit.NANOSECONDS.toMillis(now - healedAt)));
                    } else {
                        last.put(key, "backlog " + backlog + (sameLayout ? ", same layout" : ", layouts " + from + " "
                                + a.get().layout() + " and " + to + " " + b.get().layout()) + a.get().stuckToward(to));
                    }
                }
            }
            TimeUnit.MILLISECONDS.sleep(100);
        }
        List<Drain> out = new ArrayList<>();
        drained.forEach((key, millis) -> {
            String[] ends = key.split(">");
            out.add(new Drain(ends[0], ends[1], millis, last.get(key)));
        });
        return out;
    }

    /** Every node's layout as its status describes it (cells and bucket counts). */
    Map<String, String> layouts() {
        Map<String, String> out = new LinkedHashMap<>();
        clusters.forEach(c -> out.put(c, status(c).map(Status::layout).orElse("(no status)")));
        return out;
    }
}
