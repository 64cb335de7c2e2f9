package io.verbatim.pulsar;

import static org.assertj.core.api.Assertions.assertThat;

import io.verbatim.model.Compression;
import io.verbatim.model.Layout;
import io.verbatim.model.Mutation;
import io.verbatim.model.Outcome;
import io.verbatim.model.Segment;
import io.verbatim.model.entry.Entries;
import io.verbatim.model.entry.Entry;
import io.verbatim.model.entry.Message;
import io.verbatim.model.entry.SourcePosition;
import io.verbatim.pipeline.ReplicationLink;
import io.verbatim.pipeline.ReplicatorConfig;
import io.verbatim.pipeline.StoredEntry;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.api.PulsarClientException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.core.scheduler.Schedulers;

/**
 * Replication from east to west, each cluster a namespace of the test JVM's broker (a child process),
 * through the pipeline's replication link on raw Pulsar entries: splits during traffic, a replicator
 * stopped and started again mid-stream, and the destination read back raw.
 */
class PulsarReplicationTest {
    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final String TOPIC = "persistent://public/default/orders";
    private static int run;

    private PulsarFixture east;
    private PulsarFixture west;
    private PulsarSegments eastSegments;
    private PulsarSegments westSegments;
    private PulsarRemote remote;
    private PulsarProducer producer;
    private final List<ReplicationLink> links = new ArrayList<>();
    /** Every message produced, as key -> payloads in order. */
    private final Map<String, List<String>> produced = new TreeMap<>();
    private int next;

    @BeforeEach
    void clusters() {
        run++;
        east = new PulsarFixture("public/east-" + run);
        west = new PulsarFixture("public/west-" + run);
        eastSegments = PulsarSegments.open(east.storage, TOPIC, List.of("west"), Layout.initial(1, 4, 0),
                Schedulers.parallel(), Duration.ofMillis(100)).block(WAIT);
        westSegments = PulsarSegments.open(west.storage, TOPIC, List.of(), Layout.initial(1, 4, 0),
                Schedulers.parallel(), Duration.ofMillis(100)).block(WAIT);
        remote = new PulsarRemote("west", west.storage, TOPIC, westSegments.layouts());
        producer = new PulsarProducer(east.storage, eastSegments, "app-east-" + run);
    }

    @AfterEach
    void close() {
        links.forEach(ReplicationLink::stop);
        producer.close();
        remote.dispose();
        east.close();
        west.close();
    }

    @Test
    void aSourceSplitAndARestartedReplicatorMidStreamLoseAndRepeatNothing() {
        ReplicationLink link = startLink();
        produce(20);
        split(eastSegments, 0);
        produce(20);
        link.stop(); // a replicator crash: only its durable cursors remain
        produce(10);
        startLink();
        produce(10);
        awaitCaughtUp();

        Map<String, List<String>> received = receivedAtWest();
        System.out.println("[pulsar-repl] " + summary(received));
        for (String key : produced.keySet()) {
            assertThat(ids(received.getOrDefault(key, List.of()))).as("key %s: once each, in order", key)
                    .isEqualTo(ids(produced.get(key)));
        }
        FastPath fast = fastPathBytes();
        System.out.printf("[pulsar-repl] %d messages in %d entries at west: %d verbatim (payload bytes equal), %d"
                + " re-batched parts%n", next, fast.verbatim + fast.parts, fast.verbatim, fast.parts);
        assertThat(fast.verbatim).as("entries forwarded verbatim").isPositive();
    }

    @Test
    void aDestinationSplitMidStreamLosesNothing() {
        startLink();
        produce(20);
        split(westSegments, 0);
        produce(20);
        split(eastSegments, 0);
        produce(20);
        awaitCaughtUp();

        Map<String, List<String>> received = receivedAtWest();
        System.out.println("[pulsar-repl] " + summary(received));
        int duplicates = 0;
        for (String key : produced.keySet()) {
            List<String> got = received.getOrDefault(key, List.of());
            assertThat(ids(got)).as("key %s: nothing lost", key).containsAll(ids(produced.get(key)));
            duplicates += got.size() - produced.get(key).size();
            assertThat(ids(got).stream().distinct().toList()).as("key %s: in order", key)
                    .isEqualTo(ids(produced.get(key)));
        }
        System.out.printf("[pulsar-repl] destination split: %d messages, %d repeated by the seal window%n", next,
                duplicates);
    }

    /** The message numbers of payloads, for short failure messages. */
    private static List<Integer> ids(List<String> payloads) {
        return payloads.stream().map(p -> Integer.parseInt(p.substring(1, p.indexOf(' ')))).toList();
    }

    private String summary(Map<String, List<String>> received) {
        int got = received.values().stream().mapToInt(List::size).sum();
        long distinct = received.values().stream().flatMap(List::stream).distinct().count();
        return "produced " + next + ", received " + got + " (" + distinct + " distinct) in west's segments "
                + westSegments.layout().segments().keySet() + "; link " + links.get(links.size() - 1).status();
    }

    @Test
    void theHeadOfManyPipelinedSendsFailingOnceLosesNothing() {
        // Pulsar #26113: the head of a pipeline fails as it is issued (a full queue), the ones after it are
        // stored and move the broker's dedup watermark past it, and its resend is answered as a duplicate
        produce(20); // a backlog, so the replicator's first sends go out together
        AtomicBoolean failed = new AtomicBoolean();
        west.storage.sender((p, m) -> failed.compareAndSet(false, true)
                ? CompletableFuture.failedFuture(
                        new PulsarClientException.ProducerQueueIsFullError("injected"))
                : PulsarStorage.Sender.PULSAR.send(p, m));
        startLink();
        produce(10);
        awaitCaughtUp();

        assertThat(failed).as("the head's send failed").isTrue();
        Map<String, List<String>> received = receivedAtWest();
        System.out.println("[pulsar-repl] #26113: " + summary(received));
        for (String key : produced.keySet()) {
            assertThat(ids(received.getOrDefault(key, List.of()))).as("key %s: once each, in order", key)
                    .isEqualTo(ids(produced.get(key)));
        }
    }

