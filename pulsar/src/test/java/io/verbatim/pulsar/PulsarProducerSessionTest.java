package io.verbatim.pulsar;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.verbatim.model.Layout;
import io.verbatim.model.Mutation;
import io.verbatim.model.Segment;
import io.verbatim.model.entry.Entry;
import io.verbatim.model.entry.SourcePosition;
import io.verbatim.model.proto.CompressionType;
import io.verbatim.pipeline.ProducerSession;
import io.verbatim.pipeline.ProducerSessionContract;
import io.verbatim.pipeline.RemoteException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.api.PulsarClientException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Replicator producers into a deduplicated namespace pass the producer session contract, on a real broker. */
class PulsarProducerSessionTest extends ProducerSessionContract {
    private static PulsarFixture pulsar;
    private final Segment segment = PulsarFixture.onlySegment();

    @BeforeAll
    static void connect() {
        pulsar = new PulsarFixture("public/session-contract");
    }

    @AfterAll
    static void disconnect() {
        pulsar.close();
    }

    @Override
    protected Destination newDestination() {
        String topic = pulsar.newTopic("orders");
        pulsar.storage.createSegment(topic, segment).block(Duration.ofSeconds(30));
        return new Destination() {
            @Override
            public ProducerSession open(String producerName) {
                return pulsar.storage.session(topic, segment, producerName);
            }

            @Override
            public List<Entry> stored() {
                return pulsar.stored(topic, segment);
            }

            @Override
            public void seal() {
                pulsar.storage.seal(topic, segment).block(Duration.ofSeconds(30));
            }
        };
    }

    /**
     * A session's producer is closed off Pulsar's I/O threads; a new session of the same name (a restarted
     * replicator) waits for that close rather than reach the broker first and be refused as busy.
     */
    @Test
    void aSessionOpenedAsTheLastOneOfItsNameClosesIsNotRefusedAsBusy() {
        Destination d = newDestination();
        for (int i = 0; i < 10; i++) {
            ProducerSession session = d.open("pulsar.repl.east.busy");
            SourcePosition p = SourcePosition.of(1, i);
            assertThat(session.send(stamped(batch(i, 1, CompressionType.NONE), p), p).block(Duration.ofSeconds(30)))
                    .as("send %d, in a session opened as the one before closed", i)
                    .isEqualTo(ProducerSession.Receipt.PERSISTED);
            session.dispose();
        }
        assertThat(d.stored()).hasSize(10);
    }

    /**
     * Pulsar's client reports a send refused as terminated though the broker stored it (it fails every send still
     * pending once the broker refuses one; the stand-in here does that to the second entry after storing it). The
     * replicator sends that entry again to the sealed segment's child: the session there reads the sealed topic
     * first, answers the entry as a duplicate and does not store it a second time.
     */
    @Test
    void anEntryRefusedAsTerminatedThatTheSealedSegmentStoredIsNotStoredAgainOnItsChild() {
        Split split = splitWithASendStoredAndReportedRefused("pulsar.repl.east.sealed");
        ProducerSession onChild = split.onChild(pulsar.storage, "pulsar.repl.east.sealed");
        assertThat(send(onChild, 1)).as("stored in the sealed parent").isEqualTo(ProducerSession.Receipt.DUPLICATE);
        assertThat(send(onChild, 2)).isEqualTo(ProducerSession.Receipt.PERSISTED);
        onChild.dispose();
        assertThat(pulsar.stored(split.topic, split.parent)).as("the parent's entries").hasSize(2);
        assertThat(pulsar.stored(split.topic, split.child)).as("the child's: only the one never sent before")
                .hasSize(1);
    }

    /**
     * A sealed topic deleted (drained and pruned) before the child's session could read it holds nothing to find:
     * the session sends as usual rather than fail on it for good.
     */
    @Test
    void aSealedSegmentGoneBeforeItCouldBeReadDoesNotStopItsChildsSessions() {
        Split split = splitWithASendStoredAndReportedRefused("pulsar.repl.east.pruned");
        pulsar.storage.deleteSegment(split.topic, split.parent).block(Duration.ofSeconds(30));
        ProducerSession onChild = split.onChild(pulsar.storage, "pulsar.repl.east.pruned");
        assertThat(send(onChild, 1)).as("nothing known of it any more").isEqualTo(ProducerSession.Receipt.PERSISTED);
        onChild.dispose();
        assertThat(pulsar.stored(split.topic, split.child)).hasSize(1);
    }

