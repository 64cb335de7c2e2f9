package io.verbatim.runtime;

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
 * topic is drained exactly and no consumer is attached. Message TTL does not apply: on Pulsar, backlog always pins.
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

    private PulsarGc() {
    }

    /**
     * The segments of {@code layout} that may go, in the layout's order.
     *
     * @param answers by segment id, the broker's last answer
     * @param nowMs the storage timer's time
     * @param maxAgeMs how old an answer may be: an older one (the broker away, the poll stuck) decides nothing
     */
    static List<Long> prunable(Layout layout, Map<Long, Answer> answers, long nowMs, long maxAgeMs) {
        List<Long> out = new ArrayList<>();
        for (Segment s : layout.segments().values()) {
            Answer a = answers.get(s.id());
            if (s.isSealed() && s.parentIds().isEmpty() && a != null && a.sealed() && a.drained()
                    && nowMs - a.askedAtMs() <= maxAgeMs) {
                out.add(s.id());
            }
        }
        return out;
    }
}
