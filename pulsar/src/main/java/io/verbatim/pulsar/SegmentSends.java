package io.verbatim.pulsar;

import io.verbatim.model.entry.Message;
import io.verbatim.model.entry.SourcePosition;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.api.PulsarClientException;
import org.apache.pulsar.client.impl.MessageIdImpl;
import org.jspecify.annotations.Nullable;

/**
 * What one segment's part of a produce call came to, decided from its sends alone (pure).
 *
 * <p>A send refused because the segment's topic is terminated (sealed) may still be stored there: Pulsar's client
 * fails every send still pending on a producer as soon as the broker refuses one as terminated, and the broker may
 * store an earlier one after that refusal (a write already at the bookies when the topic was terminated). So such a
 * send is <em>uncertain</em> until the sealed topic is read ({@link SealedTail}), while a message never handed to
 * the broker (the producer could not be made on the sealed topic) is certainly not stored.
 */
final class SegmentSends {
    private SegmentSends() {
    }

    /**
     * One message's send: its sequence id (-1: never issued, its producer could not be made or was closed first),
     * and the broker's message id or the failure.
     */
    record Sent(Message message, long sequenceId, @Nullable MessageId id, @Nullable Throwable failure) {
        boolean issued() {
            return sequenceId >= 0;
        }
    }

    /** The decision. */
    sealed interface Outcome {
    }

    /** Every message stored: the positions of their entries (none for the broker's {@code -1:-1}). */
    record Written(List<SourcePosition> positions) implements Outcome {
    }

    /**
     * The segment was sealed under the call: what was stored before, the sends it refused that it may have stored
     * nonetheless, and the messages it certainly did not get.
     */
    record Sealed(List<SourcePosition> written, List<Sent> uncertain, List<Message> unsent) implements Outcome {
        Set<Long> uncertainSequenceIds() {
            Set<Long> ids = new TreeSet<>();
            uncertain.forEach(s -> ids.add(s.sequenceId()));
            return ids;
        }
    }

    /** A failure that is not a seal: the call fails (what it sent may be stored). */
    record Failed(Throwable cause) implements Outcome {
    }

    /** What to do after a seal: the positions stored (found in the sealed topic too) and what goes again. */
    record Resolved(List<SourcePosition> written, List<Message> again) {
    }

    static Outcome decide(List<Sent> sends) {
        List<SourcePosition> written = new ArrayList<>();
        List<Sent> uncertain = new ArrayList<>();
        List<Message> unsent = new ArrayList<>();
        for (Sent s : sends) {
            if (s.failure() == null) {
                position(s.id()).ifPresent(written::add);
            } else if (!isSealed(s.failure())) {
                return new Failed(s.failure());
            } else if (s.issued()) {
                uncertain.add(s);
            } else {
                unsent.add(s.message());
            }
        }
        return uncertain.isEmpty() && unsent.isEmpty() ? new Written(written)
                : new Sealed(written, uncertain, unsent);
    }

    /**
     * {@code sealed} once the sealed topic was read: {@code stored} maps the sequence ids of the uncertain sends it
     * holds to their entries. Those are written; the others, and the unsent, go again, in the order they were sent.
     */
    static Resolved resolve(Sealed sealed, Map<Long, SourcePosition> stored) {
        List<SourcePosition> written = new ArrayList<>(sealed.written());
        List<Message> again = new ArrayList<>();
        for (Sent s : sealed.uncertain()) {
            SourcePosition at = stored.get(s.sequenceId());
            if (at != null) {
                written.add(at);
            } else {
                again.add(s.message());
            }
        }
        again.addAll(sealed.unsent());
        return new Resolved(written, again);
    }

    /**
     * Where the message went; empty for {@code -1:-1}, the broker's answer to a resend its deduplication had
     * stored already (after a reconnect): stored once, at a position this answer does not say.
     */
    static Optional<SourcePosition> position(@Nullable MessageId id) {
        if (!(id instanceof MessageIdImpl m) || m.getLedgerId() < 0 || m.getEntryId() < 0) {
            return Optional.empty();
        }
        return Optional.of(SourcePosition.of(m.getLedgerId(), m.getEntryId()));
    }

    /**
     * Refused because the segment is sealed: its topic terminated, or gone (on a node behind the others, a segment
     * their garbage collection deleted; the broker makes none on demand here). The newer layout routes elsewhere.
     */
    static boolean isSealed(Throwable e) {
        Throwable c = PulsarStorage.cause(e);
        return c instanceof PulsarClientException.TopicTerminatedException
                || c instanceof PulsarClientException.TopicDoesNotExistException;
    }
}
