package io.verbatim.pulsar;

import static org.assertj.core.api.Assertions.assertThat;

import io.verbatim.model.Segment;
import io.verbatim.model.entry.SourcePosition;
import io.verbatim.pipeline.ReplicationCursorContract;
import io.verbatim.pipeline.SourceSegmentLog;
import io.verbatim.pipeline.StartAt;
import io.verbatim.pipeline.StoredEntry;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClientException;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.impl.RawConsumerEvents;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.test.StepVerifier;
import reactor.util.retry.Retry;

/** A durable subscription read raw passes the cursor contract, on a real broker. */
class PulsarCursorTest extends ReplicationCursorContract {
    private static PulsarFixture pulsar;
    /** Each log's scalable topic, to produce to and seal. */
    private final Map<SourceSegmentLog, String> topics = new HashMap<>();
    private final Segment segment = PulsarFixture.onlySegment();

    @BeforeAll
    static void connect() {
        pulsar = new PulsarFixture("public/cursor-contract");
    }

    @AfterAll
    static void disconnect() {
        pulsar.close();
    }

    /**
     * A cursor opening cancelled while its subscription is being made (a replicator stopped as it started) leaves
     * no consumer holding the exclusive subscription: the next opening reads it from its first entry.
     */
    @Test
    void aCursorOpeningCancelledHalfwayLeavesNoConsumerOnTheSubscription() {
        SourceSegmentLog log = newLog();
        append(log, 3);
        log.cursor("cancelled", StartAt.EARLIEST).subscribe().dispose();
        var cursor = log.cursor("cancelled", StartAt.EARLIEST).block(Duration.ofSeconds(30));
        var first = cursor.read().next().block(Duration.ofSeconds(30));
        assertThat(first).as("read, not refused as busy").isNotNull();
        assertThat(first.position().entryId()).isZero();
    }

    @Test
    void aTopicUnloadedMidReadRepeatsAndLosesNothing() throws Exception {
        SourceSegmentLog log = newLog();
        append(log, 40);
        var cursor = log.cursor("c", StartAt.EARLIEST).block(Duration.ofSeconds(30));
        String name = pulsar.storage.segmentTopic(topics.get(log), segment);
        List<SourcePosition> read = new CopyOnWriteArrayList<>();
        var acknowledging = cursor.read().concatMap(e -> cursor.acknowledge(e.position()).thenReturn(e))
                .doOnNext(e -> read.add(e.position()));
        StepVerifier.create(acknowledging, 10)
                .expectNextCount(10)
                .then(() -> {
                    try {
                        pulsar.storage.admin().topics().unload(name); // the consumer reconnects; held entries come again
                    } catch (Exception e) {
                        throw new IllegalStateException(e);
                    }
                })
                .thenRequest(100)
                .then(() -> append(log, 10))
                .expectNextCount(40)
                .then(() -> seal(log))
                .expectComplete()
                .verify(Duration.ofSeconds(60));
        assertThat(read).hasSize(50).doesNotHaveDuplicates().isSorted(); // positions: a reload starts a new ledger
    }

    /**
     * Entries acknowledged one by one past the mark-delete position are kept by the broker: the next read of the
     * subscription (here a new cursor, as the next owner of a segment makes) gives only the others.
     */
    @Test
    void entriesAcknowledgedAloneAreNotReadAgainByTheNextReader() throws Exception {
        SourceSegmentLog log = newLog();
        append(log, 5);
        String name = pulsar.storage.segmentTopic(topics.get(log), segment);
        var cursor = log.cursor("alone", StartAt.EARLIEST).block(Duration.ofSeconds(30));
        List<StoredEntry> first = new CopyOnWriteArrayList<>();
        var reading = cursor.read().subscribe(first::add);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (first.size() < 5 && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        assertThat(first).hasSize(5);
        cursor.acknowledgeOne(first.get(2).position());
        cursor.acknowledgeOne(first.get(3).position());
        cursor.acknowledge(first.get(0).position()).block(Duration.ofSeconds(30));
        String subscription = SegmentTopics.subscription("alone");
        while (System.nanoTime() < deadline) {
            var stats = pulsar.storage.admin().topics().getInternalStats(name).cursors.get(subscription);
            if (stats != null && stats.individuallyDeletedMessages != null
                    && stats.individuallyDeletedMessages.contains(first.get(3).position().entryId() + "]")) {
                break;
            }
            Thread.sleep(20);
        }
        reading.dispose();

        var next = log.cursor("alone", StartAt.EARLIEST).block(Duration.ofSeconds(30));
        List<Long> again = next.read().take(2).map(e -> e.position().entryId()).collectList()
                .block(Duration.ofSeconds(30));
        assertThat(again).containsExactly(first.get(1).position().entryId(), first.get(4).position().entryId());
    }

    /**
     * A former owner paused (here a process stopped with SIGSTOP) still holds the exclusive subscription as far as
     * the broker knows: a new owner's subscribe makes the broker check that consumer's connection (a ping it must
     * answer within 5 s, Pulsar's connection liveness check) and, unanswered, close it and take the new consumer.
     * So the next owner reads within seconds, not after the broker's keep-alive (30 s and more); nothing of ours
     * needs to unload the topic.
     */
    @Test
    void aSubscriptionHeldByAPausedProcessIsTakenOverWithinSeconds() throws Exception {
        SourceSegmentLog log = newLog();
        append(log, 3);
        String name = pulsar.storage.segmentTopic(topics.get(log), segment);
        Process holder = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xmx64m",
                "-cp", System.getProperty("java.class.path"), HoldingConsumer.class.getName(),
                pulsar.storage.settings().serviceUrl(), name, SegmentTopics.subscription("held"))
                .redirectErrorStream(true).start();
        try {
            var lines = new java.io.BufferedReader(new java.io.InputStreamReader(holder.getInputStream(),
                    java.nio.charset.StandardCharsets.UTF_8));
            String line;
            do {
                line = lines.readLine();
            } while (line != null && !line.equals("holding"));
            assertThat(line).as("the holder subscribed").isEqualTo("holding");
            assertThat(new ProcessBuilder("kill", "-STOP", Long.toString(holder.pid())).start().waitFor()).isZero();

            long start = System.nanoTime();
            var cursor = log.cursor("held", StartAt.EARLIEST).block(Duration.ofSeconds(30));
            var first = Flux.defer(cursor::read).retryWhen(Retry.fixedDelay(200, Duration.ofMillis(100))).next()
                    .block(Duration.ofSeconds(20));
            long ms = (System.nanoTime() - start) / 1_000_000;
            assertThat(first).as("read, after " + ms + " ms").isNotNull();
            assertThat(first.position().entryId()).isZero();
            System.out.println("a subscription held by a paused process: read after " + ms + " ms");
            assertThat(ms).as("within the liveness check plus a few seconds, not the broker's keep-alive")
                    .isLessThan(15_000);
        } finally {
            holder.destroyForcibly();
        }
    }

