package io.verbatim.exchange;

import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.jspecify.annotations.Nullable;

/**
 * This cluster's cold marks of every topic ({@link TopicMarks}, made on a topic's first mark: most
 * topics never have any), and the versions that order this cluster's states of one epoch. The versions
 * start from the clock when the controller is made, so a restarted controller's states order after
 * those it sent before.
 */
final class ClusterMarks {
    private final Map<String, TopicMarks> marks = new ConcurrentHashMap<>();
    private final AtomicLong versions;
    /** The marks version a topic without marks reports: the start, or the latest takeover afresh. */
    private volatile long bornVersion;

    /** @param bornVersion the first version, from the clock at the start */
    ClusterMarks(long bornVersion) {
        this.bornVersion = bornVersion;
        this.versions = new AtomicLong(bornVersion);
    }

    /**
     * Drops every mark and raises the versions to at least {@code floor}, above every version an earlier
     * leader offered (a takeover afresh).
     */
    void takeOver(long floor) {
        marks.clear();
        versions.accumulateAndGet(floor, Math::max);
        bornVersion = Math.max(bornVersion, floor);
    }

    /** The topic's marks, made on the first change. */
    TopicMarks of(String topic) {
        return marks.computeIfAbsent(topic, t -> new TopicMarks(versions::incrementAndGet));
    }

    /** The topic's marks, or null while it has none. */
    @Nullable TopicMarks get(String topic) {
        return marks.get(topic);
    }

    boolean has(String topic) {
        return marks.containsKey(topic);
    }

    /** The version of the topic's exchanged marks (this controller's birth value while it has none). */
    long version(String topic) {
        TopicMarks m = marks.get(topic);
        return m == null ? bornVersion : m.version();
    }

    /** The operator's and the policy's marks of the topic. */
    ColdMarks own(String topic) {
        TopicMarks m = marks.get(topic);
        return m == null ? ColdMarks.NONE : m.own();
    }

    /** Everything this cluster offers to coarsen for the topic. */
    ColdMarks exchanged(String topic) {
        TopicMarks m = marks.get(topic);
        return m == null ? ColdMarks.NONE : m.exchanged();
    }

    /** The boundaries the local policy marked cold at its latest evaluation. */
    Set<Integer> policy(String topic) {
        TopicMarks m = marks.get(topic);
        return m == null ? Set.of() : m.policy();
    }

    /** The marks of the topic by source. */
    MarksBySource describe(String topic) {
        TopicMarks m = marks.get(topic);
        return m == null ? MarksBySource.NONE : m.describe();
    }
}
