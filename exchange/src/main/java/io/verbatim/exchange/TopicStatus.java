package io.verbatim.exchange;

import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import com.fasterxml.jackson.databind.annotation.JsonSerialize;
import com.fasterxml.jackson.databind.ser.std.ToStringSerializer;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * One topic on this cluster, for the status: its layout, how long a peer's change has waited to be
 * refined here, its caps and cold marks, its latest changes, and the exchange with each remote. In JSON
 * the convergence lag is {@code convergenceLagMillis}, and cap mismatches and changes are sentences.
 *
 * @param layout the active cells in ring order, e.g. {@code 0000-7fff/N2}
 * @param convergenceLag since a peer state this layout does not refine arrived; zero when converged
 * @param capLimited whether the last fold left part of the join out to stay within the effective caps
 * @param recentChanges oldest first
 * @param remotes by peer name, in name order
 */
@JsonPropertyOrder({"epoch", "layout", "convergenceLagMillis", "capMismatches", "capLimited", "effectiveCaps",
        "coldMarks", "recentChanges", "remotes"})
public record TopicStatus(long epoch, List<String> layout, @JsonIgnore Duration convergenceLag,
        @JsonSerialize(contentUsing = ToStringSerializer.class) List<CapMismatch> capMismatches, boolean capLimited,
        Caps effectiveCaps, MarksBySource coldMarks,
        @JsonSerialize(contentUsing = ToStringSerializer.class) List<LayoutChange> recentChanges,
        Map<String, RemoteStatus> remotes) {

    public TopicStatus {
        layout = List.copyOf(layout);
        capMismatches = List.copyOf(capMismatches);
        recentChanges = List.copyOf(recentChanges);
        remotes = ClusterStatus.ordered(remotes);
    }

    @JsonProperty("convergenceLagMillis")
    long convergenceLagMillis() {
        return convergenceLag.toMillis();
    }
}
