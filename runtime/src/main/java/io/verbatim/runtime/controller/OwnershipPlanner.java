package io.verbatim.runtime.controller;

import io.verbatim.metadatalog.state.OwnershipCommand;
import io.verbatim.metadatalog.state.OwnershipTable;
import io.verbatim.metadatalog.state.RegisteredMember;
import io.verbatim.metadatalog.state.SegmentKey;
import io.verbatim.metadatalog.state.SegmentOwner;
import io.verbatim.model.Layout;
import io.verbatim.model.Segment;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * What the controller leader decides about segments' ownership each round, as Pulsar's load manager
 * decides bundles' owners: expire the members whose lease ran out, give every unowned segment an owner
 * (the one an expiry remembered, else its parent's so a split's children stay together, else the least
 * loaded member), move the segments of draining members away, and while the most loaded member carries
 * more than the imbalance allows, move from it to the least loaded the segment that brings the two closest
 * (the lighter of two as good), at most so many moves per interval and never a segment moved within its
 * minimum tenure. Deterministic: it goes through segments in (topic,
 * segment) order and breaks ties by member id. Pure apart from its own memory of recent moves; one thread.
 */
public final class OwnershipPlanner {
    /** At most this many commands in one change: a larger plan goes on in the next round. */
    static final int MAX_COMMANDS = 512;

    private final Settings settings;
    private final Deque<Long> recentMoves = new ArrayDeque<>();
    private final Map<SegmentKey, Long> lastMoved = new HashMap<>();

    /**
     * How the leader plans.
     *
     * @param maxMoves at most this many balancing moves per {@code moveInterval} (a drain's are not counted)
     * @param moveInterval the window {@code maxMoves} counts in
     * @param minTenure a segment given or moved is not moved again for balance within this
     * @param imbalance balance moves happen while the most loaded member carries more than
     *        {@code (1 + imbalance)} times the mean
     */
    public record Settings(int maxMoves, Duration moveInterval, Duration minTenure, double imbalance) {
        public static final Settings DEFAULTS = new Settings(8, Duration.ofSeconds(10), Duration.ofSeconds(60), 0.25);

        public Settings {
            if (maxMoves < 0 || moveInterval.isNegative() || minTenure.isNegative() || !(imbalance >= 0)) {
                throw new IllegalArgumentException("ownership planning needs maxMoves >= 0, non-negative intervals and "
                        + "imbalance >= 0 (got " + maxMoves + ", " + moveInterval + ", " + minTenure + ", " + imbalance
                        + ")");
            }
        }
    }

    /**
     * What the leader knows when it plans.
     *
     * @param table the ownership it has applied
     * @param layouts every topic's layout it has applied
     * @param live the members whose lease holds
     * @param lapsed the members whose lease ran out
     * @param bytesPerSecond each segment's replicated bytes per second, as its owner reported (absent: 0)
     * @param nowMs the leader's clock
     */
    public record Inputs(OwnershipTable table, SortedMap<String, Layout> layouts, Set<String> live, Set<String> lapsed,
            Map<SegmentKey, Long> bytesPerSecond, long nowMs) {
    }

    public OwnershipPlanner(Settings settings) {
        this.settings = settings;
    }

    /** The commands of this round, in one change; empty when nothing is to be done. */
    public List<OwnershipCommand> plan(Inputs in) {
        long now = in.nowMs();
        while (!recentMoves.isEmpty() && now - recentMoves.peekFirst() >= settings.moveInterval().toMillis()) {
            recentMoves.pollFirst();
        }
        List<OwnershipCommand> out = new ArrayList<>();
        Map<SegmentKey, Projected> view = project(in);
        for (String m : in.lapsed()) {
            boolean holds = view.values().stream().anyMatch(p -> p.expiredBy.equals(m));
            if (holds) {
                out.add(new OwnershipCommand.Expire(m));
            }
        }
        List<String> candidates = in.table().activeMembers().stream().filter(in.live()::contains).toList();
        if (candidates.isEmpty()) {
            return out;
        }
        Map<String, Long> load = new TreeMap<>();
        candidates.forEach(c -> load.put(c, 0L));
        view.forEach((k, p) -> p.carrier().ifPresent(c -> load.computeIfPresent(c, (x, l) -> l + weight(in, k))));
        fill(in, view, candidates, load, out);
        drain(in, view, candidates, load, out);
        balance(in, view, load, out);
        return out.size() > MAX_COMMANDS ? List.copyOf(out.subList(0, MAX_COMMANDS)) : out;
    }

