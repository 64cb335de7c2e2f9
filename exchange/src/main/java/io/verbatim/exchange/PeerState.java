package io.verbatim.exchange;

import io.verbatim.model.Layout;
import io.verbatim.model.Shape;
import java.util.Set;

/**
 * What one cluster tells its peers about one topic (PIP-495's exchanged state): its layout's shape
 * (boundaries and bucket counts), the boundaries its policy would merge (cold marks), its caps, and the
 * epoch that orders its states.
 */
public record PeerState(String cluster, String topic, long epoch, Shape shape, Set<Integer> coldMarks, Caps caps) {

    public PeerState {
        coldMarks = Set.copyOf(coldMarks);
        if (epoch < 0) {
            throw new IllegalArgumentException("epoch " + epoch + " of " + cluster + "/" + topic + " is negative");
        }
    }

    public static PeerState of(String cluster, String topic, Layout layout, Set<Integer> coldMarks, Caps caps) {
        return new PeerState(cluster, topic, layout.epoch(), Shape.of(layout), coldMarks, caps);
    }

    /** True when this state marks {@code boundary} cold or no longer has it. */
    boolean agreesToRemove(int boundary) {
        return coldMarks.contains(boundary) || !shape.boundaries().contains(boundary);
    }
}
