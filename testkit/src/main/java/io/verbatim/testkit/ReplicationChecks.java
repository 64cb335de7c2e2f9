package io.verbatim.testkit;

import io.verbatim.embedded.MemorySegments;
import io.verbatim.model.entry.Entries;
import io.verbatim.model.entry.Entry;
import io.verbatim.model.entry.Message;
import io.verbatim.pipeline.ReplicatorStatus;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * What replicated data must satisfy once traffic stopped and replication settled, checked on what every
 * in-memory cluster stores. Each message's payload starts with {@code origin/counter} (anything after a
 * further {@code /} is padding), counters from 0 per origin; and on the replicators' status at the end. The
 * pipeline's tests, the runtime's tests and the demo all judge replication by these checks: on what is
 * stored now here, or as it is stored with a {@link ReplicationRecorder} (storage that deletes what was
 * consumed).
 */
public final class ReplicationChecks {
    private ReplicationChecks() {
    }

    /** One check's outcome; {@code detail} says what failed first, or what was counted. */
    public record Check(String name, boolean passed, String detail) {
    }

    /** One stored message: where it came from, its key, where it is stored, whether it came as a part. */
    public record Stored(String origin, long counter, Optional<String> key, long segmentId, boolean part) {
    }

    /**
     * Every check on every cluster, on what they store now.
     *
     * @param produced messages produced per origin cluster (counters {@code 0..n-1})
     * @param allowSlowPathDuplicates whether a message may be stored twice when one copy came re-batched
     *        (PIP-495's seal window); without, any second copy fails
     */
    public static List<Check> run(Map<String, MemorySegments> clusters, Map<String, Long> produced,
            boolean allowSlowPathDuplicates) {
        return ReplicationRecorder.of(clusters, allowSlowPathDuplicates).checks(produced);
    }

    /** Every message everywhere, at most once (but for the seal window), per origin in order per key. */
    public static List<Check> delivery(Map<String, MemorySegments> clusters, Map<String, Long> produced,
            boolean allowSlowPathDuplicates) {
        return ReplicationRecorder.of(clusters, allowSlowPathDuplicates).delivery(produced);
    }

    /** Every message {@code cluster} stores, in delivery order (segment id, then position). */
    public static List<Stored> stored(MemorySegments cluster) {
        List<Stored> out = new ArrayList<>();
        cluster.contents().forEach((segmentId, entries) -> entries.forEach(e -> {
            Entry entry = Entry.parse(e.bytes());
            boolean part = entry.sourcePosition().map(p -> !p.isWhole()).orElse(false);
            for (Message m : Entries.messages(entry)) {
                String[] id = new String(m.payloadBytes(), StandardCharsets.UTF_8).split("/", 3);
                out.add(new Stored(id[0], Long.parseLong(id[1]), m.key(), segmentId, part));
            }
        }));
        return out;
    }

    /**
     * No stored entry straddles a bucket of its segment or holds a keyed message outside the segment's
     * range; every stamp covers the entry's messages.
     */
    public static Check placement(MemorySegments cluster) {
        return ReplicationRecorder.of(Map.of(cluster.name(), cluster), true).placement().get(0);
    }

    /**
     * No replicator of {@code cluster} is failing at the end: each one that failed was restarted and made
     * progress since, or completed. Judged on the replicators' status, as their links report it.
     */
    public static Check replicators(String cluster, List<ReplicatorStatus> statuses) {
        String name = "no replicator failing at the end (" + cluster + ")";
        List<ReplicatorStatus> failing = statuses.stream().filter(ReplicatorStatus::failing).toList();
        if (!failing.isEmpty()) {
            ReplicatorStatus first = failing.get(0);
            return new Check(name, false, failing.size() + " failing; " + first.id() + " failed "
                    + first.consecutiveFailures() + " time(s) in a row: " + first.lastError().orElse(null));
        }
        long restarts = statuses.stream().mapToLong(ReplicatorStatus::restarts).sum();
        return new Check(name, true, statuses.size() + " replicators, " + restarts + " restart(s)");
    }

    /** A replicated whole entry carries the source entry's payload bytes unchanged. */
    public static Check verbatimPayloads(Map<String, MemorySegments> clusters) {
        return ReplicationRecorder.of(clusters, true).verbatimPayloads();
    }
}
