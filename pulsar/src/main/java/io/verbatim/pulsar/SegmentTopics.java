package io.verbatim.pulsar;

import io.verbatim.model.Segment;

/**
 * How a segment is named on Pulsar 4.0, which has no {@code segment://} domain yet: a persistent topic
 * {@code persistent://<namespace>/<name>-<descriptor>}, where the descriptor is PIP-495's
 * {@code %04x-%04x-%d} (range start, range end, segment id), e.g.
 * {@code persistent://public/east/orders-0000-7fff-1}. The namespace is the cluster's own (two
 * clusters can share one broker as two namespaces), or else the scalable topic's.
 */
public final class SegmentTopics {
    private static final String PERSISTENT = "persistent://";
    private static final String TOPIC = "topic://";

    private SegmentTopics() {
    }

    /**
     * The segment topic of {@code segment} of the scalable topic {@code topic} ({@code persistent://t/ns/name}
     * or {@code topic://t/ns/name}), in {@code namespace} ({@code tenant/ns}), or in the topic's own one when
     * {@code namespace} is empty.
     */
    public static String of(String topic, Segment segment, String namespace) {
        String path;
        if (topic.startsWith(PERSISTENT)) {
            path = topic.substring(PERSISTENT.length());
        } else if (topic.startsWith(TOPIC)) {
            path = topic.substring(TOPIC.length());
        } else {
            throw new IllegalArgumentException("topic '" + topic + "' is neither persistent://tenant/ns/name nor "
                    + "topic://tenant/ns/name");
        }
        String[] parts = path.split("/", -1);
        if (parts.length != 3 || parts[0].isEmpty() || parts[1].isEmpty() || parts[2].isEmpty()) {
            throw new IllegalArgumentException("topic '" + topic + "' must name tenant/namespace/name");
        }
        String ns = namespace.isEmpty() ? parts[0] + "/" + parts[1] : namespace;
        return PERSISTENT + ns + "/" + parts[2] + "-" + segment.descriptor();
    }

    /**
     * The subscription of the replication cursor {@code cursorName}. The pipeline names its cursors
     * {@code pulsar.repl.<remote>} as PIP-495 does, but Pulsar reserves subscription names starting
     * {@code pulsar.repl} for its own replicators and refuses them; Verbatim's is {@code verbatim.repl.<remote>}.
     */
    public static String subscription(String cursorName) {
        String reserved = "pulsar.repl";
        return cursorName.startsWith(reserved) ? "verbatim.repl" + cursorName.substring(reserved.length()) : cursorName;
    }
}
