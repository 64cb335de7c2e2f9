package io.verbatim.pulsar;

import io.verbatim.model.HashRange;
import io.verbatim.model.Segment;
import io.verbatim.model.entry.SourcePosition;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;
import java.util.function.LongFunction;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

/**
 * What the sealed ancestors of a destination segment stored of one source segment's replicated entries, and the
 * rule that tells from it whether what an entry carries to the segment is stored there already (pure).
 *
 * <p>The broker deduplicates per topic: a segment's children know nothing of what their parent took. A replicator
 * that sent entries to a segment and did not see them answered (it was killed, restarted, handed over, or Pulsar's
 * client reported a send refused as terminated that the broker stored) sends them again from its cursor, by the
 * destination's layout of then: to the sealed segment's children. Without this rule they would be stored twice.
 *
 * <p>The rule rests on what the replicator and the broker keep:
 * <ul>
 *   <li>one producer name per source segment, sends to a topic in source order, a session broken at its first
 *       failure: what a topic stored of a producer is a prefix of what was sent to it. Pulsar #26113 breaks that
 *       (an entry the broker refused while a later one in flight was stored); the session's guard knows of such a
 *       refusal in its own process only, and then does not skip the entry ({@code PulsarProducerSession});</li>
 *   <li>nothing sent under a new destination layout before everything sent under the old one settled
 *       ({@code SegmentReplicator}), so an ancestor activated later holds only later entries of the producer;</li>
 *   <li>an entry's messages go to the segments whose ranges hold their routing hashes, all within its span: the
 *       point of a single message's key, else the source segment's range.</li>
 * </ul>
 * So what an entry carries to a segment is stored in a parent whose range holds its span once that parent stored
 * the entry or a later one of the producer (its highest position, from the broker's last dedup snapshot), or once
 * that parent's own parents hold it. Where no parent holds the span (a merge of segments a batch straddled), it is
 * stored once every parent overlapping the span holds it. Sessions to different segments fail apart, so one parent
 * past the entry says nothing of another. Besides, an entry read whole in an ancestor's tail (after that snapshot) is
 * stored. An ancestor not read (unknown, deleted, or past the walk's bound) holds nothing as far as the rule knows:
 * at worst an entry is stored twice, never is one left out.
 *
 * <p>Parts (the slow path) are numbered by the buckets of the layout they were cut for, so positions are compared as
 * whole entries: a parent past the whole entry holds every part it was sent of it.
 *
 * <p>Also assumed: a keyed message's routing hash lies in its source segment's range (what a PIP-486 producer
 * writes), and the broker's snapshot never claims more than it stored (Pulsar 4.0.7 records a replicator's ledger and
 * entry as two map entries, so a snapshot taken between the two puts as the source switches ledgers could pair a new
 * ledger with an old, larger entry id; not seen, not guarded).
 */
final class SealedLineage {
    /** No sealed ancestor: nothing is stored elsewhere. */
    static final SealedLineage NONE = new SealedLineage(List.of(), Map.of());
    /** The deepest line of ancestors the rule follows. */
    static final int MAX_DEPTH = 32;

    /**
     * A sealed ancestor as read.
     *
     * @param highest the highest position of the replicator's producer the broker's last dedup snapshot of the topic
     *        holds, if it holds one
     * @param tail the whole entries of the source cluster stored after that snapshot
     * @param read whether the topic was read: false for one deleted, so its entries are unknown
     */
    record Ancestor(long id, HashRange range, List<Long> parents, Optional<SourcePosition> highest,
            Set<SourcePosition> tail, boolean read) {
        Ancestor {
            parents = List.copyOf(parents);
            tail = Set.copyOf(tail);
        }

        /** An ancestor whose topic is gone: it is known by its range and parents only. */
        static Ancestor unread(long id, HashRange range, List<Long> parents) {
            return new Ancestor(id, range, parents, Optional.empty(), Set.of(), false);
        }

        /** Whether {@code whole} is at or below {@link #highest}. */
        boolean reaches(SourcePosition whole) {
            return highest.isPresent() && whole.compareTo(highest.get()) <= 0;
        }
    }

    private final List<Long> parents;
    private final Map<Long, Ancestor> ancestors;
    /** The highest entry any ancestor holds (null: none): nothing above it is covered. */
    private final @Nullable SourcePosition ceiling;

    /**
     * @param parents the destination segment's parents
     * @param ancestors the ancestors read, by id
     */
    SealedLineage(List<Long> parents, Map<Long, Ancestor> ancestors) {
        this.parents = List.copyOf(parents);
        this.ancestors = Map.copyOf(ancestors);
        SourcePosition top = null;
        for (Ancestor a : this.ancestors.values()) {
            for (SourcePosition p : a.tail()) {
                top = top == null || p.compareTo(top) > 0 ? p : top;
            }
            if (a.highest().isPresent()) {
                SourcePosition h = whole(a.highest().get());
                top = top == null || h.compareTo(top) > 0 ? h : top;
            }
        }
        this.ceiling = top;
    }

