package io.verbatim.config;

/**
 * A scalable topic replicated between every cluster, created with the same initial layout everywhere
 * (PIP-495: a topic of a replicated namespace starts alike on every cluster).
 *
 * @param name the topic, {@code persistent://tenant/namespace/topic} or a short name
 * @param initialSegments equal segments the ring starts with
 * @param bucketBudget PIP-483's entry-bucket budget {@code T}: each initial segment gets
 *        {@code N = max(1, T / segments)} buckets, rounded down to a power of two
 */
public record TopicConfig(String name, int initialSegments, int bucketBudget) {
}
