package io.verbatim.exchange;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * One cluster's side of the exchange as {@code GET /admin/v2/scalable/status} shows it (E11): its caps,
 * whether its own changes wait after a failover, the exchange's verdict on each peer, and each topic's
 * layout, caps, cold marks, latest changes and, per remote, how far the two layouts agree. A value: it is
 * made at once from the controller's state ({@link Controller#status}) and serialized only at the HTTP
 * boundary, where its JSON keeps the field names and nesting readers rely on.
 *
 * @param peers by peer name, in name order
 * @param topics by topic, in the order the layout store lists them
 */
public record ClusterStatus(String cluster, Caps caps, boolean deferringOwnChanges, Map<String, PeerStatus> peers,
        Map<String, TopicStatus> topics) {

    public ClusterStatus {
        peers = ordered(peers);
        topics = ordered(topics);
    }

    /** An unmodifiable copy that keeps {@code map}'s order (the JSON's order). */
    static <K, V> Map<K, V> ordered(Map<K, V> map) {
        return Collections.unmodifiableMap(new LinkedHashMap<>(map));
    }
}
