package io.verbatim.config;

import io.verbatim.model.Buckets;
import java.util.Arrays;
import java.util.Optional;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

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
    /** Longer topic names are no names: each goes into URLs, cursor names, metric tags. */
    public static final int MAX_NAME_LENGTH = 255;
    private static final Pattern PART = Pattern.compile("[A-Za-z0-9_=:.-]+");
    private static final String PERSISTENT = "persistent://";

    public TopicConfig {
        nameProblem(name).ifPresent(problem -> {
            throw new IllegalArgumentException("name " + problem);
        });
        if (initialSegments < 1 || initialSegments > 1 << 16) {
            throw new IllegalArgumentException("initialSegments is " + initialSegments + ": must be within 1.." + (1 << 16));
        }
        if (bucketBudget < 1 || bucketBudget > Buckets.MAX_COUNT) {
            throw new IllegalArgumentException("bucketBudget is " + bucketBudget + ": must be within 1.."
                    + Buckets.MAX_COUNT);
        }
    }

    /** The name as Pulsar resolves it: a short name lives in {@code public/default}. */
    String pulsarName() {
        return name.startsWith(PERSISTENT) ? name : PERSISTENT + "public/default/" + name;
    }

    /** What is wrong with {@code name} as a topic name, the name first; empty when nothing is. */
    static Optional<String> nameProblem(@Nullable String name) {
        if (name != null && name.length() <= MAX_NAME_LENGTH) {
            boolean full = name.startsWith(PERSISTENT);
            String[] parts = full ? name.substring(PERSISTENT.length()).split("/", -1) : new String[] {name};
            if (parts.length == (full ? 3 : 1) && Arrays.stream(parts).allMatch(p -> PART.matcher(p).matches())) {
                return Optional.empty();
            }
        }
        return Optional.of((name == null ? "null" : Section.quoted(name)) + " is not a topic name (expected "
                + "persistent://tenant/namespace/topic or a short name, each part of letters, digits, '_', '=', ':', "
                + "'.', '-', at most " + MAX_NAME_LENGTH + " characters in all)");
    }
}
