package io.verbatim.pipeline.memory;

import io.verbatim.model.HashRange;
import io.verbatim.model.KeyHash;
import io.verbatim.model.Segment;
import io.verbatim.model.Stamp;
import io.verbatim.model.entry.Entries;
import io.verbatim.model.entry.Entry;
import io.verbatim.model.entry.Message;
import io.verbatim.model.entry.SourcePosition;
import io.verbatim.pipeline.ReplicatorStatus;
import io.verbatim.pipeline.StoredEntry;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What replicated data must satisfy once traffic stopped and replication settled, checked on what every
 * in-memory cluster stores. Each message's payload starts with {@code origin/counter} (anything after a
 * further {@code /} is padding), counters from 0 per origin; and on the replicators' status at the end. The
 * pipeline's tests, the runtime's tests and the demo all judge replication by these checks.
 */
public final class ReplicationChecks {
    private ReplicationChecks() {
    }

    /** One check's outcome; {@code detail} says what failed first, or what was counted. */
    public record Check(String name, boolean passed, String detail) {
    }

    /** One stored message: where it came from, its key, where it is stored, whether it came as a part. */
    public record Stored(String origin, long counter, String key, long segmentId, boolean part) {
    }

    /**
     * Every check on every cluster.
     *
     * @param produced messages produced per origin cluster (counters {@code 0..n-1})
     * @param allowSlowPathDuplicates whether a message may be stored twice when one copy came re-batched
     *        (PIP-495's seal window); without, any second copy fails
     */
    public static List<Check> run(Map<String, MemoryCluster> clusters, Map<String, Long> produced,
            boolean allowSlowPathDuplicates) {
        List<Check> out = new ArrayList<>(delivery(clusters, produced, allowSlowPathDuplicates));
        for (MemoryCluster c : clusters.values()) {
            out.add(placement(c));
        }
        out.add(verbatimPayloads(clusters));
        return out;
    }

    /** Every message everywhere, at most once (but for the seal window), per origin in order per key. */
    public static List<Check> delivery(Map<String, MemoryCluster> clusters, Map<String, Long> produced,
            boolean allowSlowPathDuplicates) {
        Map<String, List<Stored>> stored = new HashMap<>();
        clusters.forEach((name, c) -> stored.put(name, stored(c)));
        return List.of(everyMessageEverywhere(stored, produced), atMostOnce(stored, allowSlowPathDuplicates),
                perOriginOrderPerKey(stored));
    }

