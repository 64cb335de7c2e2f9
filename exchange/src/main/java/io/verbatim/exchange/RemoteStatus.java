package io.verbatim.exchange;

import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import com.fasterxml.jackson.annotation.JsonUnwrapped;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import org.jspecify.annotations.Nullable;

/**
 * One topic's exchange with one remote, for the status. In JSON a remote without a state has
 * {@code "state": "no state received"} where one with a state has the {@link Held} fields,
 * {@code acknowledgedEpoch} is {@code -1} until the remote acknowledged one, and {@code refusedOurState}
 * is present only while the remote refuses our state.
 *
 * @param held the remote's latest state of the topic as this cluster holds it; empty if none arrived
 * @param acknowledgedEpoch the epoch of ours the remote last acknowledged
 * @param exchange the R-C11 verdict on the remote
 * @param refusedOurState why the remote refused our state of the topic (unusable there, or unknown)
 * @param replicationBacklog entries not yet replicated to the remote, per segment descriptor
 */
@JsonPropertyOrder({"state", "held", "acknowledgedEpoch", "exchange", "refusedOurState", "replicationBacklog"})
@JsonInclude(JsonInclude.Include.NON_NULL)
public record RemoteStatus(@JsonIgnore Optional<Held> held, @JsonIgnore OptionalLong acknowledgedEpoch,
        PeerStatus.Verdict exchange, @JsonIgnore Optional<String> refusedOurState,
        Map<String, Long> replicationBacklog) {
    /** The JSON's {@code state} of a remote whose state has not arrived. */
    static final String NO_STATE = "no state received";

    public RemoteStatus {
        replicationBacklog = ClusterStatus.ordered(replicationBacklog);
    }

    /**
     * The remote's state as held here, against the local layout (after the boundaries every cluster
     * agreed to merge are taken out of it).
     *
     * @param convergedRanges the remote's cells the local layout refines, e.g. {@code 0000-7fff/N2}
     * @param divergedRanges the remote's cells the local layout does not refine yet: it lags there
     * @param lastStateAge how long before the status was made the remote was last heard
     * @param capMismatch whether the remote's caps differ from this cluster's
     */
    @JsonPropertyOrder({"peerEpoch", "convergedRanges", "divergedRanges", "lastStateAgeMillis", "capMismatch"})
    public record Held(long peerEpoch, List<String> convergedRanges, List<String> divergedRanges,
            @JsonIgnore Duration lastStateAge, boolean capMismatch) {

        public Held {
            convergedRanges = List.copyOf(convergedRanges);
            divergedRanges = List.copyOf(divergedRanges);
        }

        @JsonProperty("lastStateAgeMillis")
        long lastStateAgeMillis() {
            return lastStateAge.toMillis();
        }
    }

    @JsonProperty("state")
    @Nullable String stateWhenNone() {
        return held.isPresent() ? null : NO_STATE;
    }

    @JsonProperty("held")
    @JsonUnwrapped
    @Nullable Held heldOrNone() {
        return held.orElse(null);
    }

    @JsonProperty("acknowledgedEpoch")
    long acknowledgedEpochOrMinusOne() {
        return acknowledgedEpoch.orElse(-1);
    }

    @JsonProperty("refusedOurState")
    @Nullable String refusedOrNone() {
        return refusedOurState.orElse(null);
    }
}
