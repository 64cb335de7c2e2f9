package io.verbatim.testkit;

import io.verbatim.embedded.MemorySegmentLog;
import io.verbatim.embedded.MemorySegments;
import io.verbatim.model.KeyHash;
import io.verbatim.model.Segment;
import io.verbatim.model.Stamp;
import io.verbatim.model.entry.Entries;
import io.verbatim.model.entry.Entry;
import io.verbatim.model.entry.Message;
import io.verbatim.model.entry.SourcePosition;
import io.verbatim.pipeline.StoredEntry;
import io.verbatim.testkit.ReplicationChecks.Check;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import reactor.core.Disposable;
import reactor.core.Disposables;

/**
 * The stored-data checks of {@link ReplicationChecks}, kept as entries are stored rather than by
 * reading everything at the end: what a long run needs, whose storage drops consumed entries and
 * deletes drained segments. Per cluster it keeps a bit per message seen (and one per message seen as a
 * slow-path part), the last counter per (origin, key), and the first violation of each rule; so its
 * memory is a few bits per message, never the messages.
 *
 * <p>Messages carry {@code origin/counter} as their payload (anything after a further {@code /} is
 * padding), counters from 0 per origin.
 */
public final class ReplicationRecorder implements MemorySegments.AppendListener, Disposable {
    private final Map<String, MemorySegments> clusters;
    private final boolean allowSlowPathDuplicates;
    private final Map<String, PerCluster> byCluster = new LinkedHashMap<>();
    private final Disposable.Composite taps = Disposables.composite();
    private @Nullable String verbatimFailure;
    private long verbatimCompared;
    private long verbatimUncomparable;

    private ReplicationRecorder(Map<String, MemorySegments> clusters, boolean allowSlowPathDuplicates) {
        this.clusters = Map.copyOf(clusters);
        this.allowSlowPathDuplicates = allowSlowPathDuplicates;
        clusters.keySet().forEach(name -> byCluster.put(name, new PerCluster()));
    }

    /**
     * Checks everything {@code clusters} store from now on, as it is stored: attach before traffic.
     *
     * @param allowSlowPathDuplicates whether a message may be stored twice when one copy came re-batched
     *        (PIP-495's seal window)
     */
    public static ReplicationRecorder attach(Map<String, MemorySegments> clusters, boolean allowSlowPathDuplicates) {
        ReplicationRecorder r = new ReplicationRecorder(clusters, allowSlowPathDuplicates);
        clusters.values().forEach(c -> r.taps.add(c.onAppend(r)));
        return r;
    }

    /** Checks what {@code clusters} store now, segment by segment in id order (parents before children). */
    public static ReplicationRecorder of(Map<String, MemorySegments> clusters, boolean allowSlowPathDuplicates) {
        ReplicationRecorder r = new ReplicationRecorder(clusters, allowSlowPathDuplicates);
        for (MemorySegments c : clusters.values()) {
            c.contents().forEach((segmentId, entries) -> {
                Segment segment = c.layout().segment(segmentId).orElseThrow();
                entries.forEach(stored -> r.appended(c, segment, stored));
            });
        }
        return r;
    }

    @Override
    public synchronized void appended(MemorySegments cluster, Segment segment, StoredEntry stored) {
        PerCluster c = byCluster.get(cluster.name());
        if (c == null) {
            return;
        }
        Entry entry = Entry.parse(stored.bytes());
        c.placement(cluster.name(), segment, stored, entry);
        comparePayload(cluster, entry);
        boolean part = entry.sourcePosition().map(p -> !p.isWhole()).orElse(false);
        for (Message m : Entries.messages(entry)) {
            String payload = new String(m.payloadBytes(), StandardCharsets.UTF_8);
            String[] id = payload.split("/", 3);
            if (id.length < 2 || id[0].isEmpty() || !id[1].matches("\\d{1,9}")) {
                c.foreign(cluster.name(), stored, payload);
                continue;
            }
            c.message(cluster.name(), id[0], Integer.parseInt(id[1]), m.key().orElse(null), part,
                    allowSlowPathDuplicates);
        }
    }

