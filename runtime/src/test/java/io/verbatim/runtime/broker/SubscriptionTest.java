package io.verbatim.runtime.broker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.verbatim.config.SubscriptionConfig;
import io.verbatim.embedded.MemorySegments;
import io.verbatim.model.Compression;
import io.verbatim.model.KeyHash;
import io.verbatim.model.Layout;
import io.verbatim.model.Mutation;
import io.verbatim.model.Outcome;
import io.verbatim.model.Segment;
import io.verbatim.model.entry.Message;
import io.verbatim.runtime.storage.MemoryTopicStorage;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import reactor.test.StepVerifier;
import reactor.test.scheduler.VirtualTimeScheduler;

/**
 * PIP-486 dispatch with bounded receiver queues, on an in-memory topic and (but for one test with real
 * threads) a virtual dispatch scheduler: every step runs before the call that caused it returns, so each
 * assertion sees a settled state.
 */
class SubscriptionTest {
    private final VirtualTimeScheduler clock = VirtualTimeScheduler.create();
    private final List<Subscription> opened = new ArrayList<>();

    @AfterEach
    void dispose() {
        opened.forEach(Subscription::dispose);
        clock.dispose();
    }

    /** Every bucket to the consumer whose range {@code [⌊j·N/k⌋, ⌊(j+1)·N/k⌋)} holds it, as Pulsar's selector. */
    @Test
    void bucketsGoToTheConsumerWhoseRangeHoldsThemForEveryBucketAndConsumerCount() {
        for (int n = 1; n <= 128; n++) {
            for (int k = 1; k <= 12; k++) {
                for (int b = 0; b < n; b++) {
                    int owner = -1;
                    for (int j = 0; j < k; j++) {
                        if ((long) j * n / k <= b && b < (long) (j + 1) * n / k) {
                            owner = j;
                        }
                    }
                    assertThat(Subscription.consumerOf(b, n, k)).as("bucket %d of %d, %d consumers", b, n, k)
                            .isEqualTo(owner);
                }
            }
        }
        // Fewer buckets than consumers: bucket 0 of 1 goes to the last of three (the others own nothing).
        assertThat(Subscription.consumerOf(0, 1, 3)).isEqualTo(2);
    }

    /**
     * Two segments of two buckets, two consumers (each owns bucket j of both segments), queues of 3.
     * Consumer 0 does not read: once its queue holds 3, segment 0 stops at its next entry (its own); the
     * cursor keeps the rest. Segment 1, all consumer 1's, keeps flowing. Consumer 1's entries of segment 0
     * wait behind the stalled one. Once consumer 0 reads, everything arrives once, in order.
     */
    @Test
    void aConsumerThatDoesNotReadHoldsBackOnlyItsSegmentOnceItsQueueIsFullAndLosesNothing() {
        MemorySegments topic = new MemorySegments("a", Layout.initial(2, 4, 0), clock);
        Layout layout = topic.layout();
        List<Subscription.Delivery> dispatched = new CopyOnWriteArrayList<>();
        int[] deepest = new int[2];
        Subscription[] self = new Subscription[1];
        self[0] = open(topic, builder(topic).consumers(2).receiverQueueSize(3).onDispatch(d -> {
            dispatched.add(d);
            deepest[d.consumer()] = Math.max(deepest[d.consumer()], self[0].queueDepth(d.consumer()));
        }));
        Subscription s = self[0];
        Reader zero = new Reader();
        Reader one = new Reader();
        s.consumer(1).subscribe(one);
        one.request(Long.MAX_VALUE);

        String mine = keyIn(layout, 0, 0, 0);       // segment 0, bucket 0: consumer 0's
        String behind = keyIn(layout, 0, 1, 0);     // segment 0, bucket 1: consumer 1's, behind the stall
        String elsewhere = keyIn(layout, 1, 1, 0);  // segment 1, bucket 1: consumer 1's
        for (int i = 0; i < 10; i++) {
            send(topic, mine, i);
        }
        assertThat(s.queueDepth(0)).isEqualTo(3);
        assertThat(s.backlog()).isEqualTo(10); // three in the queue, not received, and the fourth read: none acknowledged
        for (int i = 0; i < 10; i++) {
            send(topic, elsewhere, i);
            if (i < 5) {
                send(topic, behind, i);
            }
        }
        assertThat(one.payloads()).as("segment 1 keeps flowing").isEqualTo(payloads(elsewhere, 0, 10));
        assertThat(s.queueDepth(0)).isEqualTo(3);
        assertThat(s.backlog()).isEqualTo(10 + 5);
        assertThat(dispatched).hasSize(3 + 10);

        s.consumer(0).subscribe(zero);
        zero.request(1); // one read makes room for one more: the stalled entry goes in, the next one waits
        assertThat(zero.payloads()).containsExactly(mine + "/0");
        assertThat(s.queueDepth(0)).isEqualTo(3);
        assertThat(s.backlog()).isEqualTo(9 + 5);

        zero.request(Long.MAX_VALUE);
        assertThat(zero.payloads()).isEqualTo(payloads(mine, 0, 10));
        List<String> forOne = new ArrayList<>(payloads(elsewhere, 0, 10));
        forOne.addAll(payloads(behind, 0, 5));
        assertThat(one.payloads()).isEqualTo(forOne);
        assertThat(s.backlog()).isZero();
        assertThat(s.queueDepth(0)).isZero();
        assertThat(s.queueDepth(1)).isZero();
        assertThat(deepest).as("no queue ever held more than 3").containsExactly(3, 1);
        assertThat(dispatched).hasSize(25).doesNotHaveDuplicates();
        assertThat(dispatched.stream().filter(d -> d.consumer() == 0).map(SubscriptionTest::payload))
                .isEqualTo(zero.payloads());
    }

