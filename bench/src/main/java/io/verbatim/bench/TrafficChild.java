package io.verbatim.bench;

import io.verbatim.model.Compression;
import io.verbatim.model.KeyHash;
import io.verbatim.model.Layout;
import io.verbatim.model.Segment;
import io.verbatim.model.entry.Message;
import io.verbatim.model.entry.SourcePosition;
import io.verbatim.pulsar.PulsarProducer;
import io.verbatim.pulsar.PulsarSegments;
import io.verbatim.pulsar.PulsarStorage;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import reactor.core.publisher.Flux;
import reactor.core.scheduler.Schedulers;

/**
 * The replication CPU benchmark's traffic, from a JVM of its own so that producing it costs the measured JVM
 * nothing: {@code bytes} of 1 KiB messages (compressible, as text is), 100 a call and LZ4, each call's keys all of
 * one segment (so a call is one entry) and the segments in turn, written straight to a cluster's segments on
 * Pulsar as its brokers write them ({@link PulsarProducer}), {@value #IN_FLIGHT} calls in flight. Connected, it
 * prints {@code READY} and waits for a line on its standard input before it produces. It ends by printing
 * {@code TRAFFIC entries=… bytes=… seconds=…}: the entries stored and the messages' bytes.
 *
 * <p>Arguments: serviceUrl adminUrl namespace topic segments bucketBudget bytes seed.
 */
final class TrafficChild {
    static final int MESSAGES_PER_CALL = 100;
    static final int MESSAGE_BYTES = 1024;
    /** Calls in flight at once (on different segments, as the segments are taken in turn). */
    static final int IN_FLIGHT = 8;

    private TrafficChild() {
    }

    /** What a run stored. */
    record Stored(long entries, long bytes, double seconds) {
    }

    public static void main(String[] args) {
        String topic = args[3];
        int segmentCount = Integer.parseInt(args[4]);
        Layout layout = Layout.initial(segmentCount, Integer.parseInt(args[5]), 0);
        long bytes = Long.parseLong(args[6]);
        SplittableRandom random = new SplittableRandom(Long.parseLong(args[7]));
        PulsarStorage storage = PulsarStorage.connect(PulsarStorage.Settings.of(args[0], args[1], args[2]));
        PulsarSegments segments = PulsarSegments.open(storage, topic, List.of(), layout, Schedulers.parallel(),
                Duration.ofSeconds(1)).blockOptional(Duration.ofMinutes(5)).orElseThrow();
        List<List<String>> keys = new ArrayList<>();
        for (Segment s : layout.segments().values()) {
            keys.add(keysOf(s, 64));
        }
        System.out.println("READY");
        System.out.flush();
        try {
            new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)).readLine(); // "go"
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
        long start = System.nanoTime();
        long calls = (bytes + (long) MESSAGES_PER_CALL * MESSAGE_BYTES - 1) / ((long) MESSAGES_PER_CALL * MESSAGE_BYTES);
        Set<SourcePosition> entries = ConcurrentHashMap.newKeySet();
        try (PulsarProducer producer = new PulsarProducer(storage, segments, "bench-traffic-" + args[7])) {
            Flux.range(0, (int) calls).map(call -> batch(keys.get(call % keys.size()), random))
                    .flatMap(batch -> producer.produce(batch, Compression.LZ4), IN_FLIGHT)
                    .doOnNext(at -> at.forEach(p -> entries.add(new SourcePosition(p.ledgerId(), p.entryId(), 0))))
                    .blockLast(Duration.ofMinutes(10));
        }
        long sent = calls * MESSAGES_PER_CALL * MESSAGE_BYTES;
        double seconds = (System.nanoTime() - start) / 1e9;
        storage.close();
        System.out.printf(Locale.ROOT, "TRAFFIC entries=%d bytes=%d seconds=%.3f%n", entries.size(), sent, seconds);
        System.exit(0);
    }

    /** One call's messages: its keys all of one segment, 1 KiB of compressible bytes each. */
    private static List<Message> batch(List<String> keys, SplittableRandom random) {
        List<Message> batch = new ArrayList<>(MESSAGES_PER_CALL);
        for (int i = 0; i < MESSAGES_PER_CALL; i++) {
            byte[] body = new byte[MESSAGE_BYTES];
            for (int b = 0; b < body.length; b++) {
                body[b] = (byte) ('a' + random.nextInt(8));
            }
            batch.add(Message.of(keys.get(random.nextInt(keys.size())), body));
        }
        return batch;
    }

    private static List<String> keysOf(Segment segment, int count) {
        List<String> keys = new ArrayList<>(count);
        for (int i = 0; keys.size() < count; i++) {
            String key = "key-" + i;
            if (segment.range().contains(KeyHash.of(key).segmentHash())) {
                keys.add(key);
            }
        }
        return keys;
    }

    /**
     * Runs the child to its end (it inherits this JVM's class path): {@code go} runs once it is connected and
     * ready, just before it is told to produce. What it stored.
     */
    static Stored run(List<String> args, Runnable go) throws Exception {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<String> command = new ArrayList<>(List.of(java, "-Xmx256m", "-XX:+UseSerialGC", "-cp",
                System.getProperty("java.class.path"), TrafficChild.class.getName()));
        command.addAll(args);
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        ArrayDeque<String> tail = new ArrayDeque<>();
        Stored stored = null;
        try (BufferedReader in = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
            for (String line = in.readLine(); line != null; line = in.readLine()) {
                if (line.equals("READY")) {
                    go.run();
                    p.getOutputStream().write("go\n".getBytes(StandardCharsets.UTF_8));
                    p.getOutputStream().flush();
                }
                if (line.startsWith("TRAFFIC ")) {
                    String[] kv = line.substring(8).split(" ");
                    stored = new Stored(Long.parseLong(kv[0].substring(8)), Long.parseLong(kv[1].substring(6)),
                            Double.parseDouble(kv[2].substring(8)));
                }
                tail.addLast(line);
                if (tail.size() > 20) {
                    tail.removeFirst();
                }
            }
        }
        if (!p.waitFor(10, TimeUnit.MINUTES)) {
            p.destroyForcibly();
            throw new IllegalStateException("the traffic child did not end in 10 minutes");
        }
        if (p.exitValue() != 0 || stored == null) {
            throw new IllegalStateException("the traffic child failed (exit " + p.exitValue() + "): "
                    + String.join(" | ", tail));
        }
        return stored;
    }
}