    /** A segment as it will stand once this round's expiries applied. */
    private record Projected(SegmentKey key, Optional<SegmentOwner> record, String owner, boolean releasing,
            String preferred, String expiredBy) {
        /** The member its load counts for: its owner, or the member it is being released to. */
        Optional<String> carrier() {
            if (owner.isEmpty()) {
                return Optional.empty();
            }
            return Optional.of(releasing ? record.orElseThrow().to() : owner);
        }
    }

    private static Map<SegmentKey, Projected> project(Inputs in) {
        Map<SegmentKey, Projected> view = new TreeMap<>();
        for (Map.Entry<String, Layout> e : in.layouts().entrySet()) {
            for (Segment s : e.getValue().segments().values()) {
                SegmentKey k = new SegmentKey(e.getKey(), s.id());
                Optional<SegmentOwner> o = in.table().of(k);
                view.put(k, projected(k, o, in.lapsed()));
            }
        }
        return view;
    }

    private static Projected projected(SegmentKey k, Optional<SegmentOwner> record, Set<String> lapsed) {
        if (record.isEmpty() || record.get().phase() == SegmentOwner.Phase.UNOWNED) {
            return new Projected(k, record, "", false, record.map(SegmentOwner::preferred).orElse(""), "");
        }
        SegmentOwner o = record.get();
        if (lapsed.contains(o.owner())) {
            String preferred = o.phase() == SegmentOwner.Phase.RELEASING ? o.to() : o.owner();
            return new Projected(k, record, "", false, preferred, o.owner());
        }
        if (o.phase() == SegmentOwner.Phase.RELEASING && lapsed.contains(o.to())) {
            return new Projected(k, Optional.empty(), o.owner(), false, "", o.to());
        }
        return new Projected(k, record, o.owner(), o.phase() == SegmentOwner.Phase.RELEASING, "", "");
    }

    private static long weight(Inputs in, SegmentKey k) {
        // at least 1: with no traffic, members balance by the number of segments they hold
        return Math.max(0, in.bytesPerSecond().getOrDefault(k, 0L)) + 1;
    }

    private void fill(Inputs in, Map<SegmentKey, Projected> view, List<String> candidates, Map<String, Long> load,
            List<OwnershipCommand> out) {
        Map<SegmentKey, String> assigned = new HashMap<>();
        for (Projected p : view.values()) {
            if (!p.owner().isEmpty()) {
                continue;
            }
            String to = choose(in, p, view, assigned, candidates, load);
            assigned.put(p.key(), to);
            load.merge(to, weight(in, p.key()), Long::sum);
            lastMoved.put(p.key(), in.nowMs());
            out.add(new OwnershipCommand.Assign(p.key(), to));
        }
    }

    private static String choose(Inputs in, Projected p, Map<SegmentKey, Projected> view,
            Map<SegmentKey, String> assigned, List<String> candidates, Map<String, Long> load) {
        if (candidates.contains(p.preferred())) {
            return p.preferred();
        }
        List<Long> parents = Optional.ofNullable(in.layouts().get(p.key().topic()))
                .flatMap(l -> l.segment(p.key().segment())).map(Segment::parentIds).orElse(List.of());
        for (long parent : parents) {
            SegmentKey pk = new SegmentKey(p.key().topic(), parent);
            Projected pp = view.get(pk);
            Optional<String> owner = pp == null ? Optional.empty() : pp.carrier();
            if (owner.isEmpty()) {
                owner = Optional.ofNullable(assigned.get(pk));
            }
            if (owner.isPresent() && candidates.contains(owner.get())) {
                return owner.get();
            }
        }
        return leastLoaded(candidates, load, Set.of());
    }