    /**
     * A segment held back by a full queue is not drained, so its children wait: the key that moves to
     * another consumer at the split (N = 1 after it: the last consumer owns everything) stays in order.
     */
    @Test
    void childrenWaitForAParentHeldBackByAFullQueueSoAKeyStaysInOrderAcrossTheSplit() {
        MemorySegments topic = new MemorySegments("a", Layout.initial(1, 2, 0), clock);
        List<Subscription.Delivery> dispatched = new CopyOnWriteArrayList<>();
        Subscription s = open(topic, builder(topic).consumers(2).receiverQueueSize(2).onDispatch(dispatched::add));
        Reader zero = new Reader();
        Reader one = new Reader();
        s.consumer(1).subscribe(one);
        one.request(Long.MAX_VALUE);
        String key = keyIn(topic.layout(), 0, 0, 0);
        for (int i = 0; i < 5; i++) {
            send(topic, key, i);
        }
        assertThat(topic.apply(Mutation.split(0))).isInstanceOf(Outcome.Applied.class);
        Segment child = topic.layout().activeSegmentFor(KeyHash.of(key).segmentHash());
        assertThat(child.buckets().count()).isEqualTo(1);
        for (int i = 5; i < 10; i++) {
            send(topic, key, i);
        }
        assertThat(one.payloads()).as("the child waits for its parent").isEmpty();
        assertThat(topic.backlog(child.id(), "s")).isEqualTo(5);
        assertThat(s.queueDepth(0)).isEqualTo(2);

        s.consumer(0).subscribe(zero);
        zero.request(Long.MAX_VALUE);
        assertThat(zero.payloads()).isEqualTo(payloads(key, 0, 5));
        assertThat(one.payloads()).isEqualTo(payloads(key, 5, 10));
        assertThat(dispatched.stream().map(SubscriptionTest::payload)).isEqualTo(payloads(key, 0, 10));
        assertThat(s.backlog()).isZero();
    }

    @Test
    void theQueueDepthPerConsumerAndTheBacklogAreGaugesRemovedWithTheSubscription() {
        MemorySegments topic = new MemorySegments("a", Layout.initial(1, 2, 0), clock);
        Subscription s = open(topic, builder(topic).consumers(2).receiverQueueSize(4));
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        SubscriptionMetricsBinder metrics = new SubscriptionMetricsBinder(s, Tags.of("topic", "t"));
        metrics.bindTo(registry);
        String key = keyIn(topic.layout(), 0, 1, 0);
        for (int i = 0; i < 10; i++) {
            send(topic, key, i);
        }
        assertThat(registry.get(SubscriptionMetricsBinder.QUEUE_DEPTH).tags("topic", "t", "subscription", "s",
                "consumer", "1").gauge().value()).isEqualTo(4);
        assertThat(registry.get(SubscriptionMetricsBinder.QUEUE_DEPTH).tag("consumer", "0").gauge().value()).isZero();
        assertThat(registry.get(SubscriptionMetricsBinder.BACKLOG).tag("subscription", "s").gauge().value())
                .as("what waits in a queue is not received: still the cursor's").isEqualTo(10);
        metrics.unbindFrom(registry);
        assertThat(registry.getMeters()).isEmpty();
    }

