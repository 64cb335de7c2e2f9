package io.verbatim.pulsar;

import static org.assertj.core.api.Assertions.assertThat;

import io.verbatim.model.Compression;
import io.verbatim.model.Layout;
import io.verbatim.model.Segment;
import io.verbatim.model.entry.Entries;
import io.verbatim.model.entry.Entry;
import io.verbatim.model.entry.Message;
import io.verbatim.pipeline.ReplicationLink;
import io.verbatim.pipeline.ReplicatorConfig;
import io.verbatim.pulsar.broker.PulsarProcess;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import reactor.core.scheduler.Schedulers;

/**
 * The broker under both clusters is stopped mid-stream and started again on its data: the replicator's
 * cursor, producer sessions and acknowledgements reconnect, its failures are retried with backoff, and every
 * message arrives, in order per key (a repeat is allowed only for what was in flight at the kill).
 */
class BrokerRestartReplicationTest {
    private static final Duration WAIT = Duration.ofSeconds(90);
    private static final String TOPIC = "persistent://public/default/orders";

    @Test
    void aBrokerStoppedAndStartedAgainMidStreamLosesNothing() throws Exception {
        bounce(false);
    }

    /** The same with a kill -9: the bookie syncs its journal before it acknowledges, so a kill loses nothing. */
    @Test
    void aBrokerKilledAndStartedAgainMidStreamLosesNothing() throws Exception {
        bounce(true);
    }

    private static void bounce(boolean kill) throws Exception {
        String how = kill ? "killed" : "stopped";
        Path data = Path.of("target", "pulsar-bounce-" + how + "-" + ProcessHandle.current().pid()).toAbsolutePath();
        PulsarProcess broker = PulsarProcess.start(PulsarProcess.Options.of(data)
                .withConf("managedLedgerDefaultMarkDeleteRateLimit", "0")); // acknowledgements persist at once
        PulsarStorage east = storage(broker, "public/east");
        PulsarStorage west = storage(broker, "public/west");
        Map<String, List<Integer>> produced = new TreeMap<>();
        int[] next = {0};
        ReplicationLink link = null;
        try {
            PulsarSegments eastSegments = PulsarSegments.open(east, TOPIC, List.of("west"), Layout.initial(1, 4, 0),
                    Schedulers.parallel(), Duration.ofMillis(100)).block(WAIT);
            PulsarSegments westSegments = PulsarSegments.open(west, TOPIC, List.of(), Layout.initial(1, 4, 0),
                    Schedulers.parallel(), Duration.ofMillis(100)).block(WAIT);
            PulsarRemote remote = new PulsarRemote("west", west, TOPIC, westSegments.layouts());
            link = ReplicationLink.builder().local(eastSegments).remote(remote)
                    .config(ReplicatorConfig.defaults("east").withRetry(Duration.ofMillis(100), Duration.ofSeconds(2), 0.5))
                    .timer(Schedulers.parallel()).cpu(Schedulers.boundedElastic()).build().start();
            try (PulsarProducer producer = new PulsarProducer(east, eastSegments, "app-before")) {
                produce(producer, 20, produced, next);
            }
            if (kill) {
                broker.kill(); // kill -9: what the broker acknowledged is in the bookie's synced journal
            } else {
                broker.close(); // SIGTERM
            }
            System.out.println("[pulsar-bounce] " + how + " the broker after " + next[0] + " messages");
            broker = broker.restart();
            System.out.printf("[pulsar-bounce] started again in %d ms%n", broker.startMillis());
            try (PulsarProducer producer = new PulsarProducer(east, eastSegments, "app-after")) {
                produce(producer, 20, produced, next);
            }
            long deadline = System.nanoTime() + WAIT.toNanos();
            while (!caughtUp(link)) {
                assertThat(System.nanoTime()).as("caught up after the restart: %s", link.status()).isLessThan(deadline);
                Thread.sleep(200); // polling a real broker's counters
            }

            Map<String, List<Integer>> received = new TreeMap<>();
            PulsarFixture reader = new PulsarFixture(west);
            for (Segment s : westSegments.layout().segments().values()) {
                for (Entry e : reader.stored(TOPIC, s)) {
                    for (Message m : Entries.messages(e)) {
                        String payload = new String(m.payloadBytes(), StandardCharsets.UTF_8);
                        received.computeIfAbsent(m.key().orElseThrow(), k -> new ArrayList<>())
                                .add(Integer.parseInt(payload.substring(1, payload.indexOf(' '))));
                    }
                }
            }
            PulsarFixture source = new PulsarFixture(east);
            int atEast = 0;
            for (Segment s : eastSegments.layout().segments().values()) {
                for (Entry e : source.stored(TOPIC, s)) {
                    atEast += Entries.messages(e).size();
                }
            }
            System.out.printf("[pulsar-bounce] %s: east holds %d messages, west %d%n", how, atEast,
                    received.values().stream().mapToInt(List::size).sum());
            int repeats = 0;
            for (String key : produced.keySet()) {
                List<Integer> got = received.getOrDefault(key, List.of());
                assertThat(got).as("key %s: nothing lost", key).containsAll(produced.get(key));
                assertThat(got.stream().distinct().toList()).as("key %s: in order", key).isEqualTo(produced.get(key));
                repeats += got.size() - produced.get(key).size();
            }
            assertThat(atEast).as("east keeps every message, those before the restart too").isEqualTo(next[0]);
            System.out.printf("[pulsar-bounce] %s: %d messages, all arrived; %d repeated (in flight at the stop); %s%n",
                    how, next[0], repeats, link.status());
        } finally {
            if (link != null) {
                link.stop();
            }
            east.close();
            west.close();
            broker.close();
        }
    }

    /** Asked of the broker, which may still be loading topics after the restart: not yet, then. */
    private static boolean caughtUp(ReplicationLink link) {
        try {
            return link.caughtUp();
        } catch (PulsarStorageException notYet) {
            return false;
        }
    }

    private static PulsarStorage storage(PulsarProcess broker, String namespace) {
        PulsarStorage s = PulsarStorage.connect(PulsarStorage.Settings.of(broker.serviceUrl(), broker.webUrl(),
                namespace));
        s.prepareNamespace().block(WAIT);
        return s;
    }

    private static void produce(PulsarProducer producer, int calls, Map<String, List<Integer>> produced, int[] next) {
        for (int c = 0; c < calls; c++) {
            List<Message> batch = new ArrayList<>();
            for (int i = 0; i < 16; i++) {
                String key = "k" + (next[0] % 32);
                produced.computeIfAbsent(key, k -> new ArrayList<>()).add(next[0]);
                batch.add(Message.of(key, ("m" + next[0] + " " + "x".repeat(100)).getBytes(StandardCharsets.UTF_8)));
                next[0]++;
            }
            producer.produce(batch, Compression.LZ4).block(WAIT);
        }
    }
}
