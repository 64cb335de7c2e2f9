package io.verbatim.runtime;

import io.verbatim.model.HashRange;
import io.verbatim.model.KeyHash;
import io.verbatim.model.Segment;
import io.verbatim.model.Stamp;
import io.verbatim.model.entry.Entries;
import io.verbatim.model.entry.Entry;
import io.verbatim.model.entry.Message;
import io.verbatim.model.entry.SourcePosition;
import io.verbatim.pipeline.StoredEntry;
import io.verbatim.pipeline.memory.MemoryCluster;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What replicated data must satisfy once traffic stopped and replication settled, checked on what
 * every cluster stores and on what its consumers received. Messages carry {@code origin/counter} as
 * their payload ({@link #payload}), counters from 0 per origin.
 */
public final class DeliveryChecks {
    private DeliveryChecks() {
    }

    /** One check's outcome; {@code detail} says what failed first, or what was counted. */
    public record Check(String name, boolean passed, String detail) {
    }

    /** The payload of message {@code counter} produced on {@code origin}. */
    public static byte[] payload(String origin, long counter) {
        return (origin + "/" + counter).getBytes(StandardCharsets.UTF_8);
    }

    private record Stored(String origin, long counter, String key, long segmentId, boolean part) {
    }

    /**
     * @param produced messages produced per origin cluster (counters {@code 0..n-1})
     */
    public static List<Check> run(Map<String, MemoryCluster> clusters, Map<String, Long> produced) {
        List<Check> out = new ArrayList<>();
        Map<String, List<Stored>> stored = new HashMap<>();
        clusters.forEach((name, c) -> stored.put(name, stored(c)));
        out.add(everyMessageEverywhere(stored, produced));
        out.add(exactlyOnceOnTheFastPath(stored));
        out.add(perOriginOrderPerKey(stored));
        out.add(noStraddlingEntry(clusters));
        out.add(verbatimPayloadsUnchanged(clusters));
        return out;
    }

    private static List<Stored> stored(MemoryCluster cluster) {
        List<Stored> out = new ArrayList<>();
        cluster.contents().forEach((segmentId, entries) -> entries.forEach(e -> {
            Entry entry = Entry.parse(e.bytes());
            boolean part = entry.sourcePosition().map(p -> !p.isWhole()).orElse(false);
            for (Message m : Entries.messages(entry)) {
                String[] id = new String(m.payloadBytes(), StandardCharsets.UTF_8).split("/", 2);
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

    private static Check exactlyOnceOnTheFastPath(Map<String, List<Stored>> stored) {
        long slowPathDuplicates = 0;
        for (var cluster : stored.entrySet()) {
            Map<String, List<Stored>> copies = new HashMap<>();
            for (Stored s : cluster.getValue()) {
                copies.computeIfAbsent(s.origin() + "/" + s.counter(), k -> new ArrayList<>()).add(s);
            }
            for (var c : copies.entrySet()) {
                if (c.getValue().size() > 1) {
                    if (c.getValue().stream().noneMatch(Stored::part)) {
                        return new Check("exactly once on the fast path", false, "message " + c.getKey() + " is stored "
                                + c.getValue().size() + " times on " + cluster.getKey() + ", none through the slow path");
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

    private static Check noStraddlingEntry(Map<String, MemoryCluster> clusters) {
        long entries = 0;
        for (MemoryCluster cluster : clusters.values()) {
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
        }
        return new Check("no entry straddles a bucket", true, entries + " entries inside one bucket of their segment");
    }

    private static Check verbatimPayloadsUnchanged(Map<String, MemoryCluster> clusters) {
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

    /**
     * On what consumers received, in delivery order: within a segment each key went to one consumer,
     * and per origin a key's messages came in order.
     */
    public static List<Check> consumers(String cluster, List<Subscription.Delivery> deliveries) {
        Map<String, Integer> owner = new HashMap<>();
        Map<String, Long> last = new HashMap<>();
        Set<String> seen = new HashSet<>();
        for (Subscription.Delivery d : deliveries) {
            for (Message m : d.messages()) {
                if (m.key() == null) {
                    continue;
                }
                Integer was = owner.putIfAbsent(d.segmentId() + "|" + m.key(), d.consumer());
                if (was != null && was != d.consumer()) {
                    return List.of(new Check("key affinity per segment (" + cluster + ")", false, "key " + m.key()
                            + " of segment " + d.segmentId() + " went to consumers " + was + " and " + d.consumer()));
                }
                String[] id = new String(m.payloadBytes(), StandardCharsets.UTF_8).split("/", 2);
                long counter = Long.parseLong(id[1]);
                String k = id[0] + "|" + m.key();
                Long previous = last.get(k);
                boolean repeat = !seen.add(id[0] + "/" + counter);
                if (previous != null && counter < previous && !repeat) {
                    return List.of(new Check("consumer order per key (" + cluster + ")", false, "key " + m.key()
                            + " from " + id[0] + ": message " + counter + " delivered after " + previous));
                }
                if (previous == null || counter > previous) {
                    last.put(k, counter);
                }
            }
        }
        return List.of(new Check("key affinity per segment (" + cluster + ")", true, owner.size()
                + " (segment, key) pairs, each with one consumer"),
                new Check("consumer order per key (" + cluster + ")", true, last.size() + " (origin, key) sequences"));
    }
}