    /**
     * A replicator killed with entries stored in a segment it had not seen answered, restarted in another process
     * after the segment split: it sends them again from its cursor, to the child. The child's session reads what the
     * sealed parent stored of its producer (the broker's dedup snapshot and what follows it) and answers those as
     * duplicates; nothing of this process knew of them.
     */
    @Test
    void entriesAKilledReplicatorLeftInASegmentThatSplitSinceAreNotStoredAgainOnItsChild() {
        String name = "pulsar.repl.east.killed";
        Split split = newSplit(1);
        String topic = split.topic;
        Segment parent = split.parent;
        Segment child = split.child;
        ProducerSession onParent = pulsar.storage.session(topic, parent, name);
        for (int i = 0; i < 5; i++) {
            assertThat(send(onParent, i)).isEqualTo(ProducerSession.Receipt.PERSISTED);
        }
        onParent.dispose();
        pulsar.storage.seal(topic, parent).block(Duration.ofSeconds(30));
        try (PulsarFixture restarted = new PulsarFixture(pulsar.namespace)) { // another process: nothing in memory
            ProducerSession onChild = split.onChild(restarted.storage, name);
            for (int i = 2; i < 5; i++) {
                assertThat(send(onChild, i)).as("entry %d, stored in the parent", i)
                        .isEqualTo(ProducerSession.Receipt.DUPLICATE);
            }
            assertThat(send(onChild, 5)).isEqualTo(ProducerSession.Receipt.PERSISTED);
            assertThat(send(onChild, 6)).isEqualTo(ProducerSession.Receipt.PERSISTED);
            onChild.dispose();
        }
        assertThat(pulsar.stored(topic, child)).as("the child's: only the two never sent before").hasSize(2);
        assertThat(pulsar.stored(topic, parent)).hasSize(5);
    }

    /**
     * Pulsar #26113 in a parent: the broker refused entry 1 while entry 2, in flight behind it, was stored (the
     * stand-in refuses 1 only once 2 is answered). The parent's highest position is then past an entry it does not
     * hold: the child's session, in the process that saw the refusal, sends entry 1 and skips entry 2.
     */
    @Test
    void anEntryTheParentRefusedBeforeStoringALaterOneIsStillSentToTheChild() throws Exception {
        String name = "pulsar.repl.east.shadowed";
        Split split = newSplit(0);
        String topic = split.topic;
        Segment parent = split.parent;
        Segment child = split.child;
        CompletableFuture<MessageId> refusedLater = new CompletableFuture<>();
        AtomicInteger sends = new AtomicInteger();
        pulsar.storage.sender((producer, message) -> {
            int n = sends.incrementAndGet();
            if (n == 2) {
                return refusedLater; // entry 1: never handed to the broker, refused once entry 2 is answered
            }
            CompletableFuture<MessageId> sent = PulsarStorage.Sender.PULSAR.send(producer, message);
            return n != 3 ? sent : sent.whenComplete((id, e) -> refusedLater.completeExceptionally(
                    new PulsarClientException.NotAllowedException("refused (stand-in)")));
        });
        try {
            ProducerSession onParent = pulsar.storage.session(topic, parent, name);
            assertThat(send(onParent, 0)).isEqualTo(ProducerSession.Receipt.PERSISTED);
            CompletableFuture<ProducerSession.Receipt> one = onParent.send(stamped(batch(1, 1, CompressionType.NONE),
                    SourcePosition.of(1, 1)), SourcePosition.of(1, 1)).toFuture();
            CompletableFuture<ProducerSession.Receipt> two = onParent.send(stamped(batch(2, 1, CompressionType.NONE),
                    SourcePosition.of(1, 2)), SourcePosition.of(1, 2)).toFuture();
            assertThat(two.get(30, TimeUnit.SECONDS)).isEqualTo(ProducerSession.Receipt.PERSISTED);
            assertThatThrownBy(() -> one.get(30, TimeUnit.SECONDS)).hasCauseInstanceOf(RemoteException.class);
            onParent.dispose();
        } finally {
            pulsar.storage.sender(PulsarStorage.Sender.PULSAR);
        }
        pulsar.storage.seal(topic, parent).block(Duration.ofSeconds(30));
        ProducerSession onChild = split.onChild(pulsar.storage, name);
        assertThat(send(onChild, 1)).as("refused by the parent: not there").isEqualTo(ProducerSession.Receipt.PERSISTED);
        assertThat(send(onChild, 2)).as("stored by the parent").isEqualTo(ProducerSession.Receipt.DUPLICATE);
        onChild.dispose();
        assertThat(pulsar.stored(topic, child)).hasSize(1);
    }

