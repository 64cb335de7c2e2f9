package io.verbatim.examples;

import io.verbatim.model.entry.Entries;
import io.verbatim.model.entry.Entry;
import io.verbatim.model.entry.Message;
import io.verbatim.model.entry.SourcePosition;
import io.verbatim.pipeline.StoredEntry;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.UnaryOperator;
import org.jspecify.annotations.Nullable;

/**
 * The fault suite's one checker, a pure function of what every cluster stores and what was produced:
 *
 * <ul>
 * <li>every acknowledged message is stored on every cluster ({@link Rule#MISSING});</li>
 * <li>once: a second copy only where one copy came through the slow path, PIP-495's seal window (J3,
 *     {@link Rule#DUPLICATE});</li>
 * <li>acknowledged messages in order per (origin, key) on every cluster, one out of order excused only when it
 *     has such a second copy, as the demo's {@code ReplicationRecorder} does ({@link Rule#ORDER}); a message of an
 *     unknown call has no order: the call timed out and the next was issued while it may still have been stored;</li>
 * <li>nothing stored that was never sent: a payload that is not {@code origin/counter}, an unknown origin, or a
 *     counter no call sent ({@link Rule#NEVER_SENT});</li>
 * <li>every cluster's layout the same ({@link Rule#LAYOUTS}).</li>
 * </ul>
 *
 * Messages of unknown calls (failed or timed out) are never required; where they went is counted. The demo's
 * {@code ReplicationRecorder} judges a run in which every produced message is required, which a run with
 * unknown calls is not: its delivery checks would call every unknown message lost.
 */
final class FaultChecker {

    enum Rule {
        MISSING("acknowledged on every cluster"),
        DUPLICATE("stored once (a second copy only through the slow path)"),
        ORDER("in order per (origin, key)"),
        NEVER_SENT("nothing stored that was never sent"),
        LAYOUTS("layouts equal after the heal"),
        DRAIN("drained after the heal"),
        PLACEMENT("entries inside one bucket, verbatim payloads intact"),
        PROCESS("processes stop and start as told"),
        UNROUTED("every connection between clusters through its link"),
        TRAFFIC("produce calls acknowledged during the phase");

        final String text;

        Rule(String text) {
            this.text = text;
        }
    }

    /** One broken rule, with an id that names it once (so a later phase does not report it again). */
    record Violation(Rule rule, String id, String detail) {
    }

    /** An origin's counters: those acknowledged, and those sent at all (acknowledged or unknown). */
    record Produced(BitSet acknowledged, BitSet sent) {
        Produced {
            acknowledged = (BitSet) acknowledged.clone();
            sent = (BitSet) sent.clone();
            BitSet notSent = (BitSet) acknowledged.clone();
            notSent.andNot(sent);
            if (!notSent.isEmpty()) {
                throw new IllegalArgumentException("counter " + notSent.nextSetBit(0) + " is acknowledged but not sent");
            }
        }
    }

    /**
     * One stored message, in its cluster's storage order (segments by id, parents before children, then entry
     * by entry).
     *
     * @param part whether its entry came through the slow path (a re-batched part)
     */
    record Stored(long segmentId, String position, String payload, @Nullable String key, boolean part) {
    }

    /**
     * What the checker found.
     *
     * @param checked acknowledged messages looked for on every cluster
     * @param unknownEverywhere messages of unknown calls found on every cluster
     * @param unknownSomewhere messages of unknown calls found on some clusters, not all
     */
    record Report(List<Violation> violations, long checked, long unknownEverywhere, long unknownSomewhere) {
        Report {
            violations = List.copyOf(violations);
        }
    }

    private FaultChecker() {
    }

    /**
     * Every message of {@code contents} (a cluster's entries by segment id), in storage order.
     *
     * @param sourcePositions a stored replicated entry's source position as Verbatim reads it: as it is in memory;
     *        on Pulsar it is stored in its wire form, the part in the entry id's low bits ({@code WirePositions})
     */
    static List<Stored> messages(Map<Long, List<StoredEntry>> contents, UnaryOperator<SourcePosition> sourcePositions) {
        List<Stored> out = new ArrayList<>();
        new TreeMap<>(contents).forEach((segmentId, entries) -> {
            for (StoredEntry stored : entries) {
                Entry entry = Entry.parse(stored.bytes());
                boolean part = entry.sourcePosition().map(sourcePositions).map(p -> !p.isWhole()).orElse(false);
                for (Message m : Entries.messages(entry)) {
                    out.add(new Stored(segmentId, stored.position().toString(),
                            new String(m.payloadBytes(), StandardCharsets.UTF_8), m.key().orElse(null), part));
                }
            }
        });
        return out;
    }

