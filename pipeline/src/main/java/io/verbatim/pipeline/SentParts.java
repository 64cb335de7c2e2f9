package io.verbatim.pipeline;

import java.util.BitSet;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * One slow-path entry's plan under one layout epoch (the messages left out of it, each part's messages by
 * destination segment and part number) and what the remote took: parts of this plan, and messages of every plan
 * so far.
 */
final class SentParts {
    final long epoch;
    final BitSet excluded;
    private final Map<PartKey, BitSet> partMessages = new HashMap<>();
    private final Set<PartKey> takenParts = new HashSet<>();
    private final BitSet takenMessages;

    SentParts(long epoch, BitSet excluded) {
        this.epoch = epoch;
        this.excluded = (BitSet) excluded.clone();
        this.takenMessages = (BitSet) excluded.clone();
    }

    synchronized void planned(List<Rebatcher.Part> parts) {
        for (Rebatcher.Part part : parts) {
            partMessages.put(new PartKey(part.destination().id(), part.index()), part.messages());
        }
    }

    /** The plan under {@code newEpoch}: without what the remote took. */
    synchronized SentParts next(long newEpoch) {
        return new SentParts(newEpoch, takenMessages);
    }

    synchronized boolean contains(long segmentId, int part) {
        return takenParts.contains(new PartKey(segmentId, part));
    }

    synchronized void take(long segmentId, int part) {
        PartKey key = new PartKey(segmentId, part);
        takenParts.add(key);
        BitSet messages = partMessages.get(key);
        if (messages != null) {
            takenMessages.or(messages);
        }
    }

    /** A part by its destination segment and number (its bucket there). */
    private record PartKey(long segmentId, int part) {
    }
}