    private static String leastLoaded(List<String> candidates, Map<String, Long> load, Set<String> except) {
        return candidates.stream().filter(c -> !except.contains(c))
                .min(Comparator.<String>comparingLong(c -> load.getOrDefault(c, 0L)).thenComparing(Comparator.naturalOrder()))
                .orElseThrow();
    }

    private void drain(Inputs in, Map<SegmentKey, Projected> view, List<String> candidates, Map<String, Long> load,
            List<OwnershipCommand> out) {
        Set<String> draining = new HashSet<>();
        in.table().members().values().stream().filter(m -> m.state() == RegisteredMember.State.DRAINING)
                .forEach(m -> draining.add(m.id()));
        for (Projected p : view.values()) {
            if (p.owner().isEmpty() || p.releasing() || p.record().isEmpty() || !draining.contains(p.owner())) {
                continue;
            }
            String to = leastLoaded(candidates, load, Set.of(p.owner()));
            long w = weight(in, p.key());
            load.merge(to, w, Long::sum);
            load.computeIfPresent(p.owner(), (x, l) -> l - w);
            lastMoved.put(p.key(), in.nowMs());
            out.add(new OwnershipCommand.Move(p.key(), p.record().get().epoch(), to));
        }
    }

    private void balance(Inputs in, Map<SegmentKey, Projected> view, Map<String, Long> load,
            List<OwnershipCommand> out) {
        if (load.size() < 2) {
            return;
        }
        Set<SegmentKey> moved = new HashSet<>();
        out.forEach(c -> {
            if (c instanceof OwnershipCommand.Move m) {
                moved.add(m.segment());
            }
        });
        while (recentMoves.size() < settings.maxMoves()) {
            long total = load.values().stream().mapToLong(Long::longValue).sum();
            double mean = (double) total / load.size();
            String most = load.entrySet().stream().max(Map.Entry.<String, Long>comparingByValue()
                    .thenComparing(Map.Entry.comparingByKey(Comparator.reverseOrder()))).orElseThrow().getKey();
            String least = leastLoaded(List.copyOf(load.keySet()), load, Set.of());
            long gap = load.getOrDefault(most, 0L) - load.getOrDefault(least, 0L);
            if (load.getOrDefault(most, 0L) <= mean * (1 + settings.imbalance()) || gap <= 1) {
                return;
            }
            Optional<Projected> hottest = view.values().stream()
                    .filter(p -> p.owner().equals(most) && !p.releasing() && p.record().isPresent())
                    .filter(p -> !moved.contains(p.key()))
                    .filter(p -> in.nowMs() - lastMoved.getOrDefault(p.key(), Long.MIN_VALUE / 2)
                            >= settings.minTenure().toMillis())
                    .filter(p -> weight(in, p.key()) < gap)
                    .min(Comparator.<Projected>comparingLong(p -> Math.abs(2 * weight(in, p.key()) - gap))
                            .thenComparingLong(p -> weight(in, p.key())).thenComparing(Projected::key));
            if (hottest.isEmpty()) {
                return;
            }
            Projected p = hottest.get();
            long w = weight(in, p.key());
            load.merge(least, w, Long::sum);
            load.merge(most, -w, Long::sum);
            moved.add(p.key());
            recentMoves.addLast(in.nowMs());
            lastMoved.put(p.key(), in.nowMs());
            out.add(new OwnershipCommand.Move(p.key(), p.record().get().epoch(), least));
        }
    }
}
