package io.verbatim.exchange;

import io.verbatim.model.HashRange;
import io.verbatim.model.Shape;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.LongSupplier;

/**
 * One topic's cold marks on this cluster, from three sources: an operator's (a manual merge or
 * rebucket-down, kept until withdrawn or settled), the local policy's (soft state: replaced wholesale
 * on every evaluation, so a range that turns hot loses its mark), and the caps' (recomputed by every
 * fold). What the cluster exchanges is their union. Every change answers whether anything changed, so
 * the caller pushes only on real changes.
 *
 * <p>The unions are made once per change, not on every read: every fold and every state sent reads
 * them, and the same object until a change lets a fold of an unchanged topic see at once that its
 * marks did not move.
 */
final class TopicMarks {
    private final Set<Integer> manual = new HashSet<>();
    private final Map<HashRange, Integer> manualBuckets = new HashMap<>();
    private Set<Integer> policy = Set.of();
    private ColdMarks caps = ColdMarks.NONE;
    private ColdMarks own = ColdMarks.NONE;
    private ColdMarks exchanged = ColdMarks.NONE;
    private final LongSupplier versions;
    private long version;

    /** @param versions the cluster's marks versions: the first is this topic's, each change takes the next */
    TopicMarks(LongSupplier versions) {
        this.versions = versions;
        this.version = versions.getAsLong();
    }

    /** Raised on every change of what is exchanged (what orders this cluster's states of one epoch). */
    synchronized long version() {
        return version;
    }

    /** Everything this cluster offers to coarsen: what a peer is told. */
    synchronized ColdMarks exchanged() {
        return exchanged;
    }

    /** The operator's and the policy's marks, without the caps' (which every fold derives afresh). */
    synchronized ColdMarks own() {
        return own;
    }

    /** Makes the unions again after a change; answers {@code changed}. */
    private boolean remade(boolean changed) {
        if (changed) {
            own = new ColdMarks(manual, manualBuckets).union(ColdMarks.ofBoundaries(policy));
            exchanged = own.union(caps);
            version = versions.getAsLong();
        }
        return changed;
    }

    synchronized boolean markManual(int boundary) {
        return remade(manual.add(boundary));
    }

    synchronized boolean withdrawManual(int boundary) {
        return remade(manual.remove(boundary));
    }

    synchronized boolean markBuckets(HashRange range, int count) {
        return remade(!Objects.equals(manualBuckets.put(range, count), count));
    }

    synchronized boolean withdrawBuckets(HashRange range) {
        return remade(manualBuckets.remove(range) != null);
    }

    synchronized Set<Integer> policy() {
        return policy;
    }

    synchronized boolean policy(Set<Integer> marks) {
        if (policy.equals(marks)) {
            return false;
        }
        policy = Collections.unmodifiableSortedSet(new TreeSet<>(marks));
        return remade(true);
    }

    synchronized boolean caps(ColdMarks marks) {
        if (caps.equals(marks)) {
            return false;
        }
        caps = marks;
        return remade(true);
    }

    /**
     * Forgets the operator's marks nobody needs any more: a boundary neither this cluster nor any peer
     * has, a lowering every cluster has done. Only once every peer's state is held.
     */
    synchronized void forgetSettled(Shape local, Collection<PeerState> states, boolean everyPeerHeld) {
        if (!everyPeerHeld) {
            return;
        }
        boolean forgot = manual.removeIf(b -> !local.boundaries().contains(b)
                && states.stream().noneMatch(s -> s.shape().boundaries().contains(b)));
        forgot |= manualBuckets.entrySet().removeIf(m -> local.bucketsOver(m.getKey()) <= m.getValue()
                && states.stream().allMatch(s -> s.shape().bucketsOver(m.getKey()) <= m.getValue()));
        remade(forgot);
    }

    /** The marks by source, for the status and the admin API (boundaries and ranges in hex). */
    synchronized MarksBySource describe() {
        Map<String, Integer> lowerings = new TreeMap<>();
        manualBuckets.forEach((r, n) -> lowerings.put(r.toHexString(), n));
        caps.buckets().forEach((r, n) -> lowerings.merge(r.toHexString(), n, Math::max));
        return new MarksBySource(hex(manual), hex(policy), hex(caps.boundaries()), lowerings);
    }

    private static Set<String> hex(Set<Integer> boundaries) {
        Set<String> out = new TreeSet<>();
        boundaries.forEach(b -> out.add(String.format("%04x", b)));
        return out;
    }
}
