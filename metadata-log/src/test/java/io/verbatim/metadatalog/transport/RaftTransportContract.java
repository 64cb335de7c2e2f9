package io.verbatim.metadatalog.transport;

import static io.verbatim.metadatalog.transport.Messages.append;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;

import io.verbatim.metadatalog.transport.Messages.Inbox;
import io.verbatim.metadatalog.transport.RaftTransportMetrics.Drop;
import java.time.Duration;
import java.util.List;
import java.util.function.BooleanSupplier;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;
import reactor.test.StepVerifier;

/**
 * What every {@link RaftTransport} does, run against each implementation: members {@code a}, {@code b},
 * {@code c} of group {@link #GROUP}. Nothing here waits on the wall clock: {@link #await} lets time pass
 * as the implementation's time passes (polling with a generous bound, or advancing virtual time).
 */
abstract class RaftTransportContract {
    static final String GROUP = "meta";

    /** Starts {@code member} (again, at the same address, if it ran before); its peers learn of it. */
    protected abstract RaftTransport start(String member);

    protected abstract RaftTransportMetrics metrics(RaftTransport transport);

    /** Runs {@code eachRound} and lets time pass until {@code done}, or fails naming {@code what}. */
    protected abstract void await(String what, BooleanSupplier done, Runnable eachRound);

    /** The bound of messages waiting for one peer. */
    protected abstract int queueBound();

    protected final void await(String what, BooleanSupplier done) {
        await(what, done, () -> { });
    }

    @Test
    void deliversToTheAddressedMemberOnly() {
        RaftTransport a = start("a");
        RaftTransport b = start("b");
        RaftTransport c = start("c");
        try (Inbox atB = new Inbox(b); Inbox atC = new Inbox(c)) {
            a.send(append("a", "b", GROUP, 1));
            a.send(append("a", "c", GROUP, 2));
            // the receiver counts a message once its handler took it: the count may trail the inbox a moment
            await("b and c each get theirs", () -> atB.size() == 1 && atC.size() == 1
                    && metrics(b).messagesReceived("a") == 1);
            assertThat(atB.callIdsFrom("a")).containsExactly(1L);
            assertThat(atC.callIdsFrom("a")).containsExactly(2L);
            assertThat(metrics(b).messagesReceived("a")).isEqualTo(1);
            assertThat(metrics(a).messagesSent("b")).isEqualTo(1);
            assertThat(metrics(a).bytesSent("b")).isEqualTo(Frames.messageFrameBytes(append("a", "b", GROUP, 1)));
        }
    }

    @Test
    void keepsOrderPerPair() {
        RaftTransport a = start("a");
        RaftTransport b = start("b");
        RaftTransport c = start("c");
        int n = queueBound(); // sent faster than a connection opens: the queue holds them all
        try (Inbox atB = new Inbox(b)) {
            for (long i = 0; i < n; i++) {
                a.send(append("a", "b", GROUP, i));
                c.send(append("c", "b", GROUP, i));
            }
            await("b gets all " + 2 * n, () -> atB.size() == 2 * n);
            List<Long> expected = LongStream.range(0, n).boxed().toList();
            assertThat(atB.callIdsFrom("a")).containsExactlyElementsOf(expected);
            assertThat(atB.callIdsFrom("c")).containsExactlyElementsOf(expected);
        }
    }

    @Test
    void dropsAndCountsAMessageToAnUnknownMember() {
        RaftTransport a = start("a");
        assertThatCode(() -> a.send(append("a", "z", GROUP, 1))).doesNotThrowAnyException();
        assertThat(metrics(a).dropped(Drop.UNKNOWN_MEMBER)).isEqualTo(1);
    }

    @Test
    void dropsAndCountsAMessageNamingAnotherSenderOrGroup() {
        RaftTransport a = start("a");
        RaftTransport b = start("b");
        try (Inbox atB = new Inbox(b)) {
            a.send(append("c", "b", GROUP, 1));
            a.send(append("a", "b", "another", 2));
            a.send(append("a", "b", GROUP, 3));
            await("b gets the genuine one", () -> atB.size() >= 1);
            assertThat(atB.callIdsFrom("a")).containsExactly(3L);
            assertThat(metrics(a).dropped(Drop.SPOOFED_SENDER)).isEqualTo(1);
            assertThat(metrics(a).dropped(Drop.WRONG_GROUP)).isEqualTo(1);
        }
    }

    @Test
    void sendNeverBlocksAndCountsDropsWhenThePeerIsDown() {
        RaftTransport a = start("a");
        start("b").close();
        int n = 3 * queueBound();
        for (long i = 0; i < n; i++) {
            a.send(append("a", "b", GROUP, i)); // returns at once: at most the bound is kept
        }
        RaftTransportMetrics m = metrics(a);
        assertThat(m.dropped()).isGreaterThanOrEqualTo(n - queueBound());
        await("every message to the down peer is dropped", () -> m.dropped() == n);
        assertThat(m.dropped(Drop.QUEUE_FULL) + m.dropped(Drop.NOT_CONNECTED)).isEqualTo(n);
        assertThat(m.messagesSent("b")).isZero();
    }

    @Test
    void closeIsIdempotentCompletesInboundAndDropsLaterMessages() {
        RaftTransport a = start("a");
        start("b");
        StepVerifier.create(a.inbound()).then(a::close).expectComplete().verify(Duration.ofSeconds(30));
        assertThatCode(a::close).doesNotThrowAnyException();
        a.send(append("a", "b", GROUP, 1));
        assertThat(metrics(a).dropped(Drop.CLOSED)).isEqualTo(1);
    }

    @Test
    void messagesFlowAgainAfterThePeerRestarts() {
        RaftTransport a = start("a");
        RaftTransport b = start("b");
        try (Inbox atB = new Inbox(b)) {
            a.send(append("a", "b", GROUP, 1));
            await("b gets the first", () -> atB.size() == 1);
        }
        b.close();
        RaftTransport again = start("b");
        long[] next = {2};
        try (Inbox atB = new Inbox(again)) {
            await("the restarted b gets messages", () -> atB.size() >= 1,
                    () -> a.send(append("a", "b", GROUP, next[0]++)));
            List<Long> got = atB.callIdsFrom("a");
            assertThat(got).isSorted().allMatch(id -> id >= 2);
        }
    }
}
