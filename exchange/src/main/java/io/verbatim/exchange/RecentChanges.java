package io.verbatim.exchange;

import io.verbatim.model.Layout;
import io.verbatim.model.Mutation;
import io.verbatim.model.Outcome;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Per topic its latest layout changes on this cluster (what, why and when), newest last, at most
 * {@link #RECENT_CHANGES}: for the status page.
 */
final class RecentChanges {
    static final int RECENT_CHANGES = 32;

    private final Map<String, Deque<LayoutChange>> byTopic = new ConcurrentHashMap<>();

    /**
     * Notes the changes applied to {@code before} (at epoch {@code firstEpoch}), committed at
     * {@code committedAtMs}; of a long batch only the last {@link #RECENT_CHANGES} are described (the rest
     * applied at once, linearly).
     */
    void record(String topic, long firstEpoch, List<Mutation> mutations, List<String> reasons, Layout before,
            long committedAtMs) {
        int skipped = Math.max(0, mutations.size() - RECENT_CHANGES);
        Layout working = skipped == 0 ? before
                : before.applyAll(mutations.subList(0, skipped), before.epoch(), 0L).layoutOrThrow();
        Deque<LayoutChange> recent = byTopic.computeIfAbsent(topic, t -> new ArrayDeque<>());
        synchronized (recent) {
            for (int i = skipped; i < mutations.size(); i++) {
                recent.addLast(LayoutChange.of(firstEpoch + i + 1, mutations.get(i), working, reasons.get(i),
                        committedAtMs));
                Outcome o = working.apply(mutations.get(i), working.epoch(), 0L);
                working = o instanceof Outcome.Applied a ? a.layout() : working;
                while (recent.size() > RECENT_CHANGES) {
                    recent.removeFirst();
                }
            }
        }
    }

    /** The topic's latest changes, oldest first. */
    List<LayoutChange> of(String topic) {
        Deque<LayoutChange> recent = byTopic.get(topic);
        if (recent == null) {
            return List.of();
        }
        synchronized (recent) {
            return List.copyOf(recent);
        }
    }
}