    @Test
    void aBadReceiverQueueSizeOrConsumerCountIsRefusedNamingTheSubscriptionTheValueAndTheRange() {
        MemorySegments topic = new MemorySegments("a", Layout.initial(1, 2, 0), clock);
        for (int bad : new int[] {0, -3, 1_000_001, Integer.MAX_VALUE}) {
            assertThatThrownBy(() -> builder(topic).receiverQueueSize(bad)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessage("subscription 's': receiverQueueSize: " + bad + " is out of range (expected an integer "
                            + "within [1, 1000000]: the entries one consumer's queue holds)");
        }
        assertThatThrownBy(() -> builder(topic).consumers(0))
                .hasMessage("subscription 's': consumers: 0 is out of range (expected at least one consumer)");
        assertThatThrownBy(() -> new Subscription.Builder(" ", SubscriptionConfig.defaults(), b -> null))
                .hasMessageContaining("a subscription needs a name");
        assertThat(open(topic, builder(topic)).receiverQueueSize()).isEqualTo(1000);
    }

    /** One reader at a time; a reader that cancels leaves the rest to the next one, none lost or repeated. */
    @Test
    void aSecondReaderIsRefusedAndTheNextReaderGoesOnWhereTheLastOneStopped() {
        MemorySegments topic = new MemorySegments("a", Layout.initial(1, 1, 0), clock);
        Subscription s = open(topic, builder(topic).receiverQueueSize(3));
        String key = keyIn(topic.layout(), 0, 0, 0);
        for (int i = 0; i < 6; i++) {
            send(topic, key, i);
        }
        Reader first = new Reader();
        s.consumer(0).subscribe(first);
        StepVerifier.create(s.consumer(0)).expectErrorMessage("consumer 0 of subscription 's' already has a reader "
                + "(one at a time)").verify();
        first.request(2);
        first.cancel();
        StepVerifier.create(s.consumer(0).map(SubscriptionTest::payload).take(4))
                .expectNextSequence(payloads(key, 2, 6)).verifyComplete();
        assertThat(first.payloads()).isEqualTo(payloads(key, 0, 2));
        assertThat(s.backlog()).isZero();
    }

    /** Disposing ends each consumer's stream once what its queue holds is received. */
    @Test
    void disposingCompletesEachConsumerAfterWhatItsQueueHolds() {
        MemorySegments topic = new MemorySegments("a", Layout.initial(1, 1, 0), clock);
        Subscription s = open(topic, builder(topic).receiverQueueSize(2).recording(true));
        String key = keyIn(topic.layout(), 0, 0, 0);
        for (int i = 0; i < 5; i++) {
            send(topic, key, i);
        }
        s.dispose();
        send(topic, key, 5);
        StepVerifier.create(s.consumer(0).map(SubscriptionTest::payload)).expectNextSequence(payloads(key, 0, 2))
                .verifyComplete();
        StepVerifier.create(s.deliveries()).expectNextCount(2).verifyComplete();
        assertThat(s.backlog()).isEqualTo(4);
    }

    /**
     * The same rules with real threads (the one test here that is not on virtual time): two producers, a
     * split on the way, dispatch on two threads and readers that take one entry at a time on others. Every
     * entry arrives once, each (producer, key) in order in dispatch order, no queue above its bound.
     */
    @Test
    void underConcurrentProducersAndSlowReadersEveryEntryArrivesOnceInOrderWithinTheBound() {
        Scheduler dispatch = Schedulers.newParallel("dispatch", 2);
        Scheduler readers = Schedulers.newParallel("readers", 3);
        try {
            MemorySegments topic = new MemorySegments("a", Layout.initial(2, 8, 0), clock);
            List<Subscription.Delivery> dispatched = new CopyOnWriteArrayList<>();
            AtomicInteger deepest = new AtomicInteger();
            Subscription[] self = new Subscription[1];
            self[0] = new Subscription.Builder("s", SubscriptionConfig.defaults(),
                    b -> new Subscription(new MemoryTopicStorage(topic), new LoadTracker(), dispatch, b)).consumers(3).receiverQueueSize(2)
                    .onDispatch(d -> {
                        dispatched.add(d);
                        deepest.accumulateAndGet(self[0].queueDepth(d.consumer()), Math::max);
                    }).subscribe();
            Subscription s = self[0];
            opened.add(s);
            List<String> received = new CopyOnWriteArrayList<>();
            for (int i = 0; i < 3; i++) {
                s.consumer(i).publishOn(readers, 1).subscribe(d -> received.add(payload(d)));
            }
            int perProducer = 400;
            Flux.range(0, 2).flatMap(p -> Mono.fromRunnable(() -> {
                for (int i = 0; i < perProducer; i++) {
                    if (p == 0 && i == perProducer / 2) {
                        assertThat(topic.apply(Mutation.split(0))).isInstanceOf(Outcome.Applied.class);
                    }
                    String key = "key-" + (i % 16);
                    topic.produce(List.of(Message.of(key, (p + "|" + key + "/" + i).getBytes(StandardCharsets.UTF_8))),
                            Compression.NONE);
                }
            }).subscribeOn(Schedulers.boundedElastic())).blockLast(Duration.ofSeconds(30));
            Flux.interval(Duration.ofMillis(5)).filter(t -> received.size() >= 2 * perProducer)
                    .blockFirst(Duration.ofSeconds(30));

            assertThat(received).hasSize(2 * perProducer).doesNotHaveDuplicates();
            assertThat(dispatched.stream().map(SubscriptionTest::payload).toList()).hasSameElementsAs(received);
            assertThat(deepest.get()).isLessThanOrEqualTo(2);
            Map<String, Integer> last = new HashMap<>();
            for (Subscription.Delivery d : dispatched) {
                String[] id = payload(d).split("/");
                int previous = last.getOrDefault(id[0], -1);
                assertThat(Integer.parseInt(id[1])).as(payload(d)).isGreaterThan(previous);
                last.put(id[0], Integer.parseInt(id[1]));
            }
            assertThat(s.backlog()).isZero();
        } finally {
            dispatch.dispose();
            readers.dispose();
        }
    }

    // ---- helpers ---------------------------------------------------------------------------------

    /** A consumer's reader that requests only what the test asks for. */
    private static final class Reader extends BaseSubscriber<Subscription.Delivery> {
        private final List<String> received = new CopyOnWriteArrayList<>();

        @Override
        protected void hookOnSubscribe(org.reactivestreams.Subscription subscription) {
        }

        @Override
        protected void hookOnNext(Subscription.Delivery d) {
            received.add(payload(d));
        }

        List<String> payloads() {
            return List.copyOf(received);
        }
    }

    private Subscription.Builder builder(MemorySegments topic) {
        return new Subscription.Builder("s", SubscriptionConfig.defaults(),
                b -> new Subscription(new MemoryTopicStorage(topic), new LoadTracker(), clock, b));
    }

    private Subscription open(MemorySegments topic, Subscription.Builder builder) {
        Subscription s = builder.subscribe();
        opened.add(s);
        return s;
    }

    /** The {@code nth} key {@code key-i} that routes to segment {@code segmentId}, bucket {@code bucket}. */
    private static String keyIn(Layout layout, long segmentId, int bucket, int nth) {
        int found = 0;
        for (int i = 0; ; i++) {
            String key = "key-" + i;
            KeyHash h = KeyHash.of(key);
            Segment s = layout.activeSegmentFor(h.segmentHash());
            if (s.id() == segmentId && s.buckets().bucketOf(h.hashB()) == bucket && found++ == nth) {
                return key;
            }
        }
    }

    /** One entry of one message, {@code key/i}. */
    private static void send(MemorySegments topic, String key, int i) {
        topic.produce(List.of(Message.of(key, (key + "/" + i).getBytes(StandardCharsets.UTF_8))), Compression.NONE);
    }

    private static List<String> payloads(String key, int from, int to) {
        return IntStream.range(from, to).mapToObj(i -> key + "/" + i).toList();
    }

    private static String payload(Subscription.Delivery d) {
        return new String(d.messages().get(0).payloadBytes(), StandardCharsets.UTF_8);
    }
}