    /**
     * The same without the destination's segments: a session that does not know its segment's ancestors stores the
     * entries again (what {@link #entriesAKilledReplicatorLeftInASegmentThatSplitSinceAreNotStoredAgainOnItsChild}
     * guards against).
     */
    @Test
    void aSessionThatDoesNotKnowItsSegmentsAncestorsStoresWhatTheyHeldAgain() {
        Split split = splitWithASendStoredAndReportedRefused("pulsar.repl.east.blind");
        ProducerSession blind = pulsar.storage.session(split.topic, split.child, "pulsar.repl.east.blind");
        assertThat(send(blind, 1)).isEqualTo(ProducerSession.Receipt.PERSISTED);
        blind.dispose();
        assertThat(pulsar.stored(split.topic, split.child)).hasSize(1);
    }

    private record Split(String topic, Layout layout, Segment parent, Segment child) {
        /** A session on the child that knows the layout (its parent). */
        ProducerSession onChild(PulsarStorage storage, String producerName) {
            return storage.session(topic, child, producerName, child.range(), layout::segment);
        }
    }

    /** A segment and its child; entries 0 and 1 sent to the parent, both stored, 1 reported refused; then sealed. */
    private static Split splitWithASendStoredAndReportedRefused(String producerName) {
        Split split = newSplit(0);
        AtomicInteger sends = new AtomicInteger();
        pulsar.storage.sender((producer, message) -> {
            CompletableFuture<MessageId> sent = PulsarStorage.Sender.PULSAR.send(producer, message);
            return sends.incrementAndGet() != 2 ? sent : sent.thenCompose(id -> CompletableFuture.failedFuture(
                    new PulsarClientException.TopicTerminatedException("stored, then reported refused (stand-in)")));
        });
        try {
            ProducerSession onParent = pulsar.storage.session(split.topic, split.parent, producerName);
            assertThat(send(onParent, 0)).isEqualTo(ProducerSession.Receipt.PERSISTED);
            assertThatThrownBy(() -> send(onParent, 1)).isInstanceOf(RemoteException.class)
                    .satisfies(e -> assertThat(((RemoteException) e).kind()).isEqualTo(RemoteException.Kind.SEALED));
            onParent.dispose();
        } finally {
            pulsar.storage.sender(PulsarStorage.Sender.PULSAR);
        }
        pulsar.storage.seal(split.topic, split.parent).block(Duration.ofSeconds(30));
        return split;
    }

    /** A new topic's only segment and its split's child {@code childIndex} (0 or 1), both created. */
    private static Split newSplit(int childIndex) {
        String topic = pulsar.newTopic("orders");
        Layout initial = Layout.initial(1, 4, 0);
        Segment parent = initial.activeSegments().get(0);
        Layout split = initial.apply(Mutation.split(parent.id()), initial.epoch(), 0).layoutOrThrow();
        Segment child = split.activeSegments().get(childIndex);
        pulsar.storage.createSegment(topic, parent).block(Duration.ofSeconds(30));
        pulsar.storage.createSegment(topic, child).block(Duration.ofSeconds(30));
        return new Split(topic, split, parent, child);
    }

    private static ProducerSession.Receipt send(ProducerSession session, long entryId) {
        SourcePosition p = SourcePosition.of(1, entryId);
        return session.send(stamped(batch((int) entryId, 1, CompressionType.NONE), p), p)
                .block(Duration.ofSeconds(30));
    }
}
