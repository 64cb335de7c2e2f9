package io.verbatim.runtime;

import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.List;
import java.util.Map;

/**
 * What a cluster's brokers' process tells its controller leader every report interval, when the controller
 * replicas run as processes of their own (PIP-483's load report, with what garbage collection needs): per
 * topic the load per segment since the last report, the consumers of its largest subscription, and the
 * sealed segments nothing needs any more. The answer carries the exchange's verdict on each peer, which
 * gates the brokers' replicators (R-C11). JSON on {@code POST /controller/report}, the broker role.
 *
 * @param topics by topic name
 */
record BrokerReport(@JsonProperty("topics") Map<String, Topic> topics) {
    static final String PATH = "/controller/report";

    BrokerReport {
        topics = Map.copyOf(topics);
    }

    /**
     * @param load per segment id, {@code [msgIn, bytesIn, msgOut, bytesOut]} since the previous report
     * @param consumers how many consumers the topic's largest open subscription has
     * @param prunable sealed segments every cursor has drained (garbage collection may delete them)
     */
    record Topic(@JsonProperty("load") Map<Long, long[]> load, @JsonProperty("consumers") int consumers,
            @JsonProperty("prunable") List<Long> prunable) {
        Topic {
            load = Map.copyOf(load);
            prunable = List.copyOf(prunable);
            if (consumers < 0) {
                throw new IllegalArgumentException("consumers is " + consumers + ": must be at least 0");
            }
            for (long[] v : load.values()) {
                if (v == null || v.length != 4) {
                    throw new IllegalArgumentException("a segment's load is [msgIn, bytesIn, msgOut, bytesOut]");
                }
                for (long x : v) {
                    if (x < 0) {
                        throw new IllegalArgumentException("a segment's load is negative: " + x);
                    }
                }
            }
        }
    }

    /** @param verdicts per peer, whether it takes part in the exchange (absent: no answer from it yet) */
    record Answer(@JsonProperty("verdicts") Map<String, Boolean> verdicts) {
        Answer {
            verdicts = Map.copyOf(verdicts);
        }
    }
}
