package io.verbatim.runtime;

import io.verbatim.model.entry.Message;
import io.verbatim.pipeline.memory.MemoryCluster;
import io.verbatim.pipeline.memory.ReplicationChecks;
import io.verbatim.pipeline.memory.ReplicationChecks.Check;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

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
    public static List<Check> run(Map<String, MemoryCluster> clusters, Map<String, Long> produced) {
        return ReplicationChecks.run(clusters, produced, true);
    }

    /** No replicator of {@code node} failing at the end ({@link ReplicationChecks#replicators}). */
    public static Check replicators(ClusterNode node) {
        return ReplicationChecks.replicators(node.name(), node.replicators());
    }

    /**
     * On what consumers received, in delivery order: within a segment each key went to one consumer,
     * and per origin a key's messages came in order.
     */
    public static List<Check> consumers(String cluster, List<Subscription.Delivery> deliveries) {
        Map<String, Integer> owner = new HashMap<>();
        Map<String, Long> last = new HashMap<>();
        Set<String> seen = new HashSet<>();
        for (Subscription.Delivery d : deliveries) {
            for (Message m : d.messages()) {
                if (m.key() == null) {
                    continue;
                }
                Integer was = owner.putIfAbsent(d.segmentId() + "|" + m.key(), d.consumer());
                if (was != null && was != d.consumer()) {
                    return List.of(new Check("key affinity per segment (" + cluster + ")", false, "key " + m.key()
                            + " of segment " + d.segmentId() + " went to consumers " + was + " and " + d.consumer()));
                }
                String[] id = new String(m.payloadBytes(), StandardCharsets.UTF_8).split("/", 2);
                long counter = Long.parseLong(id[1]);
                String k = id[0] + "|" + m.key();
                Long previous = last.get(k);
                boolean repeat = !seen.add(id[0] + "/" + counter);
                if (previous != null && counter < previous && !repeat) {
                    return List.of(new Check("consumer order per key (" + cluster + ")", false, "key " + m.key()
                            + " from " + id[0] + ": message " + counter + " delivered after " + previous));
                }
                if (previous == null || counter > previous) {
                    last.put(k, counter);
                }
            }
        }
        return List.of(new Check("key affinity per segment (" + cluster + ")", true, owner.size()
                + " (segment, key) pairs, each with one consumer"),
                new Check("consumer order per key (" + cluster + ")", true, last.size() + " (origin, key) sequences"));
    }
}
