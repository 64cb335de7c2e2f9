package io.verbatim.runtime;

import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import com.fasterxml.jackson.annotation.JsonUnwrapped;
import io.verbatim.exchange.ClusterStatus;
import io.verbatim.pipeline.ReplicatorStatus;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * A node's status: its controller's side of the exchange ({@link ClusterStatus}) and its replicators,
 * how many, their restarts, and each one failing now. In JSON the cluster status's fields come first, with
 * {@code replicators} beside them.
 */
@JsonPropertyOrder({"exchange", "replicators"})
public record NodeStatus(@JsonUnwrapped ClusterStatus exchange, Replicators replicators) {

    /**
     * Every replicator of every topic toward every peer, summed.
     *
     * @param restarts how often their links restarted them after a failure
     * @param failing each one that failed and has not made progress since
     */
    @JsonPropertyOrder({"total", "restarts", "failing"})
    public record Replicators(int total, long restarts, @JsonIgnore List<ReplicatorStatus> failing) {

        public Replicators {
            failing = List.copyOf(failing);
        }

        /** The summary of {@code all}. */
        public static Replicators of(List<ReplicatorStatus> all) {
            return new Replicators(all.size(), all.stream().mapToLong(ReplicatorStatus::restarts).sum(),
                    all.stream().filter(ReplicatorStatus::failing).toList());
        }

        @JsonProperty("failing")
        List<Failing> failingJson() {
            return failing.stream().map(f -> new Failing(f.id(), f.state().name(), f.consecutiveFailures(),
                    f.restarts(), f.lastError().orElse(null))).toList();
        }
    }

    /** A failing replicator as the JSON shows it (no segment: its id names it). */
    record Failing(String id, String state, int consecutiveFailures, long restarts, @Nullable String lastError) {
    }
}
