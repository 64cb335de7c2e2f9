package io.verbatim.runtime.controller;

import io.verbatim.config.AutoScaleConfig.Rates;
import io.verbatim.config.AutoScaleConfig;
import io.verbatim.exchange.Caps;
import io.verbatim.model.Buckets;
import io.verbatim.model.Layout;
import io.verbatim.model.Segment;
import io.verbatim.runtime.broker.LoadSample;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * The local policy of PIP-483 as a pure function: from a layout, each active segment's load, the
 * subscriptions' consumer count and the clocks of the last changes, at most one decision. A replicated
 * topic does not merge on its own: the policy marks the boundary between two cold siblings cold, and
 * the exchange merges it once every peer agrees (PIP-495).
 */
final class AutoScaler {
    private AutoScaler() {
    }

    /** What the policy decided, with the reason PIP-483 would give. */
    sealed interface Decision {
        record Split(long segmentId, String reason) implements Decision {
        }

        record Rebucket(List<Long> segmentIds, int bucketCount, String reason) implements Decision {
        }

        /** Offer the boundary between two cold siblings for merging (a cold mark in the exchange). */
        record MarkCold(int boundary, String reason) implements Decision {
        }

        record NoAction(String reason) implements Decision {
        }
    }

    /** When each kind of change last happened ({@link Long#MIN_VALUE}: never). */
    record Clocks(long lastSplitMs, long lastMergeMs, long lastRebucketMs) {
        static final Clocks NEVER = new Clocks(Long.MIN_VALUE, Long.MIN_VALUE, Long.MIN_VALUE);
    }

    static Decision decide(Layout layout, Map<Long, LoadSample> load, int consumers, AutoScaleConfig config,
            Caps caps, long nowMs, Clocks clocks) {
        List<Segment> active = layout.activeSegments();
        boolean splitCooling = within(clocks.lastSplitMs(), config.splitCooldown().toMillis(), nowMs);

        // 1. More consumers than segments: split the busiest, or raise the bucket count.
        if (consumers > active.size()) {
            Segment busiest = active.stream().max(Comparator.comparingDouble((Segment s) -> rates(load, s).msgRateIn())
                    .thenComparing(Segment::id, Comparator.reverseOrder())).orElseThrow();
            if (active.size() < caps.maxSegments()
                    && rates(load, busiest).msgRateIn() >= config.splitVsRebucketMinMsgRateIn()) {
                if (!splitCooling) {
                    return new Decision.Split(busiest.id(), "consumer-count");
                }
            } else {
                int capacity = active.stream().mapToInt(s -> s.buckets().count()).sum();
                if (consumers > capacity
                        && !within(clocks.lastRebucketMs(), config.rebucketCooldown().toMillis(), nowMs)) {
                    int target = Math.min(nextPowerOfTwo((consumers + active.size() - 1) / active.size()),
                            Buckets.floorCount(caps.maxEntryBucketsPerSegment()));
                    List<Long> ids = active.stream().filter(s -> s.buckets().count() < target).map(Segment::id)
                            .sorted().toList();
                    if (!ids.isEmpty()) {
                        return new Decision.Rebucket(ids, target, active.size() >= caps.maxSegments()
                                ? "at-max-segments" : "below-split-rate-floor");
                    }
                }
            }
        }

        // 2. Load split: the segment with the highest score above 1.
        if (active.size() < caps.maxSegments() && !splitCooling) {
            Segment hottest = null;
            double best = 1.0;
            for (Segment s : active) {
                double score = rates(load, s).score(config.split());
                if (score > best) {
                    best = score;
                    hottest = s;
                }
            }
            if (hottest != null) {
                return new Decision.Split(hottest.id(), dominant(rates(load, hottest), config.split()));
            }
        }

        // 3. Merge: the coldest pair of cold siblings, offered to the exchange as a cold mark.
        List<Integer> cold = coldest(layout, load, consumers, config, caps, nowMs, clocks, Set.of());
        if (!cold.isEmpty()) {
            return new Decision.MarkCold(cold.get(0), "cold");
        }
        return new Decision.NoAction(splitCooling ? "split cooldown" : "within thresholds");
    }

