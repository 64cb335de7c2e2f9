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
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.pulsar.client.admin.PulsarAdmin;
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
 * bench/target/benchmarks.jar io.verbatim.bench.PulsarBench [entries] [rounds]}, or in the suite: {@code
 * ./verbatim bench --pulsar}.
 */
final class PulsarBench {
    private static final String TOPIC = "persistent://public/default/orders";
    private static final int MESSAGES_PER_ENTRY = 100;
    private static final Duration WAIT = Duration.ofMinutes(10);
    /** Messages a cursor may hold ahead of demand: -Dverbatim.bench.receiverQueue, else the adapter's default. */
    private static final int RECEIVER_QUEUE = Integer.getInteger("verbatim.bench.receiverQueue",
            PulsarStorage.Settings.of("pulsar://x", "http://x", "").receiverQueue());

    private PulsarBench() {
    }

    /** P1 on Pulsar: verbatim ÷ a plain consume-and-produce copy through the same client. */
    static final Row.Spec P1 = new Row.Spec("P1/pulsar", "fast-path replication ÷ plain consume-and-produce copy,"
            + " on a Pulsar broker (100 × 1 KiB LZ4 per entry)", "verbatim", "plain copy", "MB/s", Goal.atLeast(0.90));
    /** P2 on Pulsar: verbatim ÷ always re-batch (a destination with twice the buckets). */
    static final Row.Spec P2 = new Row.Spec("P2/pulsar", "fast path ÷ always re-batch, on a Pulsar broker", "verbatim",
            "always re-batch", "MB/s", Goal.atLeast(10));

    public static void main(String[] args) throws Exception {
        int entries = args.length > 0 ? Integer.parseInt(args[0]) : 300;
        int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 3;
        String started = Instant.now().truncatedTo(ChronoUnit.SECONDS).toString();
        long t0 = System.nanoTime();
        List<Row> rows = Suite.measure((sizes, log) -> ratios(entries, log), List.of(P1, P2), new Suite.Sizes(false),
                rounds, 1, System.out, "");
        System.out.println();
        double elapsed = (System.nanoTime() - t0) / 1e9;
        System.out.print(new Report(Machine.current(), rounds, 1, false, started, elapsed, rows).table());
        System.exit(0);
    }

    /**
     * P1 and P2 on a broker it starts (a child process, stopped on close): each round loads {@code entries}
     * into fresh namespaces and copies them the three ways, in an order rotating by round.
     */
    static Bench ratios(int entries, PrintStream log) throws Exception {
        if (System.getProperty("verbatim.pulsar.classpath") == null && System.getenv("VERBATIM_PULSAR_CLASSPATH") == null) {
            System.setProperty("verbatim.pulsar.classpath", "pulsar-standalone/target/standalone.classpath");
        }
        Path data = Files.createTempDirectory("verbatim-pulsar-bench");
        log.printf(Locale.ROOT, "  starting a broker on %s%n", data);
        PulsarProcess broker = PulsarProcess.start(PulsarProcess.Options.of(data).withHeap("768m"));
        log.printf(Locale.ROOT, "  broker ready in %d ms; %d calls of %d x 1 KiB (LZ4) per round; cursors hold up to %d"
                + " messages ahead%n", broker.startMillis(), entries, MESSAGES_PER_ENTRY, RECEIVER_QUEUE);
        Scheduler cpu = Schedulers.newBoundedElastic(2, 10_000, "bench-cpu");
        return new Bench() {
            private int namespaces;

            @Override
            public List<Row.Spec> specs() {
                return List.of(P1, P2);
            }

            @Override
            public List<Row.Sample> round(int r) throws Exception {
                Round round = new Round(broker, ++namespaces, cpu, log);
                try {
                    long bytes = round.load(entries);
                    double[] times = new double[3];
                    for (int k = 0; k < 3; k++) {
                        int which = Math.floorMod(r + k, 3);
                        times[which] = which == 0 ? round.replicate("west", round.west)
                                : which == 1 ? round.replicate("westrb", round.westRebatch) : round.plainCopy();
                    }
                    double verbatim = bytes / times[0] / 1e6;
                    double rebatch = bytes / times[1] / 1e6;
                    double copy = bytes / times[2] / 1e6;
                    log.printf(Locale.ROOT, "  verbatim %.1f MB/s, re-batch %.1f MB/s, copy %.1f MB/s%n", verbatim,
                            rebatch, copy);
                    return List.of(Row.Sample.of(verbatim, copy), Row.Sample.of(verbatim, rebatch));
                } finally {
                    round.close();
                }
            }

            @Override
            public void close() {
                cpu.dispose();
                broker.close();
            }
        };
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
        final PrintStream log;
        int produced;

        Round(PulsarProcess broker, int n, Scheduler cpu, PrintStream log) {
            this.broker = broker;
            this.log = log;
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
            try (var admin = PulsarAdmin.builder().serviceHttpUrl(broker.webUrl())
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
            log.printf(Locale.ROOT, "  %s: %.2f s (%d entries verbatim, %d re-batched)%n", remoteName, seconds,
                    metrics.verbatimEntries(), metrics.rebatchedEntries());
            return seconds;
        }

        /** Seconds for a consumer and a batching producer of the same client to copy every message. */
        double plainCopy() throws Exception {
            Segment segment = source.layout().segments().values().iterator().next();
            String from = east.segmentTopic(TOPIC, segment);
            String to = "persistent://public/bench-west-" + n + "/copy";
            // the namespace creates no topic on first use (PulsarStorage turns that off): made here, untimed
            try (var admin = PulsarAdmin.builder().serviceHttpUrl(broker.webUrl())
                    .build()) {
                admin.topics().createNonPartitionedTopic(to);
            }
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
                log.printf(Locale.ROOT, "  copy: %.2f s (%d messages)%n", seconds, copied);
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
            if (segment.buckets().bucketOf(KeyHash.hashBOf(Optional.of(KeyHash.of(key)))) == bucket) {
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
