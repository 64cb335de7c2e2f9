package io.verbatim.pulsar;

import static org.assertj.core.api.Assertions.assertThat;

import io.verbatim.model.entry.SourcePosition;
import io.verbatim.pulsar.SealedSends.Read;
import io.verbatim.pulsar.SealedSends.Refusal;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletionException;
import org.apache.pulsar.client.api.PulsarClientException;
import org.junit.jupiter.api.Test;

/** Which refused replicated sends a sealed topic must be asked about, and what its answer covers (pure). */
class SealedSendsTest {
    private static final PulsarClientException TERMINATED = new PulsarClientException.TopicTerminatedException("t");
    private static final SourcePosition E5 = SourcePosition.of(7, 5);
    private static final SourcePosition E6 = SourcePosition.of(7, 6);

    @Test
    void onlyAWholeEntryRefusedAsTerminatedIsUncertain() {
        assertThat(SealedSends.uncertain(TERMINATED, E5)).isTrue();
        assertThat(SealedSends.uncertain(new CompletionException(TERMINATED), E5)).as("as a future fails").isTrue();
        assertThat(SealedSends.uncertain(TERMINATED, E5.withPart(0)))
                .as("a part: numbered within its layout, so the children's part 0 is other messages").isFalse();
        assertThat(SealedSends.uncertain(new PulsarClientException.TimeoutException("slow"), E5))
                .as("not a seal: the next session on the same topic is deduplicated by the broker").isFalse();
    }

    @Test
    void eachSealedTopicIsReadOnceFromTheEarliestLastAcknowledgedEntryOfItsRefusals() {
        List<Read> reads = SealedSends.reads(List.of(
                new Refusal("parent", "east", E5, Optional.of(SourcePosition.of(40, 9))),
                new Refusal("parent", "east", E6, Optional.of(SourcePosition.of(40, 3))),
                new Refusal("other-parent", "east", SourcePosition.of(7, 8), Optional.empty())), "child");
        assertThat(reads).containsExactly(
                new Read("parent", "east", Optional.of(SourcePosition.of(40, 3)), Set.of(E5, E6)),
                new Read("other-parent", "east", Optional.empty(), Set.of(SourcePosition.of(7, 8))));
        assertThat(SealedSends.reads(List.of(new Refusal("parent", "east", E5, Optional.empty()),
                new Refusal("parent", "east", E6, Optional.of(SourcePosition.of(40, 3)))), "child").get(0).after())
                .as("a session that had nothing acknowledged: from the first entry").isEmpty();
    }

    @Test
    void anEntryRefusedAgainByTheSameTopicIsLookedForFromTheEarlierPoint() {
        Refusal first = new Refusal("parent", "east", E5, Optional.of(SourcePosition.of(40, 3)));
        assertThat(SealedSends.again(first, new Refusal("parent", "east", E5, Optional.of(SourcePosition.of(40, 9)))))
                .isEqualTo(first);
        assertThat(SealedSends.again(first, new Refusal("parent", "east", E5, Optional.empty())).after()).isEmpty();
        Refusal byChild = new Refusal("child", "east", E5, Optional.of(SourcePosition.of(41, 0)));
        assertThat(SealedSends.again(first, byChild)).as("by another topic: the newer").isEqualTo(byChild);
    }

    @Test
    void aRefusalOnTheTopicASessionOpensOnWaitsForAnotherTopic() {
        assertThat(SealedSends.reads(List.of(new Refusal("parent", "east", E5, Optional.empty())), "parent"))
                .as("that topic may still be being terminated").isEmpty();
    }

    @Test
    void aMessageReadIsWantedOnlyAsTheWholeEntryOfTheSameSource() {
        Read read = new Read("parent", "east", Optional.empty(), Set.of(E5));
        assertThat(read.wants("east", WirePositions.encode(E5))).isTrue();
        assertThat(read.wants("west", WirePositions.encode(E5)))
                .as("another source cluster: its own ledgers, the same numbers").isFalse();
        assertThat(read.wants("east", WirePositions.encode(E5.withPart(0)))).as("a part of it").isFalse();
        assertThat(read.wants("east", WirePositions.encode(E6))).isFalse();
    }

    @Test
    void aWholeEntryFoundStoredCoversItAndEachOfItsParts() {
        Set<SourcePosition> found = Set.of(E5);
        assertThat(SealedSends.covers(found, E5)).isTrue();
        assertThat(SealedSends.covers(found, E5.withPart(1))).as("its messages are all in the sealed segment").isTrue();
        assertThat(SealedSends.covers(found, E6)).isFalse();
    }
}
