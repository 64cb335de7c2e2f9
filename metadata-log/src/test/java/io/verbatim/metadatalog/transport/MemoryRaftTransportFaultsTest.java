package io.verbatim.metadatalog.transport;

import static io.verbatim.metadatalog.transport.Messages.append;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.verbatim.metadatalog.transport.Messages.Inbox;
import io.verbatim.metadatalog.transport.RaftTransportMetrics.Drop;
import java.time.Duration;
import java.util.List;
import java.util.SplittableRandom;
import java.util.stream.LongStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.test.StepVerifier;
import reactor.test.scheduler.VirtualTimeScheduler;

/** The in-memory network's faults, in virtual time, from a seeded generator. */
class MemoryRaftTransportFaultsTest {
    private static final String G = "meta";
    private final VirtualTimeScheduler time = VirtualTimeScheduler.create();

    @AfterEach
    void stop() {
        time.dispose();
    }

    private MemoryNetwork network(long seed) {
        return new MemoryNetwork(G, time, new SplittableRandom(seed));
    }

    private void tick(long millis) {
        time.advanceTimeBy(Duration.ofMillis(millis));
    }

    @Test
    void deliversOnlyWhenTimePasses() {
        MemoryNetwork net = network(1);
        MemoryRaftTransport a = net.join("a");
        try (Inbox atB = new Inbox(net.join("b"))) {
            a.send(append("a", "b", G, 1));
            assertThat(atB.size()).isZero(); // asynchronous, even with no delay
            tick(1);
            assertThat(atB.size()).isEqualTo(1);
        }
    }

    @Test
    void aPartitionDropsBothWaysUntilHealed() {
        MemoryNetwork net = network(1);
        MemoryRaftTransport a = net.join("a");
        MemoryRaftTransport b = net.join("b");
        try (Inbox atA = new Inbox(a); Inbox atB = new Inbox(b); Inbox atC = new Inbox(net.join("c"))) {
            net.partition("b", "a");
            a.send(append("a", "b", G, 1));
            b.send(append("b", "a", G, 1));
            a.send(append("a", "c", G, 1));
            tick(10);
            assertThat(atA.size() + atB.size()).isZero();
            assertThat(atC.size()).isEqualTo(1);
            assertThat(a.metrics().dropped(Drop.PARTITIONED) + b.metrics().dropped(Drop.PARTITIONED)).isEqualTo(2);
            net.heal("a", "b");
            a.send(append("a", "b", G, 2));
            tick(10);
            assertThat(atB.callIdsFrom("a")).containsExactly(2L);
        }
    }

    @Test
    void aPartitionDropsWhatIsInFlight() {
        MemoryNetwork net = network(1).delay(Duration.ofMillis(100), Duration.ofMillis(100));
        MemoryRaftTransport a = net.join("a");
        MemoryRaftTransport b = net.join("b");
        try (Inbox atB = new Inbox(b)) {
            a.send(append("a", "b", G, 1));
            tick(50);
            net.isolate("b");
            tick(100);
            assertThat(atB.size()).isZero();
            assertThat(b.metrics().dropped(Drop.PARTITIONED)).isEqualTo(1);
            net.healAll();
            assertThat(net.connected("a", "b")).isTrue();
        }
    }

    @Test
    void anIsolatedMemberNeitherSendsNorReceives() {
        MemoryNetwork net = network(1);
        MemoryRaftTransport a = net.join("a");
        MemoryRaftTransport b = net.join("b");
        net.isolate("a");
        a.send(append("a", "b", G, 1));
        b.send(append("b", "a", G, 1));
        assertThat(a.metrics().dropped(Drop.PARTITIONED) + b.metrics().dropped(Drop.PARTITIONED)).isEqualTo(2);
    }

    @Test
    void dropsAndDuplicatesByProbability() {
        MemoryNetwork net = network(1).dropProbability(1);
        MemoryRaftTransport a = net.join("a");
        try (Inbox atB = new Inbox(net.join("b"))) {
            a.send(append("a", "b", G, 1));
            assertThat(a.metrics().dropped(Drop.INJECTED)).isEqualTo(1);
            net.dropProbability(0).duplicateProbability(1);
            a.send(append("a", "b", G, 2));
            tick(1);
            assertThat(atB.callIdsFrom("a")).containsExactly(2L, 2L);
        }
    }

    @Test
    void delaysWithinTheRangeAndKeepsOrderPerPair() {
        MemoryNetwork net = network(3).delay(Duration.ofMillis(20), Duration.ofMillis(50));
        MemoryRaftTransport a = net.join("a");
        try (Inbox atB = new Inbox(net.join("b"))) {
            a.send(append("a", "b", G, 0));
            tick(19);
            assertThat(atB.size()).isZero();
            tick(31);
            assertThat(atB.size()).isEqualTo(1);
            for (long i = 1; i < 200; i++) {
                a.send(append("a", "b", G, i));
            }
            tick(50);
            assertThat(atB.callIdsFrom("a")).containsExactlyElementsOf(LongStream.range(0, 200).boxed().toList());
        }
    }

    @Test
    void aSeedRepeatsARun() {
        assertThat(lossyRun(42)).isEqualTo(lossyRun(42)).isNotEqualTo(lossyRun(43));
    }

    private List<Long> lossyRun(long seed) {
        MemoryNetwork net = network(seed).dropProbability(0.5).duplicateProbability(0.2)
                .delay(Duration.ZERO, Duration.ofMillis(30));
        MemoryRaftTransport a = net.join("a");
        MemoryRaftTransport b = net.join("b");
        try (Inbox atB = new Inbox(b)) {
            for (long i = 0; i < 100; i++) {
                a.send(append("a", "b", G, i));
                tick(1);
            }
            tick(100);
            return atB.callIdsFrom("a");
        } finally {
            a.close();
            b.close();
        }
    }

    @Test
    void inboundKeepsItsBoundAndDropsBeyond() {
        MemoryNetwork net = new MemoryNetwork(G, time, new SplittableRandom(1), 64, 8);
        MemoryRaftTransport a = net.join("a");
        MemoryRaftTransport b = net.join("b");
        for (long i = 0; i < 10; i++) {
            a.send(append("a", "b", G, i));
        }
        tick(1); // nobody subscribes yet: eight are kept
        assertThat(b.metrics().dropped(Drop.INBOUND_OVERFLOW)).isEqualTo(2);
        StepVerifier.create(b.inbound().map(Messages::callId)).expectNextSequence(LongStream.range(0, 8).boxed()
                .toList()).then(b::close).verifyComplete();
    }

    @Test
    void theInFlightBoundPerPairDrops() {
        MemoryNetwork net = new MemoryNetwork(G, time, new SplittableRandom(1), 3, 64);
        MemoryRaftTransport a = net.join("a");
        net.join("b");
        for (long i = 0; i < 5; i++) {
            a.send(append("a", "b", G, i));
        }
        assertThat(a.metrics().dropped(Drop.QUEUE_FULL)).isEqualTo(2);
        tick(1);
        a.send(append("a", "b", G, 5));
        assertThat(a.metrics().messagesSent("b")).isEqualTo(4);
    }

    @Test
    void aMemberJoinsOnceAtATime() {
        MemoryNetwork net = network(1);
        MemoryRaftTransport a = net.join("a");
        assertThatThrownBy(() -> net.join("a")).isInstanceOf(IllegalStateException.class).hasMessageContaining("a");
        a.close();
        assertThat(net.join("a")).isNotSameAs(a);
        assertThatThrownBy(() -> net.dropProbability(1.5)).hasMessageContaining("dropProbability is 1.5");
    }
}