    /**
     * The broker says a terminated topic ended once the subscription read all it had, but may store after that a
     * write that was at the bookies as the topic was terminated (Pulsar 4.0; the fault suite's sealed segment left
     * with one entry unread for good, its children's replication waiting on it). Here the broker's word comes before
     * the last entry is stored: the read does not end there, it reads that entry, and ends once the seal is over.
     */
    @Test
    void anEndOfTopicSaidBeforeTheLastEntryIsStoredDoesNotEndTheRead() {
        SourceSegmentLog log = newLog();
        append(log, 1);
        PulsarCursor cursor = (PulsarCursor) log.cursor("early", StartAt.EARLIEST)
                .block(Duration.ofSeconds(30));
        var acknowledging = cursor.read().concatMap(e -> cursor.acknowledge(e.position()).thenReturn(e));
        StepVerifier.create(acknowledging)
                .expectNextCount(1)
                .then(() -> RawConsumerEvents.reachedEndOfTopic(
                        Objects.requireNonNull(cursor.readingConsumer(), "the read's consumer")))
                .then(() -> append(log, 1))
                .expectNextCount(1)
                .then(() -> seal(log))
                .expectComplete()
                .verify(Duration.ofSeconds(60));
    }

    /**
     * A sealed segment's read ends once it emitted the last entry, acknowledged or not: a replicator acknowledges
     * behind its sends, so when the broker says the end its subscription is often still short of the last entry,
     * and the broker need not say it again (the fault suite on Pulsar: a sealed segment whose replication never
     * completed, its children's waiting on it).
     */
    @Test
    void aSealedSegmentsReadEndsOnceItEmittedTheLastEntryEvenIfNotYetAcknowledged() {
        SourceSegmentLog log = newLog();
        append(log, 3);
        var cursor = log.cursor("late-acks", StartAt.EARLIEST).block(Duration.ofSeconds(30));
        StepVerifier.create(cursor.read())
                .expectNextCount(3)
                .then(() -> seal(log))
                .expectComplete()
                .verify(Duration.ofSeconds(60));
    }

    /**
     * The same for a segment sealed before the read opened (by an earlier run of the node): the broker says nothing
     * while entries are unacknowledged, and no seal comes; the layout's word that the segment is sealed is enough.
     */
    @Test
    void aReadOfASegmentSealedBeforeItOpenedEndsOnceItEmittedTheLastEntry() {
        SourceSegmentLog active = newLog();
        String topic = topics.get(active);
        active.cursor("before", StartAt.EARLIEST).block(Duration.ofSeconds(30));
        append(active, 3);
        try { // by the broker alone, as an earlier run of the node did: this process saw no seal
            pulsar.storage.admin().topics().terminateTopic(pulsar.storage.segmentTopic(topic, segment));
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
        SourceSegmentLog sealed = pulsar.storage.log(topic, segment.sealed(1, 0, List.of()));
        var cursor = sealed.cursor("before", StartAt.EARLIEST).block(Duration.ofSeconds(30));
        StepVerifier.create(cursor.read())
                .expectNextCount(3)
                .expectComplete()
                .verify(Duration.ofSeconds(60));
    }

    @Override
    protected SourceSegmentLog newLog() {
        String topic = pulsar.newTopic("orders");
        pulsar.storage.createSegment(topic, segment).block(Duration.ofSeconds(30));
        SourceSegmentLog log = pulsar.storage.log(topic, segment);
        topics.put(log, topic);
        return log;
    }

    @Override
    protected void append(SourceSegmentLog log, int count) {
        String name = pulsar.storage.segmentTopic(topics.get(log), segment);
        try (Producer<byte[]> producer = pulsar.storage.client().newProducer(Schema.BYTES).topic(name)
                .enableBatching(false).create()) {
            for (int i = 0; i < count; i++) {
                producer.send(new byte[] {(byte) i});
            }
        } catch (PulsarClientException e) {
            throw new IllegalStateException("cannot append to " + name, e);
        }
    }

    @Override
    protected void seal(SourceSegmentLog log) {
        pulsar.storage.seal(topics.get(log), segment).block(Duration.ofSeconds(30));
    }
}