    /**
     * The boundaries the policy marks cold now (PIP-495: cold marks are soft state, re-derived from load
     * on every evaluation): between every pair of cold siblings, coldest pair first, as long as the merges
     * they would make keep at least {@code minSegments} segments and enough buckets for the consumers, and
     * neither side's lineage holds {@code maxDagDepth} merges. Within the merge cooldown no boundary is
     * added, but those in {@code current} that are still cold stay marked; a boundary whose sides turned
     * hot loses its mark either way.
     */
    static Set<Integer> coldBoundaries(Layout layout, Map<Long, LoadSample> load, int consumers,
            AutoScaleConfig config, Caps caps, long nowMs, Clocks clocks, Set<Integer> current) {
        return new TreeSet<>(coldest(layout, load, consumers, config, caps, nowMs, clocks, current));
    }

    /** The boundaries of {@link #coldBoundaries}, coldest pair first. */
    private static List<Integer> coldest(Layout layout, Map<Long, LoadSample> load, int consumers, AutoScaleConfig config,
            Caps caps, long nowMs, Clocks clocks, Set<Integer> current) {
        List<Segment> active = layout.activeSegments();
        boolean cooling = within(clocks.lastMergeMs(), config.mergeCooldown().toMillis(), nowMs);
        List<Segment[]> pairs = new ArrayList<>();
        for (int i = 0; i + 1 < active.size(); i++) {
            Segment a = active.get(i);
            Segment b = active.get(i + 1);
            if (layout.areSiblings(a.id(), b.id()) && cold(load, a, config, nowMs) && cold(load, b, config, nowMs)
                    && mergeDepth(layout, a.id()) < config.maxDagDepth() && mergeDepth(layout, b.id()) < config.maxDagDepth()
                    && (!cooling || current.contains(b.range().start()))) {
                pairs.add(new Segment[] {a, b});
            }
        }
        pairs.sort(Comparator.comparingDouble(p -> total(rates(load, p[0])) + total(rates(load, p[1]))));
        List<Integer> marks = new ArrayList<>();
        int segments = active.size();
        int capacity = active.stream().mapToInt(s -> s.buckets().count()).sum();
        for (Segment[] p : pairs) {
            // A merge gives N1 + N2 (a power of two within the cap): what it loses past the cap goes.
            int pair = p[0].buckets().count() + p[1].buckets().count();
            int lost = pair - Math.min(Buckets.floorCount(pair), Buckets.floorCount(caps.maxEntryBucketsPerSegment()));
            if (segments - 1 < config.minSegments() || capacity - lost < Math.min(consumers, capacity)) {
                continue;
            }
            marks.add(p[1].range().start());
            segments--;
            capacity -= lost;
        }
        return marks;
    }

    /** How many merges the segment's lineage holds (the segments it descends from that had two parents). */
    static int mergeDepth(Layout layout, long segmentId) {
        Segment s = layout.segment(segmentId).orElse(null);
        if (s == null) {
            return 0; // pruned: what it descended from is gone
        }
        int own = s.parentIds().size() > 1 ? 1 : 0;
        int deepest = 0;
        for (long parent : s.parentIds()) {
            deepest = Math.max(deepest, mergeDepth(layout, parent));
        }
        return own + deepest;
    }

    private static boolean cold(Map<Long, LoadSample> load, Segment s, AutoScaleConfig config, long nowMs) {
        LoadSample sample = load.get(s.id());
        return sample != null && sample.coldSinceMs() >= 0 && nowMs - sample.coldSinceMs() >= config.mergeWindow().toMillis()
                && sample.rates().below(config.merge());
    }

    private static Rates rates(Map<Long, LoadSample> load, Segment s) {
        LoadSample sample = load.get(s.id());
        return sample == null ? new Rates(0, 0, 0, 0) : sample.rates();
    }

    private static double total(Rates r) {
        return r.msgRateIn() + r.bytesRateIn() + r.msgRateOut() + r.bytesRateOut();
    }

    private static String dominant(Rates r, Rates t) {
        double[] scores = {r.msgRateIn() / t.msgRateIn(), r.bytesRateIn() / t.bytesRateIn(),
            r.msgRateOut() / t.msgRateOut(), r.bytesRateOut() / t.bytesRateOut()};
        String[] names = {"msgRateIn", "bytesRateIn", "msgRateOut", "bytesRateOut"};
        int best = 0;
        for (int i = 1; i < scores.length; i++) {
            if (scores[i] > scores[best]) {
                best = i;
            }
        }
        return names[best];
    }

    private static boolean within(long lastMs, long cooldownMs, long nowMs) {
        return lastMs != Long.MIN_VALUE && nowMs - lastMs < cooldownMs;
    }

    static int nextPowerOfTwo(int n) {
        return n <= 1 ? 1 : Integer.highestOneBit(n - 1) << 1;
    }
}
