package io.verbatim.exchange;

import io.verbatim.model.Shape;
import java.time.Duration;
import java.util.Collection;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Per topic, how many of the peers' cells the local layout does not refine yet (R-F's gauge) and since
 * when (the convergence lag of E11), as of each topic's latest fold. Only topics that diverge are held:
 * a large fleet's topics mostly converge, and an entry per topic costs memory.
 */
final class Convergence {
    private final Map<String, Integer> divergedByTopic = new ConcurrentHashMap<>();
    /** topic → when a peer state we do not yet refine arrived. */
    private final Map<String, Long> divergedSinceNanos = new ConcurrentHashMap<>();

    /**
     * Counts what {@code local} does not refine of {@code states} after a fold at {@code nowNanos}.
     *
     * @return the lag that just ended, in nanoseconds, when the topic converged with this fold
     */
    OptionalLong afterFold(String topic, Shape local, ColdMarks exchanged, Collection<PeerState> states,
            long nowNanos) {
        Set<Integer> agreed = Divergence.agreed(local, exchanged, states);
        int diverged = 0;
        for (PeerState s : states) {
            diverged += Divergence.divergedCells(local, Divergence.comparable(s.shape(), agreed));
        }
        if (diverged != 0) {
            divergedByTopic.put(topic, diverged);
            divergedSinceNanos.putIfAbsent(topic, nowNanos);
            return OptionalLong.empty();
        }
        divergedByTopic.remove(topic);
        Long since = divergedSinceNanos.remove(topic);
        return since == null ? OptionalLong.empty() : OptionalLong.of(nowNanos - since);
    }

    /** Diverged cells over every topic and peer. */
    int divergedRangesNow() {
        return divergedByTopic.values().stream().mapToInt(Integer::intValue).sum();
    }

    /** How long the topic has diverged as of {@code nowNanos}; zero when it has converged. */
    Duration lag(String topic, long nowNanos) {
        Long since = divergedSinceNanos.get(topic);
        return since == null ? Duration.ZERO : Duration.ofNanos(Math.max(0, nowNanos - since));
    }
}
