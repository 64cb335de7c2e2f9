package io.verbatim.bench;

import io.verbatim.model.Compression;
import io.verbatim.model.KeyHash;
import io.verbatim.model.Layout;
import io.verbatim.model.Segment;
import io.verbatim.model.entry.Message;
import io.verbatim.pipeline.ReplicationLink;
import io.verbatim.pipeline.ReplicatorConfig;
import io.verbatim.pipeline.ReplicatorMetrics;
import io.verbatim.pulsar.PulsarProducer;
import io.verbatim.pulsar.PulsarRemote;
import io.verbatim.pulsar.PulsarSegments;
import io.verbatim.pulsar.PulsarStorage;
import io.verbatim.pulsar.broker.PulsarProcess;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.pulsar.client.api.CompressionType;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.Messages;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.api.SubscriptionInitialPosition;
import org.apache.pulsar.client.api.BatchReceivePolicy;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * P1 and P2 on a real Pulsar 4.0.7 broker (a child process, as in the tests), side by side in one run: the
 * same stored entries (100 x 1 KiB LZ4 messages of one bucket each) copied three ways, each from its own
 * subscription on the same source topic, in a rotating order per round.
 * <ul>
 *   <li>verbatim: Verbatim's replication link to a destination with the same buckets (every entry fits);</li>
 *   <li>re-batch: the link to a destination with twice the buckets (every entry straddles one: the slow path);</li>
 *   <li>copy: a plain consume-and-produce copy through the same client (a consumer, then a batching LZ4
 *   producer, each message sent again).</li>
 * </ul>
 *
 * <p>Run from the repository's root after {@code mvn -B -q package -DskipTests}: {@code java -Xmx2g -cp
 * bench/target/benchmarks.jar io.verbatim.bench.PulsarBench [entries] [rounds]}.
 */
public final class PulsarBench {
    private static final String TOPIC = "persistent://public/default/orders";
    private static final int MESSAGES_PER_ENTRY = 100;
    private static final Duration WAIT = Duration.ofMinutes(10);
    /** Messages a cursor may hold ahead of demand: -Dverbatim.bench.receiverQueue, else the adapter's default. */
    private static final int RECEIVER_QUEUE = Integer.getInteger("verbatim.bench.receiverQueue",
            PulsarStorage.Settings.of("pulsar://x", "http://x", "").receiverQueue());

    private PulsarBench() {
    }

    public static void main(String[] args) throws Exception {
        int entries = args.length > 0 ? Integer.parseInt(args[0]) : 300;
        int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 3;
        if (System.getProperty("verbatim.pulsar.classpath") == null && System.getenv("VERBATIM_PULSAR_CLASSPATH") == null) {
            System.setProperty("verbatim.pulsar.classpath", "pulsar-standalone/target/standalone.classpath");
        }
        Path data = Files.createTempDirectory("verbatim-pulsar-bench");
        System.out.printf(Locale.ROOT, "starting a broker on %s%n", data);
        try (PulsarProcess broker = PulsarProcess.start(PulsarProcess.Options.of(data).withHeap("768m"))) {
            System.out.printf(Locale.ROOT, "broker ready in %d ms; %d calls of %d x 1 KiB (LZ4) per round, %d rounds;"
                    + " cursors hold up to %d messages ahead%n", broker.startMillis(), entries, MESSAGES_PER_ENTRY, rounds,
                    RECEIVER_QUEUE);
            Scheduler cpu = Schedulers.newBoundedElastic(2, 10_000, "bench-cpu");
            double[] verbatim = new double[rounds];
            double[] rebatch = new double[rounds];
            double[] copy = new double[rounds];
            long[] bytes = new long[1];
            for (int r = -1; r < rounds; r++) { // round -1 warms up
                Round round = new Round(broker, r + 1, cpu);
                bytes[0] = round.load(r < 0 ? entries / 3 : entries);
                double[] times = new double[3];
                for (int k = 0; k < 3; k++) {
                    int which = Math.floorMod(r + k, 3);
                    times[which] = which == 0 ? round.replicate("west", round.west)
                            : which == 1 ? round.replicate("westrb", round.westRebatch) : round.plainCopy();
                }
                round.close();
                if (r >= 0) {
                    verbatim[r] = bytes[0] / times[0];
                    rebatch[r] = bytes[0] / times[1];
                    copy[r] = bytes[0] / times[2];
                    System.out.printf(Locale.ROOT, "round %d: verbatim %.1f MB/s, re-batch %.1f MB/s, copy %.1f MB/s%n",
                            r + 1, verbatim[r] / 1e6, rebatch[r] / 1e6, copy[r] / 1e6);
                }
            }
            System.out.println();
            System.out.println("| measure | numerator (MB/s) | denominator (MB/s) | ratio (min / median / max) | goal |");
            System.out.println("| --- | --- | --- | --- | --- |");
            row("P1 verbatim / plain consume-and-produce copy", verbatim, copy, "≥ 0.90");
            row("P2 verbatim / always re-batch", verbatim, rebatch, "≥ 10");
            cpu.dispose();
        }
    }

