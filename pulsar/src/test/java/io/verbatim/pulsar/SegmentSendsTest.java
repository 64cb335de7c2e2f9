package io.verbatim.pulsar;

import static org.assertj.core.api.Assertions.assertThat;

import io.verbatim.model.entry.Message;
import io.verbatim.model.entry.SourcePosition;
import io.verbatim.pulsar.SegmentSends.Sent;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionException;
import org.apache.pulsar.client.api.PulsarClientException;
import org.apache.pulsar.client.impl.BatchMessageIdImpl;
import org.apache.pulsar.client.impl.MessageIdImpl;
import org.junit.jupiter.api.Test;

/** A segment's sends decided: stored, failed, or sealed with what is certain and what the sealed topic must tell. */
class SegmentSendsTest {
    private static final PulsarClientException TERMINATED = new PulsarClientException.TopicTerminatedException("t");

    private static Message m(String payload) {
        return Message.of("k", payload.getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void everySendStoredIsWrittenAtItsEntryOnceAndADuplicateAnswerAtNone() {
        var outcome = SegmentSends.decide(List.of(
                new Sent(m("a"), 5, new BatchMessageIdImpl(3, 7, -1, 0), null),
                new Sent(m("b"), 6, new BatchMessageIdImpl(3, 7, -1, 1), null),
                new Sent(m("c"), 7, new MessageIdImpl(-1, -1, -1), null)));
        assertThat(outcome).isEqualTo(new SegmentSends.Written(
                List.of(SourcePosition.of(3, 7), SourcePosition.of(3, 7))));
    }

    @Test
    void aFailureOtherThanASealFailsTheWholeSegmentsPart() {
        var timeout = new PulsarClientException.TimeoutException("slow");
        var outcome = SegmentSends.decide(List.of(
                new Sent(m("a"), 5, new MessageIdImpl(3, 7, -1), null),
                new Sent(m("b"), 6, null, TERMINATED),
                new Sent(m("c"), 7, null, timeout)));
        assertThat(outcome).isEqualTo(new SegmentSends.Failed(timeout));
    }

    @Test
    void aSendRefusedAsSealedAfterItWasIssuedIsUncertainAndOneNeverIssuedIsUnsent() {
        Sent stored = new Sent(m("a"), 5, new MessageIdImpl(3, 7, -1), null);
        Sent refused = new Sent(m("b"), 6, null, new CompletionException(TERMINATED));
        Sent neverIssued = new Sent(m("c"), -1, null, new PulsarClientException.TopicDoesNotExistException("gone"));
        var outcome = SegmentSends.decide(List.of(stored, refused, neverIssued));
        assertThat(outcome).isEqualTo(new SegmentSends.Sealed(List.of(SourcePosition.of(3, 7)), List.of(refused),
                List.of(neverIssued.message())));
        assertThat(((SegmentSends.Sealed) outcome).uncertainSequenceIds()).containsExactly(6L);
    }

    @Test
    void whatTheSealedTopicHoldsIsWrittenThereAndOnlyTheRestGoesAgainInItsOrder() {
        Sent a = new Sent(m("a"), 6, null, TERMINATED);
        Sent b = new Sent(m("b"), 7, null, TERMINATED);
        Sent c = new Sent(m("c"), 8, null, TERMINATED);
        var sealed = new SegmentSends.Sealed(List.of(SourcePosition.of(3, 7)), List.of(a, b, c), List.of());
        var resolved = SegmentSends.resolve(sealed, Map.of(6L, SourcePosition.of(3, 8), 7L, SourcePosition.of(3, 8)));
        assertThat(resolved.written()).containsExactly(SourcePosition.of(3, 7), SourcePosition.of(3, 8),
                SourcePosition.of(3, 8));
        assertThat(resolved.again()).containsExactly(c.message());

        var none = SegmentSends.resolve(sealed, Map.of());
        assertThat(none.again()).containsExactly(a.message(), b.message(), c.message());
    }
}
