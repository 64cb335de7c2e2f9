package io.verbatim.bench;

import io.verbatim.layoutstore.InMemoryLayoutStore;
import io.verbatim.model.Join;
import io.verbatim.model.Layout;
import io.verbatim.model.Mutation;
import io.verbatim.model.Segment;
import io.verbatim.model.Shape;
import java.util.List;

/**
 * A fleet of topics held by two clusters, {@code a} and {@code b}: realistic names, four segments each,
 * and on three topics in ten the two sides' layouts differ (split on a; rebucketed on b; or both, on
 * other segments), as they do after local changes that have not been exchanged yet. Deterministic.
 */
final class Fleet {
    private static final String[] KINDS = {"orders", "payments", "clicks", "inventory", "audit", "shipments"};
    private static final Layout BASE = Layout.initial(4, 16, 0);

    final int size;
    private final String[] names;

    Fleet(int size) {
        this.size = size;
        this.names = new String[size];
        for (int i = 0; i < size; i++) {
            names[i] = "persistent://tenant-" + (i % 40) + "/namespace-" + (i / 40 % 8) + "/" + KINDS[i % KINDS.length]
                    + "-" + String.format("%06d", i);
        }
    }

    /** E.g. {@code persistent://tenant-17/namespace-3/orders-000042}. */
    String name(int i) {
        return names[i];
    }

    /** How topic {@code i} stands on cluster {@code a}. */
    static Layout a(int i) {
        return switch (i % 10) {
            case 7, 9 -> apply(BASE, Mutation.split(segment(BASE, i)));
            default -> BASE;
        };
    }

    /** How topic {@code i} stands on cluster {@code b}. */
    static Layout b(int i) {
        return switch (i % 10) {
            case 8 -> apply(BASE, Mutation.rebucket(segment(BASE, i), 8));
            case 9 -> {
                Layout l = apply(BASE, Mutation.rebucket(segment(BASE, i + 1), 16));
                yield apply(l, Mutation.split(segment(l, i + 2)));
            }
            default -> BASE;
        };
    }

    /** Whether the two sides differ on topic {@code i}. */
    static boolean differs(int i) {
        return i % 10 >= 7;
    }

    /** What both sides must reach: the join of their layouts. */
    static Shape join(int i) {
        return Join.of(Shape.of(a(i)), Shape.of(b(i)));
    }

    void fill(InMemoryLayoutStore store, boolean sideA) {
        for (int i = 0; i < size; i++) {
            store.create(names[i], sideA ? a(i) : b(i)).block();
        }
    }

    private static long segment(Layout l, int i) {
        List<Segment> active = l.activeSegments();
        return active.get(i % active.size()).id();
    }

    private static Layout apply(Layout l, Mutation m) {
        return l.apply(m, l.epoch(), 0).layoutOrThrow();
    }
}
