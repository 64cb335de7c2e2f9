package io.verbatim.model;

import java.util.ArrayList;
import java.util.List;

/**
 * What a storage does to take a newer layout, the way PIP-468's controller materialises one: first
 * {@link #create} the segments it lacks (each with a replication cursor per peer at its first entry, so
 * nothing written before a replicator starts is missed), then {@link #seal} the ones the layout seals, then
 * {@link #prune} the ones it no longer has (deleted by garbage collection); only then publish the layout.
 * Both storages follow it: the embedded one on its logs, the Pulsar one on its segment topics.
 *
 * <p>The order is the point: a child exists before its parent is sealed, so a producer re-routed by the
 * seal always finds it; and a pruned parent is still there while its new children are made, so a child can
 * take what it inherits from it (the embedded storage's deduplication marks). Pure: a function of the two
 * layouts.
 *
 * @param create the segments to make, in id order, which puts parents before their children (ids only grow);
 *     each as {@code next} has it, with its {@link Segment#parentIds()}
 * @param seal the segments {@code next} seals that were open (or new) before, in id order; a new segment the
 *     layout already sealed is in both {@code create} and {@code seal}
 * @param prune the segments {@code next} no longer has, in id order, as the held layout had them
 */
public record AdoptionPlan(List<Segment> create, List<Segment> seal, List<Segment> prune) {
    /** Nothing to do. */
    public static final AdoptionPlan EMPTY = new AdoptionPlan(List.of(), List.of(), List.of());

    public AdoptionPlan {
        create = List.copyOf(create);
        seal = List.copyOf(seal);
        prune = List.copyOf(prune);
    }

    /**
     * What a storage that holds nothing of the topic yet does to take {@code layout}: every segment made, the
     * sealed ones sealed, nothing pruned.
     */
    public static AdoptionPlan of(Layout layout) {
        List<Segment> create = new ArrayList<>(layout.segments().values());
        List<Segment> seal = create.stream().filter(Segment::isSealed).toList();
        return new AdoptionPlan(create, seal, List.of());
    }

    /**
     * What a storage that holds {@code current} does to hold {@code next}. A segment {@code current} lacks is
     * made only when it is newer than {@code current} (created after its epoch): one created at or before that
     * epoch and missing from it was pruned already, and is never made again. From a layout to itself, nothing.
     * Whether {@code next} is newer at all is the caller's question (a storage ignores a layout not newer than
     * the one it holds).
     */
    public static AdoptionPlan between(Layout current, Layout next) {
        List<Segment> create = new ArrayList<>();
        List<Segment> seal = new ArrayList<>();
        for (Segment s : next.segments().values()) {
            Segment held = current.segments().get(s.id());
            boolean made = held == null && s.createdAtEpoch() > current.epoch();
            if (made) {
                create.add(s);
            }
            if (s.isSealed() && (made || (held != null && held.isActive()))) {
                seal.add(s);
            }
        }
        List<Segment> prune = current.segments().values().stream()
                .filter(s -> !next.segments().containsKey(s.id())).toList();
        return new AdoptionPlan(create, seal, prune);
    }

    /** Whether there is nothing to do. */
    public boolean isEmpty() {
        return create.isEmpty() && seal.isEmpty() && prune.isEmpty();
    }
}