    /** Every message {@code cluster} stores, in delivery order (segment id, then position). */
    public static List<Stored> stored(MemoryCluster cluster) {
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

    private static Check everyMessageEverywhere(Map<String, List<Stored>> stored, Map<String, Long> produced) {
        long total = 0;
        for (var cluster : stored.entrySet()) {
            Map<String, Set<Long>> seen = new HashMap<>();
            for (Stored s : cluster.getValue()) {
                seen.computeIfAbsent(s.origin(), o -> new HashSet<>()).add(s.counter());
            }
            for (var origin : produced.entrySet()) {
                Set<Long> got = seen.getOrDefault(origin.getKey(), Set.of());
                for (long n = 0; n < origin.getValue(); n++) {
                    if (!got.contains(n)) {
                        return new Check("every message on every cluster", false, "message " + origin.getKey() + "/" + n
                                + " is missing on " + cluster.getKey() + " (" + got.size() + " of " + origin.getValue()
                                + " from " + origin.getKey() + " arrived)");
                    }
                }
                total += origin.getValue();
            }
        }
        return new Check("every message on every cluster", true, total + " message copies found");
    }

    private static Check atMostOnce(Map<String, List<Stored>> stored, boolean allowSlowPathDuplicates) {
        long slowPathDuplicates = 0;
        for (var cluster : stored.entrySet()) {
            Map<String, List<Stored>> copies = new HashMap<>();
            for (Stored s : cluster.getValue()) {
                copies.computeIfAbsent(s.origin() + "/" + s.counter(), k -> new ArrayList<>()).add(s);
            }
            for (var c : copies.entrySet()) {
                if (c.getValue().size() > 1) {
                    if (!allowSlowPathDuplicates || c.getValue().stream().noneMatch(Stored::part)) {
                        return new Check("exactly once on the fast path", false, "message " + c.getKey() + " is stored "
                                + c.getValue().size() + " times on " + cluster.getKey()
                                + (allowSlowPathDuplicates ? ", none through the slow path" : ""));
                    }
                    slowPathDuplicates += c.getValue().size() - 1;
                }
            }
        }
        return new Check("exactly once on the fast path", true, slowPathDuplicates
                + " duplicate(s), each with a re-batched copy (the seal window)");
    }

    private static Check perOriginOrderPerKey(Map<String, List<Stored>> stored) {
        long keys = 0;
        for (var cluster : stored.entrySet()) {
            Map<String, Long> last = new HashMap<>();
            Map<String, Integer> copies = new HashMap<>();
            cluster.getValue().forEach(s -> copies.merge(s.origin() + "/" + s.counter(), 1, Integer::sum));
            for (Stored s : cluster.getValue()) { // segment id order is parents before children
                if (s.key() == null) {
                    continue;
                }
                String k = s.origin() + "|" + s.key();
                Long previous = last.get(k);
                if (previous != null && s.counter() < previous && copies.get(s.origin() + "/" + s.counter()) == 1) {
                    return new Check("per-origin order per key", false, "on " + cluster.getKey() + ", key " + s.key()
                            + " from " + s.origin() + ": message " + s.counter() + " after " + previous);
                }
                if (previous == null || s.counter() > previous) {
                    last.put(k, s.counter());
                }
            }
            keys += last.size();
        }
        return new Check("per-origin order per key", true, keys + " (origin, key) sequences in order");
    }

    /**
     * No stored entry straddles a bucket of its segment or holds a keyed message outside the segment's
     * range; every stamp covers the entry's messages.
     */
    public static Check placement(MemoryCluster cluster) {
        long entries = 0;
        for (var e : cluster.contents().entrySet()) {
            Segment segment = cluster.layout().segment(e.getKey()).orElseThrow();
            HashRange range = segment.range();
            for (StoredEntry stored : e.getValue()) {
                Entry entry = Entry.parse(stored.bytes());
                Stamp stamp = entry.facts().stamp();
                String where = "entry " + stored.position() + " on " + cluster.name() + " in " + segment.descriptor();
                if (stamp == null || !segment.buckets().holdsInOneBucket(stamp.asRange())) {
                    return new Check("no entry straddles a bucket", false, where + " has stamp " + stamp);
                }
                for (Message m : Entries.messages(entry)) {
                    KeyHash h = m.routingHash();
                    if (h != null && !range.contains(h.segmentHash()) || !stamp.asRange().contains(m.hashB())) {
                        return new Check("no entry straddles a bucket", false, where + " holds key " + m.key()
                                + " outside its range or stamp");
                    }
                }
                entries++;
            }
        }
        return new Check("no entry straddles a bucket", true, entries + " entries inside one bucket of their segment on "
                + cluster.name());
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
                    + first.consecutiveFailures() + " time(s) in a row: " + first.lastError());
        }
        long restarts = statuses.stream().mapToLong(ReplicatorStatus::restarts).sum();
        return new Check(name, true, statuses.size() + " replicators, " + restarts + " restart(s)");
    }

    /** A replicated whole entry carries the source entry's payload bytes unchanged. */
    public static Check verbatimPayloads(Map<String, MemoryCluster> clusters) {
        long verbatim = 0;
        for (MemoryCluster cluster : clusters.values()) {
            for (List<StoredEntry> entries : cluster.contents().values()) {
                for (StoredEntry stored : entries) {
                    Entry entry = Entry.parse(stored.bytes());
                    SourcePosition from = entry.sourcePosition().orElse(null);
                    if (!entry.isReplicated() || from == null || !from.isWhole()) {
                        continue;
                    }
                    MemoryCluster origin = clusters.get(entry.metadata().getReplicatedFrom());
                    Entry source = Entry.parse(origin.log(from.ledgerId()).entries().get((int) from.entryId()).bytes());
                    if (!entry.payload().equals(source.payload())) {
                        return new Check("verbatim payloads are the source's bytes", false, "entry " + from + " from "
                                + origin.name() + " changed on its way to " + cluster.name());
                    }
                    verbatim++;
                }
            }
        }
        return new Check("verbatim payloads are the source's bytes", true, verbatim + " verbatim entries compared");
    }
}
