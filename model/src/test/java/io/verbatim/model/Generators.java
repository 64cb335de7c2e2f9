package io.verbatim.model;

import java.util.List;
import java.util.Random;

/** Random layouts, keys and shapes for property tests. */
public final class Generators {
    private Generators() {
    }

    /** A key of 0..24 code points drawn from ASCII, Latin-1, CJK and astral planes. */
    public static String key(Random r) {
        int length = r.nextInt(25);
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < length; i++) {
            int kind = r.nextInt(10);
            int cp;
            if (kind < 6) {
                cp = 0x20 + r.nextInt(0x5f);
            } else if (kind < 8) {
                cp = 0xa0 + r.nextInt(0x700);
            } else if (kind < 9) {
                cp = 0x4e00 + r.nextInt(0x5000);
            } else {
                cp = 0x1f300 + r.nextInt(0x300);
            }
            sb.appendCodePoint(cp);
        }
        return sb.toString();
    }

    /** A power-of-two bucket count up to 64, or sometimes any count up to 12 (refused when not a power of two). */
    public static int bucketCount(Random r) {
        return r.nextInt(4) == 0 ? 1 + r.nextInt(12) : 1 << r.nextInt(7);
    }

    /** A layout reached from an initial one by {@code steps} random valid mutations. */
    public static Layout evolvedLayout(Random r, int steps) {
        Layout layout = Layout.initial(1 + r.nextInt(4), 1 << r.nextInt(4), 0);
        for (int i = 0; i < steps; i++) {
            Mutation m = randomMutation(r, layout);
            Outcome o = layout.apply(m, layout.epoch(), i);
            if (o instanceof Outcome.Applied applied) {
                layout = applied.layout();
            }
        }
        return layout;
    }

    /** A mutation on a random active segment, which may well be refused. */
    public static Mutation randomMutation(Random r, Layout layout) {
        List<Segment> active = layout.activeSegments();
        Segment s = active.get(r.nextInt(active.size()));
        if (r.nextInt(8) == 0) {
            List<Segment> sealed = layout.segments().values().stream().filter(Segment::isSealed).toList();
            if (!sealed.isEmpty()) {
                return Mutation.prune(sealed.get(r.nextInt(sealed.size())).id());
            }
        }
        switch (r.nextInt(6)) {
            case 0:
            case 1:
                return Mutation.split(s.id());
            case 2:
                return Mutation.splitAt(s.id(), s.range().start() + r.nextInt(s.range().size()));
            case 3:
                return Mutation.rebucket(s.id(), bucketCount(r));
            default:
                int i = active.indexOf(s);
                Segment next = active.get((i + 1) % active.size());
                return r.nextBoolean() ? Mutation.merge(s.id(), next.id()) : Mutation.mergeSiblings(s.id(), next.id());
        }
    }

    /** A layout that only ever split at midpoints and merged siblings from one initial layout. */
    public static Layout nestingLayout(Random r, Layout initial, int steps) {
        Layout layout = initial;
        for (int i = 0; i < steps; i++) {
            List<Segment> active = layout.activeSegments();
            Segment s = active.get(r.nextInt(active.size()));
            Mutation m;
            int kind = r.nextInt(5);
            if (kind < 3) {
                m = Mutation.split(s.id());
            } else if (kind == 3) {
                m = Mutation.rebucket(s.id(), Math.min(Buckets.MAX_COUNT, s.buckets().count() * 2));
            } else {
                Segment next = active.get((active.indexOf(s) + 1) % active.size());
                m = Mutation.mergeSiblings(s.id(), next.id());
            }
            Outcome o = layout.apply(m, layout.epoch(), i);
            if (o instanceof Outcome.Applied applied) {
                layout = applied.layout();
            }
        }
        return layout;
    }
}
