package io.verbatim.testkit;

import io.verbatim.model.entry.Message;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;

/**
 * Keyed traffic for the demo and the end-to-end tests: per origin cluster, batches of messages with
 * keys drawn from a fixed key space (a few unkeyed), each message's payload naming its origin and
 * counter ({@link DeliveryChecks#payload}) so the checks can find every one of them.
 */
public final class Traffic {
    /** Where an origin's batches go: a producer's {@code sendNow}, say; returns the entries written. */
    @FunctionalInterface
    public interface Sender {
        List<?> sendNow(List<Message> batch);
    }

    /** One sender per origin, from what an origin's producer is ({@code producers} keep their order). */
    public static <P> Map<String, Sender> senders(Map<String, P> producers, Function<P, Sender> sender) {
        Map<String, Sender> out = new LinkedHashMap<>();
        producers.forEach((origin, p) -> out.put(origin, sender.apply(p)));
        return out;
    }

    private final Map<String, Sender> producers;
    private final int keys;
    private final double unkeyedShare;
    private final Map<String, AtomicLong> counters = new ConcurrentHashMap<>();
    private final Map<String, SplittableRandom> randoms = new ConcurrentHashMap<>();

    /**
     * @param producers one sender per origin cluster
     * @param keys how many distinct keys
     * @param unkeyedShare the share of messages without a key
     */
    public Traffic(Map<String, Sender> producers, int keys, double unkeyedShare, long seed) {
        this.producers = new LinkedHashMap<>(producers);
        this.keys = keys;
        this.unkeyedShare = unkeyedShare;
        SplittableRandom root = new SplittableRandom(seed);
        producers.keySet().forEach(origin -> {
            counters.put(origin, new AtomicLong());
            randoms.put(origin, root.split());
        });
    }

    /** One produce call of {@code size} messages on {@code origin}; returns the entries written. */
    public int send(String origin, int size) {
        AtomicLong counter = counter(origin);
        SplittableRandom random = Objects.requireNonNull(randoms.get(origin));
        List<Message> batch = new ArrayList<>(size);
        synchronized (counter) {
            for (int i = 0; i < size; i++) {
                long n = counter.getAndIncrement();
                byte[] payload = DeliveryChecks.payload(origin, n);
                batch.add(random.nextDouble() < unkeyedShare ? Message.unkeyed(payload)
                        : Message.of("key-" + random.nextInt(keys), payload));
            }
            // Inside the lock: counters reach the log in order, so per-origin order is the produce order.
            return Objects.requireNonNull(producers.get(origin)).sendNow(batch).size();
        }
    }

    /** One produce call on every origin. */
    public int round(int size) {
        int entries = 0;
        for (String origin : producers.keySet()) {
            entries += send(origin, size);
        }
        return entries;
    }

    /** Messages produced so far per origin. */
    public Map<String, Long> produced() {
        Map<String, Long> out = new LinkedHashMap<>();
        producers.keySet().forEach(o -> out.put(o, counter(o).get()));
        return out;
    }

    /** Messages produced so far on {@code origin}. */
    public long produced(String origin) {
        return counter(origin).get();
    }

    private AtomicLong counter(String origin) {
        return Objects.requireNonNull(counters.get(origin), origin);
    }

    public long total() {
        return counters.values().stream().mapToLong(AtomicLong::get).sum();
    }
}
