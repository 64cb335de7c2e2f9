package io.verbatim.runtime.storage;

import io.verbatim.model.Layout;
import io.verbatim.model.Segment;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Which sealed segments of a topic on Pulsar garbage collection may delete, decided on what the broker last
 * said: a pure decision, fed by {@link PulsarTopicStorage}'s poll.
 *
 * <p>A segment is prunable when the layout holds it sealed with no parents left (roots only: the drain gate
 * never skips an ancestor), and an answer that is fresh, asked while the layout held here already had it
 * sealed (so after its topic was terminated: nothing can be written after), says every subscription on its
 * topic is drained exactly and no consumer is attached, and every cursor opening on it here had finished by then
 * (a subscription made just before the answer is in it). Message TTL does not apply: on Pulsar, backlog always pins.
 */
final class PulsarGc {
    /**
     * What the broker said of one segment's subscriptions.
     *
     * @param askedAtMs when the question was asked (the storage's timer)
     * @param sealed whether the layout held when it was asked had the segment sealed (its topic terminated)
     * @param drained whether every subscription's mark-delete position was at the topic's last entry, with no
     *        consumer attached (one not told yet that the topic ended would reconnect to it once deleted)
     */
    record Answer(long askedAtMs, boolean sealed, boolean drained) {
    }

    /**
     * The cursor openings on one segment: how many are under way, and when the last one finished (the storage's
     * timer). An answer counts only if asked after every opening finished: the broker's stats then show the
     * subscription it made.
     */
    record Opens(int underWay, long lastDoneMs) {
        static final Opens NONE = new Opens(0, Long.MIN_VALUE);

        Opens started() {
            return new Opens(underWay + 1, lastDoneMs);
        }

        Opens done(long nowMs) {
            return new Opens(Math.max(0, underWay - 1), Math.max(lastDoneMs, nowMs));
        }

        boolean before(Answer a) {
            return underWay == 0 && lastDoneMs < a.askedAtMs();
        }
    }

    private PulsarGc() {
    }

    /**
     * The segments of {@code layout} that may go, in the layout's order.
     *
     * @param answers by segment id, the broker's last answer
     * @param opens by segment id, its cursor openings (none: never opened here)
     * @param nowMs the storage timer's time
     * @param maxAgeMs how old an answer may be: an older one (the broker away, the poll stuck) decides nothing
     */
    static List<Long> prunable(Layout layout, Map<Long, Answer> answers, Map<Long, Opens> opens, long nowMs,
            long maxAgeMs) {
        List<Long> out = new ArrayList<>();
        for (Segment s : layout.segments().values()) {
            Answer a = answers.get(s.id());
            if (s.isSealed() && s.parentIds().isEmpty() && a != null && a.sealed() && a.drained()
                    && nowMs - a.askedAtMs() <= maxAgeMs && opens.getOrDefault(s.id(), Opens.NONE).before(a)) {
                out.add(s.id());
            }
        }
        return out;
    }
}