    @Test
    void aHeadRefusedWhileLaterEntriesAreStoredIsNeverTakenForADuplicate() {
        // Pulsar #26113 as a broker can cause it: the head is refused (say, a delivery delay the destination does
        // not allow) and the entries after it are stored; its resend is then below the dedup watermark
        produce(20);
        AtomicBoolean refused = new AtomicBoolean();
        west.storage.sender((p, m) -> {
            if (refused.compareAndSet(false, true)) {
                var later = new CompletableFuture<MessageId>();
                CompletableFuture.delayedExecutor(300, TimeUnit.MILLISECONDS)
                        .execute(() -> later.completeExceptionally(
                                new PulsarClientException.NotAllowedException("injected")));
                return later; // never sent: refused after the ones behind it went
            }
            return PulsarStorage.Sender.PULSAR.send(p, m);
        });
        startLink();
        Segment source = eastSegments.layout().segment(0).orElseThrow();
        SourcePosition head = east.storedRaw(TOPIC, source).get(0).position();
        String destination = west.storage.segmentTopic(TOPIC, westSegments.layout().segment(0).orElseThrow());
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (!west.storage.isShadowed(destination, "pulsar.repl.east.0", head)) {
            assertThat(System.nanoTime()).as("the head %s is known to be shadowed", head).isLessThan(deadline);
            sleepBriefly();
        }
        // its resends are answered as duplicates and refused as such: it is never acknowledged, so never lost
        for (int i = 0; i < 20; i++) {
            sleepBriefly();
        }
        assertThat(eastSegments.backlog(0, ReplicatorConfig.cursorName("west"))).as("the head is still held").isPositive();
        assertThat(produced.values().stream().mapToInt(List::size).sum()).isEqualTo(320);
        System.out.println("[pulsar-repl] a refused head shadowed by stored entries: " + summary(receivedAtWest()));
    }

    private ReplicationLink startLink() {
        ReplicationLink link = ReplicationLink.builder().local(eastSegments).remote(remote)
                .config(ReplicatorConfig.defaults("east").withRetry(Duration.ofMillis(50), Duration.ofSeconds(1), 0.5))
                .timer(Schedulers.parallel()).cpu(Schedulers.boundedElastic()).build().start();
        links.add(link);
        return link;
    }

    private void produce(int calls) {
        for (int c = 0; c < calls; c++) {
            List<Message> batch = new ArrayList<>();
            for (int i = 0; i < 16; i++) {
                String key = "k" + (next % 32);
                String payload = "m" + next + " " + "x".repeat(200);
                next++;
                produced.computeIfAbsent(key, k -> new ArrayList<>()).add(payload);
                batch.add(Message.of(key, payload.getBytes(StandardCharsets.UTF_8)));
            }
            producer.produce(batch, Compression.LZ4).block(WAIT);
        }
    }

    private static void split(PulsarSegments segments, long id) {
        Layout current = segments.layout();
        Outcome outcome = current.apply(Mutation.split(id), current.epoch(), System.currentTimeMillis());
        assertThat(outcome).isInstanceOf(Outcome.Applied.class);
        assertThat(segments.adopt(((Outcome.Applied) outcome).layout()).block(WAIT)).isTrue();
    }

    private void awaitCaughtUp() {
        long deadline = System.nanoTime() + WAIT.toNanos();
        ReplicationLink last = links.get(links.size() - 1);
        while (!last.caughtUp()) {
            assertThat(System.nanoTime()).as("caught up within %s: %s", WAIT, last.status()).isLessThan(deadline);
            sleepBriefly();
        }
    }

    /** West's messages by key, segments in id order (a child's id is above its parents'). */
    private Map<String, List<String>> receivedAtWest() {
        Map<String, List<String>> out = new TreeMap<>();
        for (Segment s : westSegments.layout().segments().values()) {
            for (Entry e : west.stored(TOPIC, s)) {
                for (Message m : Entries.messages(e)) {
                    out.computeIfAbsent(m.key().orElseThrow(), k -> new ArrayList<>())
                            .add(new String(m.payloadBytes(), StandardCharsets.UTF_8));
                }
            }
        }
        return out;
    }

    private record FastPath(int verbatim, int parts) {
    }

    /** Every whole entry at west carries the payload bytes of the east entry it names. */
    private FastPath fastPathBytes() {
        Map<SourcePosition, Entry> source = new HashMap<>();
        for (Segment s : eastSegments.layout().segments().values()) {
            for (StoredEntry e : east.storedRaw(TOPIC, s)) {
                source.put(e.position(), Entry.parse(e.bytes()));
            }
        }
        int verbatim = 0;
        int parts = 0;
        for (Segment s : westSegments.layout().segments().values()) {
            for (Entry e : west.stored(TOPIC, s)) {
                SourcePosition at = WirePositions.decode(e.sourcePosition().orElseThrow());
                if (!at.isWhole()) {
                    parts++;
                    continue;
                }
                Entry original = source.get(at);
                assertThat(original).as("west's entry names east's %s", at).isNotNull();
                assertThat(e.payload()).as("payload of %s", at).isEqualTo(original.payload());
                assertThat(e.metadata().getReplicatedFrom()).isEqualTo("east");
                verbatim++;
            }
        }
        return new FastPath(verbatim, parts);
    }

    private static void sleepBriefly() {
        try {
            Thread.sleep(100); // polling a real broker's counters, not timing the code under test
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
