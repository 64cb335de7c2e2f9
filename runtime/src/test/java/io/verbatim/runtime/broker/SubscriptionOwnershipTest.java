package io.verbatim.runtime.broker;

import static org.assertj.core.api.Assertions.assertThat;

import io.verbatim.config.SubscriptionConfig;
import io.verbatim.embedded.MemorySegments;
import io.verbatim.model.Compression;
import io.verbatim.model.Layout;
import io.verbatim.model.entry.Message;
import io.verbatim.runtime.storage.MemoryTopicStorage;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Sinks;
import reactor.test.scheduler.VirtualTimeScheduler;

/**
 * A subscription that follows ownership and acknowledges on receipt, on one in-memory topic shared by two
 * subscriptions of the same name: two broker processes of one cluster, each dispatching the segments its
 * process acts on. Virtual time throughout.
 */
class SubscriptionOwnershipTest {
    private final VirtualTimeScheduler clock = VirtualTimeScheduler.create();
    private final MemorySegments topic = new MemorySegments("a", Layout.initial(1, 1, 0), clock);
    private final List<Subscription> opened = new ArrayList<>();

    @AfterEach
    void dispose() {
        opened.forEach(Subscription::dispose);
        clock.dispose();
    }

    /** Fails with acknowledgement on dispatch: the three entries in the queue were acknowledged and never received. */
    @Test
    void whatWaitsInAQueueWhenAProcessStopsIsDeliveredByTheNextOne() {
        Subscription first = open(SegmentOwnership.ALL, 3);
        send(0, 10);
        assertThat(first.queueDepth(0)).isEqualTo(3);
        first.dispose();

        Subscription next = open(SegmentOwnership.ALL, 100);
        Reader reader = new Reader(next, false);
        assertThat(reader.payloads()).isEqualTo(payloads(0, 10));
        assertThat(next.backlog()).isZero();
    }

    /** Pulsar's redelivery: what a reader took and did not acknowledge goes to the next reader, in order. */
    @Test
    void whatAReaderDidNotAcknowledgeGoesToTheNextReaderAndTheCursorMovesOverAcknowledgedPrefixesOnly() {
        Subscription s = open(SegmentOwnership.ALL, 100);
        send(0, 6);
        Reader first = new Reader(s, true);
        assertThat(first.payloads()).isEqualTo(payloads(0, 6));
        first.acknowledge(0);
        first.acknowledge(1);
        first.acknowledge(3);
        assertThat(s.backlog()).as("entry 2 is not acknowledged: 3 waits behind it").isEqualTo(4);
        first.dispose();

        Reader second = new Reader(s, true);
        assertThat(second.payloads()).isEqualTo(List.of("k/2", "k/4", "k/5"));
        second.acknowledgeAll();
        assertThat(s.backlog()).isZero();
    }

    /**
     * A move hands over: the old owner reads no more, and ends once its consumer acknowledged what it had; the new
     * owner reads on from there. Every entry once, in order.
     */
    @Test
    void aMovedSegmentIsHandedOverOnceItsConsumersAcknowledgedAndItsNextOwnerGoesOnWithoutRepeats() {
        FakeOwnership a = new FakeOwnership(true);
        FakeOwnership b = new FakeOwnership(false);
        Subscription onA = open(a, 100);
        Subscription onB = open(b, 100);
        List<Long> handed = new CopyOnWriteArrayList<>();
        onA.handedOver().subscribe(handed::add);
        send(0, 5);
        Reader readerA = new Reader(onA, true);
        Reader readerB = new Reader(onB, true);
        assertThat(readerA.payloads()).isEqualTo(payloads(0, 5));
        readerA.acknowledge(0);
        readerA.acknowledge(1);

        a.handOver();
        assertThat(onA.handingOver(0)).isTrue();
        send(5, 8);
        assertThat(readerA.payloads()).as("a reads no more once handing over").hasSize(5);
        readerA.acknowledgeAll();
        assertThat(handed).containsExactly(0L);
        assertThat(onA.handingOver(0)).isFalse();

        b.take();
        assertThat(readerB.payloads()).isEqualTo(payloads(5, 8));
        readerB.acknowledgeAll();
        assertThat(onA.backlog()).isZero();
    }