    private static void row(String name, double[] num, double[] den, String goal) {
        double[] ratios = new double[num.length];
        for (int i = 0; i < num.length; i++) {
            ratios[i] = num[i] / den[i];
        }
        Arrays.sort(ratios);
        System.out.printf(Locale.ROOT, "| %s | %.1f | %.1f | %.2f / %.2f / %.2f | %s |%n", name, median(num) / 1e6,
                median(den) / 1e6, ratios[0], ratios[ratios.length / 2], ratios[ratios.length - 1], goal);
    }

    private static double median(double[] values) {
        double[] sorted = values.clone();
        Arrays.sort(sorted);
        return sorted[sorted.length / 2];
    }

    /** One round: a source cluster and its two destinations, as namespaces of the broker. */
    private static final class Round implements AutoCloseable {
        final PulsarStorage east;
        final PulsarStorage westStorage;
        final PulsarStorage westRebatchStorage;
        final PulsarSegments source;
        final PulsarSegments west;
        final PulsarSegments westRebatch;
        final PulsarProcess broker;
        final Scheduler cpu;
        final int n;
        int produced;

        Round(PulsarProcess broker, int n, Scheduler cpu) {
            this.broker = broker;
            this.n = n;
            this.cpu = cpu;
            east = storage("public/bench-east-" + n);
            westStorage = storage("public/bench-west-" + n);
            westRebatchStorage = storage("public/bench-westrb-" + n);
            source = PulsarSegments.open(east, TOPIC, List.of("west", "westrb"), Layout.initial(1, 4, 0),
                    Schedulers.parallel(), Duration.ofMillis(100)).blockOptional(WAIT).orElseThrow();
            west = PulsarSegments.open(westStorage, TOPIC, List.of(), Layout.initial(1, 4, 0), Schedulers.parallel(),
                    Duration.ofMillis(100)).blockOptional(WAIT).orElseThrow();
            westRebatch = PulsarSegments.open(westRebatchStorage, TOPIC, List.of(), Layout.initial(1, 8, 0),
                    Schedulers.parallel(), Duration.ofMillis(100)).blockOptional(WAIT).orElseThrow();
        }

        private PulsarStorage storage(String namespace) {
            PulsarStorage.Settings defaults = PulsarStorage.Settings.of(broker.serviceUrl(), broker.webUrl(), namespace);
            PulsarStorage s = PulsarStorage.connect(new PulsarStorage.Settings(defaults.serviceUrl(), defaults.adminUrl(),
                    defaults.namespace(), defaults.token(), defaults.trustCertsFile(), RECEIVER_QUEUE,
                    defaults.operationTimeout()));
            s.prepareNamespace().block(WAIT);
            return s;
        }

        /** Produces the entries; the bytes stored, as the source's admin stats count them. */
        long load(int entries) throws Exception {
            Segment segment = source.layout().segments().values().iterator().next();
            List<String> keys = keysOfBucket(segment, 0, 512);
            SplittableRandom random = new SplittableRandom(n);
            byte[] body = new byte[1024];
            try (PulsarProducer producer = new PulsarProducer(east, source, "bench-app-" + n)) {
                for (int e = 0; e < entries; e++) {
                    List<Message> batch = new ArrayList<>(MESSAGES_PER_ENTRY);
                    for (int i = 0; i < MESSAGES_PER_ENTRY; i++) {
                        for (int b = 0; b < body.length; b++) {
                            body[b] = (byte) ('a' + random.nextInt(8)); // compressible, as text is
                        }
                        batch.add(Message.of(keys.get(random.nextInt(keys.size())), body.clone()));
                    }
                    producer.produce(batch, Compression.LZ4).block(WAIT);
                }
            }
            produced = entries * MESSAGES_PER_ENTRY;
            try (var admin = org.apache.pulsar.client.admin.PulsarAdmin.builder().serviceHttpUrl(broker.webUrl())
                    .build()) {
                return admin.topics().getStats(east.segmentTopic(TOPIC, segment)).getStorageSize();
            }
        }

