package io.verbatim.embedded;

import io.verbatim.model.Segment;
import io.verbatim.model.entry.SourcePosition;
import io.verbatim.pipeline.Admission;
import io.verbatim.pipeline.DestinationState;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The destination side of a {@link MemorySegments}: the deduplication and session state of each replicator
 * producer that writes to it, by {@code <segment id>/<producer name>}, each a {@link DestinationState}. Read
 * and changed under the cluster's lock.
 */
final class Destinations {
    private final Map<String, DestinationState> byKey = new ConcurrentHashMap<>();
    private volatile boolean inherit = true;

    static String key(long segmentId, String producer) {
        return segmentId + "/" + producer;
    }

    /**
     * Admits an arriving entry by the pair's rules and keeps what the admission leaves, but for a refusal
     * on a pair never stored for, which keeps no record.
     */
    Admission admit(long segmentId, String producer, long session, long seq, SourcePosition position,
            boolean sealed, boolean sessionOrder) {
        String key = key(segmentId, producer);
        DestinationState held = byKey.get(key);
        Admission admission = (held == null ? DestinationState.EMPTY : held).admit(session, seq, position, sealed,
                sessionOrder);
        if (held != null || !(admission instanceof Admission.Refused)) {
            byKey.put(key, admission.next());
        }
        return admission;
    }

    /** The entry {@code admission} let in is stored: {@code position} is the pair's mark. */
    void persisted(long segmentId, String producer, Admission admission, SourcePosition position) {
        byKey.put(key(segmentId, producer), admission.next().persisted(position));
    }

    /** A stored entry the journal replays: the pair's mark and session as they were then. */
    void recovered(long segmentId, String producer, long session, SourcePosition position) {
        byKey.compute(key(segmentId, producer), (k, d) -> (d == null ? DestinationState.EMPTY : d)
                .recovered(session, position));
    }

    /** Refuses the rest of {@code session} of the pair; a pair with no record has nothing to refuse. */
    void poison(long segmentId, String producer, long session) {
        byKey.computeIfPresent(key(segmentId, producer), (k, d) -> d.poison(session));
    }

    boolean contains(String key) {
        return byKey.containsKey(key);
    }

    void remove(String key) {
        byKey.remove(key);
    }

    /** Whether a split's (or rebucket's) child starts with its one parent's marks. */
    void inherit(boolean value) {
        inherit = value;
    }

    /** Gives {@code child} its parent's marks, when it has one parent and children inherit. */
    void inheritedBy(Segment child) {
        if (!inherit || child.parentIds().size() != 1) {
            return;
        }
        String parentPrefix = child.parentIds().get(0) + "/";
        for (Map.Entry<String, DestinationState> d : Map.copyOf(byKey).entrySet()) {
            if (d.getKey().startsWith(parentPrefix)) {
                String producer = d.getKey().substring(parentPrefix.length());
                byKey.put(key(child.id(), producer), d.getValue().inheritedByChild());
            }
        }
    }

    /** Forgets every pair of a pruned segment. */
    void dropSegment(long segmentId) {
        byKey.keySet().removeIf(k -> k.startsWith(segmentId + "/"));
    }

    /** The highest session any pair names (none: 0). */
    long highestSession() {
        return byKey.values().stream().mapToLong(DestinationState::session).max().orElse(0);
    }

    /** Every pair's state, sorted by key. */
    Map<String, DestinationState> snapshot() {
        return new TreeMap<>(byKey);
    }

    void restore(Map<String, DestinationState> states) {
        byKey.putAll(states);
    }
}