    /** A lapsed lease stops at once: what its queue held is dropped, and the next owner delivers it. */
    @Test
    void aSegmentLostAtOnceDropsWhatItsQueueHeldAndItsNextOwnerDeliversIt() {
        FakeOwnership a = new FakeOwnership(true);
        FakeOwnership b = new FakeOwnership(false);
        Subscription onA = open(a, 3);
        Subscription onB = open(b, 100);
        send(0, 5);
        assertThat(onA.queueDepth(0)).isEqualTo(3);
        a.lose();
        assertThat(onA.queueDepth(0)).isZero();
        b.take();
        Reader readerB = new Reader(onB, false);
        assertThat(readerB.payloads()).isEqualTo(payloads(0, 5));
        assertThat(new Reader(onA, false).payloads()).isEmpty();
    }

    /** Consumers that do not read cannot hold a move for ever: the hand-over ends at its limit. */
    @Test
    void aHandOverWhoseConsumersDoNotReadEndsAtTheLimitAndLeavesTheRestToTheNextOwner() {
        FakeOwnership a = new FakeOwnership(true);
        FakeOwnership b = new FakeOwnership(false);
        Subscription onA = open(a, 3);
        Subscription onB = open(b, 100);
        List<Long> handed = new CopyOnWriteArrayList<>();
        onA.handedOver().subscribe(handed::add);
        send(0, 5);
        a.handOver();
        clock.advanceTimeBy(Subscription.HAND_OVER_LIMIT.minusMillis(1));
        assertThat(handed).isEmpty();
        assertThat(onA.handingOver(0)).isTrue();
        clock.advanceTimeBy(Duration.ofMillis(1));
        assertThat(handed).containsExactly(0L);
        assertThat(onA.queueDepth(0)).isZero();
        b.take();
        assertThat(new Reader(onB, false).payloads()).isEqualTo(payloads(0, 5));
    }

    // ---- helpers ---------------------------------------------------------------------------------

    /** What one process acts on of segment 0: owned, handed over (a move), or nothing. */
    private static final class FakeOwnership implements SegmentOwnership {
        private final Sinks.Many<Long> changes = Sinks.many().multicast().directBestEffort();
        private final Set<String> state = ConcurrentHashMap.newKeySet();

        FakeOwnership(boolean owns) {
            if (owns) {
                state.add("owns");
            }
        }

        void take() {
            set("owns");
        }

        void handOver() {
            set("handsOver");
        }

        void lose() {
            set("none");
        }

        private void set(String now) {
            state.clear();
            state.add(now);
            changes.tryEmitNext(0L);
        }

        @Override
        public boolean owns(String topic, long segment) {
            return state.contains("owns");
        }

        @Override
        public boolean handsOver(String topic, long segment) {
            return state.contains("handsOver");
        }

        @Override
        public Flux<Long> changes() {
            return changes.asFlux();
        }
    }

    /** Consumer 0's reader taking everything; acknowledging by hand when asked to. */
    private static final class Reader extends BaseSubscriber<Subscription.Delivery> {
        private final Subscription subscription;
        private final List<Subscription.Delivery> received = new CopyOnWriteArrayList<>();

        Reader(Subscription subscription, boolean acknowledging) {
            this.subscription = subscription;
            (acknowledging ? subscription.consumerWithAcknowledgements(0) : subscription.consumer(0)).subscribe(this);
        }

        @Override
        protected void hookOnNext(Subscription.Delivery d) {
            received.add(d);
        }

        List<String> payloads() {
            return received.stream().map(SubscriptionOwnershipTest::payload).toList();
        }

        void acknowledge(int index) {
            subscription.acknowledge(received.get(index));
        }

        void acknowledgeAll() {
            received.forEach(subscription::acknowledge);
        }
    }

    private Subscription open(SegmentOwnership ownership, int receiverQueueSize) {
        Subscription s = new Subscription.Builder("s", SubscriptionConfig.defaults(),
                b -> new Subscription(new MemoryTopicStorage(topic), new LoadTracker(), clock, ownership, b))
                .receiverQueueSize(receiverQueueSize).subscribe();
        opened.add(s);
        return s;
    }

    private void send(int from, int to) {
        for (int i = from; i < to; i++) {
            topic.produce(List.of(Message.of("k", ("k/" + i).getBytes(StandardCharsets.UTF_8))), Compression.NONE);
        }
    }

    private static List<String> payloads(int from, int to) {
        return IntStream.range(from, to).mapToObj(i -> "k/" + i).toList();
    }

    private static String payload(Subscription.Delivery d) {
        return new String(d.messages().get(0).payloadBytes(), StandardCharsets.UTF_8);
    }
}