        /** Seconds until the link from the source to {@code destination} has nothing left to send. */
        double replicate(String remoteName, PulsarSegments destination) {
            PulsarRemote remote = new PulsarRemote(remoteName,
                    destination == west ? westStorage : westRebatchStorage, TOPIC, destination.layouts());
            ReplicatorMetrics metrics = new ReplicatorMetrics();
            long start = System.nanoTime();
            ReplicationLink link = ReplicationLink.builder().local(source)
                    .remote(remote).config(ReplicatorConfig.defaults("east")).metrics(metrics)
                    .timer(Schedulers.parallel()).cpu(cpu).build().start();
            long deadline = start + WAIT.toNanos();
            long cursorBacklog;
            while ((cursorBacklog = source.backlog(0, ReplicatorConfig.cursorName(remoteName))) > 0) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException(remoteName + ": " + cursorBacklog + " entries left after " + WAIT);
                }
                sleep(20);
            }
            double seconds = (System.nanoTime() - start) / 1e9;
            link.stop();
            remote.dispose();
            System.out.printf(Locale.ROOT, "  %s: %.2f s (%d entries verbatim, %d re-batched)%n", remoteName, seconds,
                    metrics.verbatimEntries(), metrics.rebatchedEntries());
            return seconds;
        }

        /** Seconds for a consumer and a batching producer of the same client to copy every message. */
        double plainCopy() throws Exception {
            Segment segment = source.layout().segments().values().iterator().next();
            String from = east.segmentTopic(TOPIC, segment);
            String to = "persistent://public/bench-west-" + n + "/copy";
            try (PulsarClient client = PulsarClient.builder().serviceUrl(broker.serviceUrl()).build();
                 Consumer<byte[]> consumer = client.newConsumer(Schema.BYTES).topic(from).subscriptionName("copy")
                         .subscriptionInitialPosition(SubscriptionInitialPosition.Earliest).receiverQueueSize(1000)
                         .batchReceivePolicy(BatchReceivePolicy.builder().maxNumMessages(1000)
                                 .timeout(10, TimeUnit.MILLISECONDS).build())
                         .subscribe();
                 Producer<byte[]> producer = client.newProducer(Schema.BYTES).topic(to).enableBatching(true)
                         .batchingMaxMessages(MESSAGES_PER_ENTRY).batchingMaxPublishDelay(2, TimeUnit.MILLISECONDS)
                         .compressionType(CompressionType.LZ4).blockIfQueueFull(true).create()) {
                long start = System.nanoTime();
                int copied = 0;
                List<CompletableFuture<?>> sends = new ArrayList<>();
                while (copied < produced) {
                    Messages<byte[]> got = consumer.batchReceive();
                    for (org.apache.pulsar.client.api.Message<byte[]> m : got) {
                        sends.add(producer.newMessage().key(m.getKey()).value(m.getValue()).sendAsync());
                        copied++;
                    }
                    consumer.acknowledge(got);
                }
                producer.flush();
                CompletableFuture.allOf(sends.toArray(CompletableFuture[]::new)).get(WAIT.toSeconds(), TimeUnit.SECONDS);
                double seconds = (System.nanoTime() - start) / 1e9;
                System.out.printf(Locale.ROOT, "  copy: %.2f s (%d messages)%n", seconds, copied);
                return seconds;
            }
        }

        @Override
        public void close() {
            east.close();
            westStorage.close();
            westRebatchStorage.close();
        }
    }

    /** Keys whose hashB is in bucket {@code bucket} of {@code segment}: so a batch is one entry of one bucket. */
    private static List<String> keysOfBucket(Segment segment, int bucket, int count) {
        List<String> keys = new ArrayList<>(count);
        for (int i = 0; keys.size() < count; i++) {
            String key = "key-" + i;
            if (segment.buckets().bucketOf(KeyHash.hashBOf(java.util.Optional.of(KeyHash.of(key)))) == bucket) {
                keys.add(key);
            }
        }
        return keys;
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis); // polling the broker's counters from a benchmark's main thread
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