    /**
     * Whether what the entry at {@code position} (a whole entry, or a part of it) carries to this segment is stored in
     * a sealed ancestor. {@code span} is where the entry's messages route: the point of a single message's key, else
     * the source range (asked only for an entry at or below what an ancestor holds).
     */
    boolean covers(SourcePosition position, Supplier<HashRange> span) {
        if (ceiling == null) {
            return false;
        }
        SourcePosition whole = whole(position);
        if (whole.compareTo(ceiling) > 0) {
            return false;
        }
        for (Ancestor a : ancestors.values()) {
            if (a.tail().contains(whole)) {
                return true;
            }
        }
        return held(parents, whole, span.get(), 0);
    }

    /**
     * Reads the sealed ancestors of {@code segment} that can hold entries of the replicator of {@code source}, each
     * through {@code read}, one at a time, nearest first: its parents overlapping {@code source}, and theirs, at most
     * {@code most}. A segment {@code segments} does not know (pruned) is not read. None stops the walk early: an
     * ancestor may hold later entries than its child, which skipped them as stored there.
     */
    static Mono<SealedLineage> walk(Segment segment, LongFunction<Optional<Segment>> segments, HashRange source,
            int most, Function<Segment, Mono<Ancestor>> read) {
        if (segment.parentIds().isEmpty()) {
            return Mono.just(NONE);
        }
        Map<Long, Ancestor> found = new LinkedHashMap<>();
        Set<Long> asked = new HashSet<>();
        Deque<Segment> next = new ArrayDeque<>();
        enqueue(segment.parentIds(), segments, source, asked, next, found);
        return Mono.defer(() -> {
                    Segment ancestor = next.poll();
                    if (ancestor == null || found.size() - unread(found) >= most) {
                        return Mono.just(false);
                    }
                    return read.apply(ancestor).map(a -> {
                        found.put(a.id(), a);
                        enqueue(ancestor.parentIds(), segments, source, asked, next, found);
                        return true;
                    });
                })
                .repeat()
                .takeWhile(more -> more)
                .then(Mono.fromCallable(() -> new SealedLineage(segment.parentIds(), found)));
    }

    /** Queues the known segments {@code ids} that overlap {@code source}; the others hold nothing of it. */
    private static void enqueue(List<Long> ids, LongFunction<Optional<Segment>> segments, HashRange source,
            Set<Long> asked, Deque<Segment> next, Map<Long, Ancestor> found) {
        for (long id : ids) {
            Optional<Segment> known = asked.add(id) ? segments.apply(id) : Optional.empty();
            if (known.isPresent() && known.get().range().overlaps(source)) {
                next.add(known.get());
            } else if (known.isPresent()) {
                found.put(id, Ancestor.unread(id, known.get().range(), known.get().parentIds()));
            }
        }
    }

    /** The number of ancestors read. */
    int size() {
        return ancestors.size() - unread(ancestors);
    }

    /** The ids of the ancestors read. */
    List<Long> readIds() {
        return ancestors.values().stream().filter(Ancestor::read).map(Ancestor::id).sorted().toList();
    }

    private static int unread(Map<Long, Ancestor> ancestors) {
        int n = 0;
        for (Ancestor a : ancestors.values()) {
            n += a.read() ? 0 : 1;
        }
        return n;
    }

    /** Whether the segments {@code ids} (the parents of one segment) hold what {@code whole} routes to them. */
    private boolean held(List<Long> ids, SourcePosition whole, HashRange span, int depth) {
        if (ids.isEmpty() || depth >= MAX_DEPTH) {
            return false;
        }
        List<Ancestor> overlapping = new ArrayList<>();
        boolean unknown = false;
        for (long id : ids) {
            Ancestor a = ancestors.get(id);
            if (a == null) {
                unknown = true; // not read: neither its range nor what it holds is known
            } else if (a.range().contains(span)) {
                return holds(a, whole, span, depth); // all of the entry went into this one's line
            } else if (a.range().overlaps(span)) {
                overlapping.add(a);
            }
        }
        if (unknown || overlapping.isEmpty()) {
            return false;
        }
        for (Ancestor a : overlapping) {
            if (!holds(a, whole, span, depth)) {
                return false;
            }
        }
        return true;
    }

    private boolean holds(Ancestor a, SourcePosition whole, HashRange span, int depth) {
        return a.reaches(whole) || held(a.parents(), whole, span, depth + 1);
    }

    private static SourcePosition whole(SourcePosition position) {
        return position.isWhole() ? position : SourcePosition.of(position.ledgerId(), position.entryId());
    }
}