    /** A replicated whole entry carries the source entry's payload bytes unchanged. */
    private void comparePayload(MemorySegments cluster, Entry entry) {
        SourcePosition from = entry.sourcePosition().orElse(null);
        if (!entry.isReplicated() || from == null || !from.isWhole() || verbatimFailure != null) {
            return;
        }
        MemorySegments origin = clusters.get(entry.metadata().getReplicatedFrom());
        MemorySegmentLog log = origin == null ? null : origin.findLogOfLedger(from.ledgerId()).orElse(null);
        StoredEntry source = log == null ? null : log.entryAt(from);
        if (source == null || origin == null) {
            // Gone from its origin (consumed and dropped, or its segment deleted): nothing left to compare.
            verbatimUncomparable++;
        } else if (!entry.payload().equals(Entry.parse(source.bytes()).payload())) {
            verbatimFailure = "entry " + from + " from " + origin.name() + " changed on its way to " + cluster.name();
        } else {
            verbatimCompared++;
        }
    }

    /**
     * Every message everywhere, at most once but for the seal window, per origin in order per key, and
     * nothing stored that no origin produced.
     */
    public synchronized List<Check> delivery(Map<String, Long> produced) {
        return List.of(everyMessageEverywhere(produced), atMostOnce(), perOriginOrderPerKey(), noForeignData(produced));
    }

    /** A payload that is not {@code origin/counter}, or an origin that produced nothing, is foreign data. */
    private Check noForeignData(Map<String, Long> produced) {
        for (var cluster : byCluster.entrySet()) {
            PerCluster c = cluster.getValue();
            if (c.foreignFailure != null) {
                return new Check("only produced messages stored", false, c.foreignFailure);
            }
            for (var origin : c.seen.entrySet()) {
                if (!produced.containsKey(origin.getKey()) && !origin.getValue().isEmpty()) {
                    return new Check("only produced messages stored", false, origin.getValue().cardinality()
                            + " message(s) from unknown origin '" + origin.getKey() + "' stored on " + cluster.getKey());
                }
            }
        }
        return new Check("only produced messages stored", true, "every stored message is origin/counter of a known origin");
    }

    /** No stored entry straddles a bucket of its segment or leaves its range, one check per cluster. */
    public synchronized List<Check> placement() {
        List<Check> out = new ArrayList<>();
        byCluster.forEach((name, c) -> out.add(c.placementFailure != null
                ? new Check("no entry straddles a bucket", false, c.placementFailure)
                : new Check("no entry straddles a bucket", true, c.entries + " entries inside one bucket of their "
                        + "segment on " + name)));
        return out;
    }

    public synchronized Check verbatimPayloads() {
        return verbatimFailure != null ? new Check("verbatim payloads are the source's bytes", false, verbatimFailure)
                : new Check("verbatim payloads are the source's bytes", true, verbatimCompared
                        + " verbatim entries compared" + (verbatimUncomparable == 0 ? ""
                                : " (" + verbatimUncomparable + " no longer on their origin)"));
    }

    /** Every check: delivery, placement per cluster, verbatim payloads. */
    public synchronized List<Check> checks(Map<String, Long> produced) {
        List<Check> out = new ArrayList<>(delivery(produced));
        out.addAll(placement());
        out.add(verbatimPayloads());
        return out;
    }

    private Check everyMessageEverywhere(Map<String, Long> produced) {
        long total = 0;
        for (var cluster : byCluster.entrySet()) {
            for (var origin : produced.entrySet()) {
                BitSet seen = cluster.getValue().seen.getOrDefault(origin.getKey(), new BitSet());
                int missing = seen.nextClearBit(0);
                if (missing < origin.getValue()) {
                    return new Check("every message on every cluster", false, "message " + origin.getKey() + "/"
                            + missing + " is missing on " + cluster.getKey() + " (" + seen.cardinality() + " of "
                            + origin.getValue() + " from " + origin.getKey() + " arrived)");
                }
                total += origin.getValue();
            }
        }
        return new Check("every message on every cluster", true, total + " message copies found");
    }

    private Check atMostOnce() {
        long duplicates = 0;
        for (var cluster : byCluster.entrySet()) {
            PerCluster c = cluster.getValue();
            if (c.duplicateFailure != null) {
                return new Check("exactly once on the fast path", false, c.duplicateFailure);
            }
            // A message stored more than once passes only if one of its copies came through the slow path.
            for (var repeated : c.repeated.entrySet()) {
                BitSet noPart = (BitSet) repeated.getValue().clone();
                noPart.andNot(c.seenAsPart.getOrDefault(repeated.getKey(), new BitSet()));
                if (!noPart.isEmpty()) {
                    return new Check("exactly once on the fast path", false, "message " + repeated.getKey() + "/"
                            + noPart.nextSetBit(0) + " is stored twice on " + cluster.getKey()
                            + ", neither copy through the slow path");
                }
            }
            duplicates += c.duplicates;
        }
        return new Check("exactly once on the fast path", true, duplicates
                + " duplicate(s), each with a re-batched copy (the seal window)");
    }

