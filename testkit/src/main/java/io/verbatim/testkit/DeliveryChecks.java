package io.verbatim.testkit;

import io.verbatim.embedded.MemorySegments;
import io.verbatim.model.entry.Message;
import io.verbatim.testkit.ReplicationChecks.Check;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * What replicated data must satisfy once traffic stopped and replication settled: on what every cluster
 * stores ({@link ReplicationChecks}) and on what its consumers received. Messages carry
 * {@code origin/counter} as their payload ({@link #payload}), counters from 0 per origin.
 */
public final class DeliveryChecks {
    private DeliveryChecks() {
    }

    /** The payload of message {@code counter} produced on {@code origin}. */
    public static byte[] payload(String origin, long counter) {
        return (origin + "/" + counter).getBytes(StandardCharsets.UTF_8);
    }

    /**
     * Every check of {@link ReplicationChecks} on what the clusters store, duplicates allowed only in the
     * seal window (a copy came re-batched).
     *
     * @param produced messages produced per origin cluster (counters {@code 0..n-1})
     */
    public static List<Check> run(Map<String, MemorySegments> clusters, Map<String, Long> produced) {
        return ReplicationChecks.run(clusters, produced, true);
    }

    /**
     * On what consumers received, in delivery order: within a segment each key went to one consumer,
     * and per origin a key's messages came in order.
     */
    public static List<Check> consumers(String cluster, List<Delivered> deliveries) {
        ConsumerRecorder recorder = new ConsumerRecorder(cluster);
        deliveries.forEach(d -> recorder.record(d.consumer(), d.segmentId(), d.messages()));
        return recorder.checks();
    }

    /** What a consumer was given: its messages, from which segment, to which consumer of the subscription. */
    public record Delivered(int consumer, long segmentId, List<Message> messages) {
    }

    /**
     * The consumer checks kept as entries are dispatched (a subscription's {@code onDispatch} calling
     * {@link #record}), with a few bits per message: key affinity per segment, per-origin order per key, and, given what was
     * produced, every message delivered to some consumer.
     */
    public static final class ConsumerRecorder {
        private final String cluster;
        private final Map<String, Integer> owner = new HashMap<>();
        private final Map<String, Long> last = new HashMap<>();
        private final Map<String, BitSet> seen = new HashMap<>();
        private @Nullable String affinityFailure;
        private @Nullable String orderFailure;
        private long repeats;
        /** The first repeats, for a failure's message: which message, to which consumer, from which segment. */
        private final List<String> repeatSamples = new ArrayList<>();

        public ConsumerRecorder(String cluster) {
            this.cluster = cluster;
        }

        /** What {@code consumer} of the subscription was given from {@code segmentId}. */
        public synchronized void record(int consumer, long segmentId, List<Message> messages) {
            for (Message m : messages) {
                String[] id = new String(m.payloadBytes(), StandardCharsets.UTF_8).split("/", 3);
                int counter = Integer.parseInt(id[1]);
                BitSet s = seen.computeIfAbsent(id[0], o -> new BitSet());
                boolean repeat = s.get(counter);
                s.set(counter);
                if (repeat) {
                    repeats++;
                    if (repeatSamples.size() < 10) {
                        repeatSamples.add(id[0] + "/" + counter + " to consumer " + consumer + " from segment "
                                + segmentId);
                    }
                }
                String key = m.key().orElse(null);
                if (key == null) {
                    continue;
                }
                Integer was = owner.putIfAbsent(segmentId + "|" + key, consumer);
                if (was != null && was != consumer && affinityFailure == null) {
                    affinityFailure = "key " + key + " of segment " + segmentId + " went to consumers " + was
                            + " and " + consumer;
                }
                String k = id[0] + "|" + key;
                Long previous = last.get(k);
                if (previous != null && counter < previous && !repeat && orderFailure == null) {
                    orderFailure = "key " + key + " from " + id[0] + ": message " + counter + " delivered after "
                            + previous;
                }
                if (previous == null || counter > previous) {
                    last.put(k, (long) counter);
                }
            }
        }

        /** Messages delivered more than once (each repeat counted). */
        public synchronized long repeats() {
            return repeats;
        }

        /** The first (at most 10) repeats: the message, the consumer and the segment it came from again. */
        public synchronized List<String> repeatSamples() {
            return List.copyOf(repeatSamples);
        }

        /** Affinity and order. */
        public synchronized List<Check> checks() {
            return List.of(affinityFailure != null
                    ? new Check("key affinity per segment (" + cluster + ")", false, affinityFailure)
                    : new Check("key affinity per segment (" + cluster + ")", true, owner.size()
                            + " (segment, key) pairs, each with one consumer"),
                    orderFailure != null ? new Check("consumer order per key (" + cluster + ")", false, orderFailure)
                            : new Check("consumer order per key (" + cluster + ")", true, last.size()
                                    + " (origin, key) sequences"));
        }

        /** Affinity, order, and every message of {@code produced} delivered to a consumer. */
        public synchronized List<Check> checks(Map<String, Long> produced) {
            List<Check> out = new ArrayList<>(checks());
            String name = "every message delivered (" + cluster + ")";
            long total = 0;
            for (var origin : produced.entrySet()) {
                BitSet s = seen.getOrDefault(origin.getKey(), new BitSet());
                int missing = s.nextClearBit(0);
                if (missing < origin.getValue()) {
                    out.add(new Check(name, false, "message " + origin.getKey() + "/" + missing + " never reached a "
                            + "consumer (" + s.cardinality() + " of " + origin.getValue() + ")"));
                    return out;
                }
                total += origin.getValue();
            }
            out.add(new Check(name, true, total + " messages delivered"));
            return out;
        }
    }
}