    /**
     * @param stored  per cluster, its messages in storage order
     * @param produced per origin
     * @param layouts per cluster, its layout as it describes it
     */
    static Report check(Map<String, List<Stored>> stored, Map<String, Produced> produced, Map<String, String> layouts) {
        List<Violation> out = new ArrayList<>();
        Map<String, Map<String, BitSet>> seenBy = new LinkedHashMap<>();
        stored.forEach((cluster, messages) -> seenBy.put(cluster, checkCluster(cluster, messages, produced, out)));
        long checked = 0;
        for (var origin : produced.entrySet()) {
            BitSet acknowledged = origin.getValue().acknowledged();
            checked += acknowledged.cardinality();
            for (var cluster : seenBy.entrySet()) {
                BitSet missing = (BitSet) acknowledged.clone();
                missing.andNot(cluster.getValue().getOrDefault(origin.getKey(), new BitSet()));
                for (int c = missing.nextSetBit(0); c >= 0; c = missing.nextSetBit(c + 1)) {
                    out.add(new Violation(Rule.MISSING, "missing " + origin.getKey() + "/" + c + " on " + cluster.getKey(),
                            origin.getKey() + "/" + c + " was acknowledged and is not on " + cluster.getKey()));
                }
            }
        }
        if (layouts.values().stream().distinct().count() > 1) {
            out.add(new Violation(Rule.LAYOUTS, "layouts " + layouts, "the clusters hold different layouts: " + layouts));
        }
        long everywhere = 0;
        long somewhere = 0;
        for (var origin : produced.entrySet()) {
            BitSet unknown = (BitSet) origin.getValue().sent().clone();
            unknown.andNot(origin.getValue().acknowledged());
            BitSet all = (BitSet) unknown.clone();
            BitSet any = new BitSet();
            for (Map<String, BitSet> seen : seenBy.values()) {
                BitSet s = seen.getOrDefault(origin.getKey(), new BitSet());
                all.and(s);
                BitSet mine = (BitSet) unknown.clone();
                mine.and(s);
                any.or(mine);
            }
            everywhere += all.cardinality();
            somewhere += any.cardinality() - all.cardinality();
        }
        return new Report(out, checked, everywhere, somewhere);
    }

    /** One cluster's duplicates, order and foreign data; answers what it holds per origin. */
    private static Map<String, BitSet> checkCluster(String cluster, List<Stored> messages, Map<String, Produced> produced,
            List<Violation> out) {
        Map<String, BitSet> seen = new HashMap<>();
        Map<String, BitSet> repeated = new HashMap<>();
        Map<String, BitSet> asPart = new HashMap<>();
        Map<String, Integer> last = new HashMap<>();
        List<Stored> outOfOrder = new ArrayList<>();
        for (Stored m : messages) {
            String[] id = m.payload().split("/", 3);
            Produced p = id.length < 2 ? null : produced.get(id[0]);
            if (p == null || !id[1].matches("\\d{1,9}") || !p.sent().get(Integer.parseInt(id[1]))) {
                String shown = m.payload().length() > 40 ? m.payload().substring(0, 40) + "…" : m.payload();
                out.add(new Violation(Rule.NEVER_SENT, "never sent '" + shown + "' on " + cluster, "'" + shown
                        + "' stored on " + cluster + " at " + m.position() + " was never sent"));
                continue;
            }
            String origin = id[0];
            int counter = Integer.parseInt(id[1]);
            BitSet s = seen.computeIfAbsent(origin, o -> new BitSet());
            boolean repeat = s.get(counter);
            if (repeat) {
                repeated.computeIfAbsent(origin, o -> new BitSet()).set(counter);
            }
            s.set(counter);
            if (m.part()) {
                asPart.computeIfAbsent(origin, o -> new BitSet()).set(counter);
            }
            if (m.key() != null && p.acknowledged().get(counter)) {
                String k = origin + "|" + m.key();
                Integer previous = last.get(k);
                if (previous != null && counter < previous && !repeat) {
                    outOfOrder.add(m);
                }
                if (previous == null || counter > previous) {
                    last.put(k, counter);
                }
            }
        }
        repeated.forEach((origin, counters) -> {
            BitSet fastOnly = (BitSet) counters.clone();
            fastOnly.andNot(asPart.getOrDefault(origin, new BitSet()));
            for (int c = fastOnly.nextSetBit(0); c >= 0; c = fastOnly.nextSetBit(c + 1)) {
                out.add(new Violation(Rule.DUPLICATE, "duplicate " + origin + "/" + c + " on " + cluster, origin + "/" + c
                        + " is stored more than once on " + cluster + ", no copy through the slow path"));
            }
        });
        for (Stored m : outOfOrder) {
            String[] id = m.payload().split("/", 3);
            if (!repeated.getOrDefault(id[0], new BitSet()).get(Integer.parseInt(id[1]))) {
                out.add(new Violation(Rule.ORDER, "order " + id[0] + "/" + id[1] + " on " + cluster, "on " + cluster
                        + ", key " + m.key() + " from " + id[0] + ": message " + id[1] + " (at " + m.position()
                        + ") after a later one"));
            }
        }
        return seen;
    }
}
