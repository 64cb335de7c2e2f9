package io.verbatim.model;

import java.util.Random;

/**
 * Seeded property checks in plain JUnit 5. Each property runs {@code cases} generated cases from a
 * fixed default seed, so CI is deterministic; {@code -Dverbatim.seed=N} replays a printed seed,
 * {@code -Dverbatim.cases=N} sets the number of cases and {@code -Dverbatim.scale=K} multiplies every
 * default (the {@code long} profile uses 10). A failure names the seed and case to replay.
 */
public final class Property {
    private Property() {
    }

    /** One generated case. */
    @FunctionalInterface
    public interface Case {
        void check(Random random) throws Exception;
    }

    public static void forAll(String name, long defaultSeed, int defaultCases, Case property) {
        long seed = Long.getLong("verbatim.seed", defaultSeed);
        int cases = Integer.getInteger("verbatim.cases", defaultCases * Integer.getInteger("verbatim.scale", 1));
        Random seeds = new Random(seed);
        for (int i = 0; i < cases; i++) {
            long caseSeed = seeds.nextLong();
            try {
                property.check(new Random(caseSeed));
            } catch (Throwable t) {
                throw new AssertionError("property '" + name + "' failed at case " + i + " (case seed " + caseSeed
                        + "); replay with -Dverbatim.seed=" + seed + ": " + t.getMessage(), t);
            }
        }
    }
}
