package io.verbatim.exchange;

import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import com.fasterxml.jackson.annotation.JsonValue;
import java.time.Duration;
import java.util.Optional;

/**
 * The exchange with one peer, for the status: the R-C11 verdict, how long ago the peer was last heard
 * and why the last call to it failed. In JSON {@code lastHeardMillisAgo} is {@code -1} for a peer never
 * heard and {@code lastFailure} is empty when the last call succeeded.
 *
 * @param lastHeard how long before the status was made the peer last answered or called; empty if never
 * @param lastFailure why the last call to the peer failed; empty when it succeeded or none was made
 */
@JsonPropertyOrder({"exchange", "lastHeardMillisAgo", "lastFailure"})
public record PeerStatus(Verdict exchange, @JsonIgnore Optional<Duration> lastHeard,
        @JsonIgnore Optional<String> lastFailure) {

    /** The R-C11 verdict on a peer, as the status names it. */
    public enum Verdict {
        /** It took part in the exchange (the replicators may write to it). */
        ANSWERED("answered"),
        /** It answers that it has no exchange endpoint (404, 501): probed again, never written to. */
        UNSUPPORTED("unsupported"),
        /** No call to it has been answered, either way, since the controller started. */
        NO_ANSWER_YET("no answer yet");

        private final String text;

        Verdict(String text) {
            this.text = text;
        }

        /** {@code answered}, {@code unsupported} or {@code no answer yet}: the status JSON's value. */
        @JsonValue
        @Override
        public String toString() {
            return text;
        }
    }

    @JsonProperty("lastHeardMillisAgo")
    long lastHeardMillisAgo() {
        return lastHeard.map(Duration::toMillis).orElse(-1L);
    }

    @JsonProperty("lastFailure")
    String lastFailureOrEmpty() {
        return lastFailure.orElse("");
    }
}