    private Check perOriginOrderPerKey() {
        long keys = 0;
        for (var cluster : byCluster.entrySet()) {
            PerCluster c = cluster.getValue();
            for (OutOfOrder o : c.outOfOrder) {
                if (!c.copies(o.origin(), o.counter())) {
                    return new Check("per-origin order per key", false, "on " + cluster.getKey() + ", key " + o.key()
                            + " from " + o.origin() + ": message " + o.counter() + " after " + o.previous());
                }
            }
            keys += c.last.size();
        }
        return new Check("per-origin order per key", true, keys + " (origin, key) sequences in order");
    }

    @Override
    public void dispose() {
        taps.dispose();
    }

    @Override
    public boolean isDisposed() {
        return taps.isDisposed();
    }

    /** A message stored below the last counter of its key: an order violation unless it has a second copy. */
    private record OutOfOrder(String origin, int counter, String key, long previous) {
    }

    /** What one cluster stored, compactly. */
    private static final class PerCluster {
        final Map<String, BitSet> seen = new HashMap<>();
        final Map<String, BitSet> seenAsPart = new HashMap<>();
        final Map<String, BitSet> repeated = new HashMap<>();
        final Map<String, Integer> last = new HashMap<>();
        final List<OutOfOrder> outOfOrder = new ArrayList<>();
        long entries;
        long duplicates;
        @Nullable String duplicateFailure;
        @Nullable String placementFailure;
        @Nullable String foreignFailure;

        void foreign(String cluster, StoredEntry stored, String payload) {
            if (foreignFailure == null) {
                String shown = payload.length() > 40 ? payload.substring(0, 40) + "…" : payload;
                foreignFailure = "entry " + stored.position() + " on " + cluster + " holds a message whose payload is "
                        + "not origin/counter: '" + shown.replaceAll("[^\\x20-\\x7e]", "?") + "'";
            }
        }

        void message(String cluster, String origin, int counter, @Nullable String key, boolean part,
                boolean allowSlowPath) {
            BitSet s = seen.computeIfAbsent(origin, o -> new BitSet());
            BitSet p = seenAsPart.computeIfAbsent(origin, o -> new BitSet());
            boolean repeat = s.get(counter);
            if (repeat) {
                repeated.computeIfAbsent(origin, o -> new BitSet()).set(counter);
                if (!allowSlowPath && duplicateFailure == null) {
                    duplicateFailure = "message " + origin + "/" + counter + " is stored twice on " + cluster;
                }
                duplicates++;
            }
            s.set(counter);
            if (part) {
                p.set(counter);
            }
            if (key == null) {
                return;
            }
            String k = origin + "|" + key;
            Integer previous = last.get(k);
            if (previous != null && counter < previous && !repeat) {
                outOfOrder.add(new OutOfOrder(origin, counter, key, previous));
            }
            if (previous == null || counter > previous) {
                last.put(k, counter);
            }
        }

        boolean copies(String origin, int counter) {
            BitSet r = repeated.get(origin);
            return r != null && r.get(counter);
        }

        void placement(String cluster, Segment segment, StoredEntry stored, Entry entry) {
            entries++;
            if (placementFailure != null) {
                return;
            }
            Stamp stamp = entry.facts().stamp().orElse(null);
            String where = "entry " + stored.position() + " on " + cluster + " in " + segment.descriptor();
            if (stamp == null || !segment.buckets().holdsInOneBucket(stamp.asRange())) {
                placementFailure = where + " has stamp " + stamp;
                return;
            }
            for (Message m : Entries.messages(entry)) {
                KeyHash h = m.routingHash().orElse(null);
                if (h != null && !segment.range().contains(h.segmentHash()) || !stamp.asRange().contains(m.hashB())) {
                    placementFailure = where + " holds key " + m.key().orElse(null) + " outside its range or stamp";
                    return;
                }
            }
        }
    }
}
