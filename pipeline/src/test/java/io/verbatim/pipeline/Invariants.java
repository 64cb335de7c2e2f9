package io.verbatim.pipeline;

import static org.assertj.core.api.Assertions.assertThat;

import io.verbatim.model.HashRange;
import io.verbatim.model.KeyHash;
import io.verbatim.model.Segment;
import io.verbatim.model.Stamp;
import io.verbatim.model.entry.Entries;
import io.verbatim.model.entry.Entry;
import io.verbatim.model.entry.Message;
import io.verbatim.model.entry.SourcePosition;
import io.verbatim.pipeline.memory.MemoryCluster;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/** What every cluster's stored data must satisfy after replication settles. */
final class Invariants {
    /** One stored message with where it came from. */
    record Stored(String origin, int counter, String key, long segmentId, boolean part) {
    }

    private Invariants() {
    }

    /** Every message stored on {@code cluster}, in delivery order (segment id, then position). */
    static List<Stored> stored(MemoryCluster cluster) {
        List<Stored> out = new ArrayList<>();
        cluster.contents().forEach((segmentId, entries) -> entries.forEach(stored -> {
            Entry entry = Entry.parse(stored.bytes());
            boolean part = entry.sourcePosition().map(p -> !p.isWhole()).orElse(false);
            for (Message m : Entries.messages(entry)) {
                String[] id = new String(m.payloadBytes(), StandardCharsets.UTF_8).split("/", 3);
                out.add(new Stored(id[0], Integer.parseInt(id[1]), m.key(), segmentId, part));
            }
        }));
        return out;
    }

    /**
     * Every message of every origin arrived on every cluster; on the fast path exactly once, and
     * duplicates at all only where a copy came through the slow path. Per origin and key, order holds.
     */
    static void checkDelivery(World world, boolean allowSlowPathDuplicates) {
        for (MemoryCluster cluster : world.clusters.values()) {
            List<Stored> stored = stored(cluster);
            Map<String, List<Stored>> byMessage = new HashMap<>();
            for (Stored s : stored) {
                byMessage.computeIfAbsent(s.origin() + "/" + s.counter(), k -> new ArrayList<>()).add(s);
            }
            for (String origin : world.clusters.keySet()) {
                for (int n = 0; n < world.produced(origin); n++) {
                    List<Stored> copies = byMessage.get(origin + "/" + n);
                    assertThat(copies).as("message %s/%d on cluster %s", origin, n, cluster.name()).isNotNull();
                    if (copies.size() > 1) {
                        assertThat(allowSlowPathDuplicates && copies.stream().anyMatch(Stored::part))
                                .as("message %s/%d stored %d times on %s: %s", origin, n, copies.size(),
                                        cluster.name(), copies).isTrue();
                    }
                }
            }
            checkOrder(cluster, stored);
        }
    }

    private static void checkOrder(MemoryCluster cluster, List<Stored> stored) {
        Map<String, Integer> last = new HashMap<>();
        for (Stored s : stored) {
            if (s.key() == null) {
                continue;
            }
            String k = s.origin() + "|" + s.key();
            Integer previous = last.get(k);
            // A duplicate may repeat an earlier counter; it must never go back past it.
            assertThat(previous == null || s.counter() >= previous || isRepeat(stored, s))
                    .as("on %s, key %s from %s: %d after %d", cluster.name(), s.key(), s.origin(), s.counter(),
                            previous).isTrue();
            if (previous == null || s.counter() > previous) {
                last.put(k, s.counter());
            }
        }
    }

    private static boolean isRepeat(List<Stored> stored, Stored s) {
        return stored.stream().filter(o -> o.origin().equals(s.origin()) && o.counter() == s.counter()).count() > 1;
    }

    /**
     * No stored entry straddles a bucket of its segment, or holds a keyed message outside the segment's
     * range; every stamp covers the entry's messages.
     */
    static void checkPlacement(MemoryCluster cluster) {
        cluster.contents().forEach((segmentId, entries) -> {
            Segment segment = cluster.layout().segment(segmentId).orElseThrow();
            HashRange range = segment.range();
            for (var stored : entries) {
                Entry entry = Entry.parse(stored.bytes());
                Stamp stamp = entry.facts().stamp();
                assertThat(stamp).as("entry %s on %s is stamped", stored.position(), cluster.name()).isNotNull();
                assertThat(segment.buckets().holdsInOneBucket(stamp.asRange()))
                        .as("entry %s with stamp %s straddles a bucket of %s", stored.position(), stamp,
                                segment.descriptor()).isTrue();
                for (Message m : Entries.messages(entry)) {
                    KeyHash h = m.routingHash();
                    if (h != null) {
                        assertThat(range.contains(h.segmentHash())).as("key %s outside %s", m.key(),
                                segment.descriptor()).isTrue();
                    }
                    assertThat(stamp.asRange().contains(m.hashB())).isTrue();
                }
            }
        });
    }

    /** A replicated whole entry carries the source entry's payload bytes unchanged. */
    static void checkVerbatimPayloads(World world) {
        for (MemoryCluster cluster : world.clusters.values()) {
            cluster.contents().forEach((segmentId, entries) -> entries.forEach(stored -> {
                Entry entry = Entry.parse(stored.bytes());
                if (!entry.isReplicated()) {
                    return;
                }
                SourcePosition from = entry.sourcePosition().orElseThrow();
                if (!from.isWhole()) {
                    return;
                }
                MemoryCluster origin = world.cluster(entry.metadata().getReplicatedFrom());
                Entry source = Entry.parse(origin.log(from.ledgerId()).entries().get((int) from.entryId()).bytes());
                assertThat(entry.payload()).as("payload of %s from %s", from, origin.name()).isEqualTo(source.payload());
            }));
        }
    }
}
