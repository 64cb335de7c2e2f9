package io.verbatim.runtime.broker;

import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * What a cluster's brokers' process tells its controller leader every report interval, when the controller
 * replicas run as processes of their own (PIP-483's load report, with what garbage collection needs): per
 * topic the load per segment since the last report, the consumers of its largest subscription, and the
 * sealed segments nothing needs any more — only the topics where something changed since the last report,
 * every topic after a failed report or a change of leader, in bodies of at most
 * {@link #TOPICS_PER_BODY} topics. The answer carries the exchange's verdict on each peer, which
 * gates the brokers' replicators (R-C11). JSON on {@code POST /controller/report}, the broker role.
 *
 * <p>A cluster of many broker processes also reports, per member, the segments a move asked it to give up and
 * that it stopped ({@code released}) and whether it is leaving (SIGTERM: draining); the answer then says whether
 * the member's lease was renewed and the ownership epoch the leader had applied (the member acts only once its
 * own replica applied as far).
 *
 * @param topics by topic name
 * @param released segments the reporting member stopped at the leader's request, with the epoch of the move
 * @param leaving whether the reporting member is draining to stop
 */
public record BrokerReport(@JsonProperty("topics") Map<String, Topic> topics,
        @JsonProperty("released") List<Released> released, @JsonProperty("leaving") boolean leaving) {
    public static final String PATH = "/controller/report";

    public BrokerReport {
        topics = Map.copyOf(topics);
        released = released == null ? List.of() : List.copyOf(released);
    }

    /** Only topics: a cluster of one broker process. */
    public BrokerReport(Map<String, Topic> topics) {
        this(topics, List.of(), false);
    }

    /** The same topics with a member's releases and whether it leaves. */
    public BrokerReport withMember(List<Released> value, boolean isLeaving) {
        return new BrokerReport(topics, value, isLeaving);
    }

    /** A segment given up, at the epoch of the move that asked for it. */
    public record Released(@JsonProperty("topic") String topic, @JsonProperty("segment") long segment,
            @JsonProperty("epoch") long epoch) {
        public Released {
            if (topic == null || topic.isEmpty() || segment < 0 || epoch < 0) {
                throw new IllegalArgumentException("a released segment names its topic, a segment id and an epoch, none "
                        + "negative");
            }
        }
    }

    /**
     * @param load per segment id, {@code [msgIn, bytesIn, msgOut, bytesOut]} since the previous report
     * @param consumers how many consumers the topic's largest open subscription has
     * @param prunable sealed segments every cursor has drained (garbage collection may delete them)
     */
    public record Topic(@JsonProperty("load") Map<Long, long[]> load, @JsonProperty("consumers") int consumers,
            @JsonProperty("prunable") List<Long> prunable) {
        public Topic {
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

    /**
     * @param verdicts per peer, whether it takes part in the exchange (absent: no answer from it yet)
     * @param leader the replica that took the report
     * @param term its term: a report to a leader of another term than the previous one is followed by a whole one
     * @param lease whether the reporting member's lease was renewed (many broker processes only)
     * @param epoch the ownership epoch the leader had applied when it answered
     */
    public record Answer(@JsonProperty("verdicts") Map<String, Boolean> verdicts, @JsonProperty("leader") String leader,
            @JsonProperty("term") long term, @JsonProperty("lease") boolean lease, @JsonProperty("epoch") long epoch) {
        public Answer {
            verdicts = Map.copyOf(verdicts);
        }

        /** Without a lease: a cluster of one broker process. */
        public Answer(Map<String, Boolean> verdicts, String leader, long term) {
            this(verdicts, leader, term, false, 0);
        }
    }

    /** At most this many topics in one report body: a fleet of many topics reports in several. */
    static final int TOPICS_PER_BODY = 200;

    /** This report in bodies of at most {@link #TOPICS_PER_BODY} topics (one body, possibly empty, at least). */
    public List<BrokerReport> chunks() {
        List<BrokerReport> out = new ArrayList<>();
        Map<String, Topic> chunk = new LinkedHashMap<>();
        for (Map.Entry<String, Topic> e : new TreeMap<>(topics).entrySet()) {
            chunk.put(e.getKey(), e.getValue());
            if (chunk.size() == TOPICS_PER_BODY) {
                out.add(new BrokerReport(chunk, released, leaving));
                chunk = new LinkedHashMap<>();
            }
        }
        if (!chunk.isEmpty() || out.isEmpty()) {
            out.add(new BrokerReport(chunk, released, leaving));
        }
        return out;
    }
}
