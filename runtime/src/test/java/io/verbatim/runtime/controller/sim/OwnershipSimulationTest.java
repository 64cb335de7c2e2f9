package io.verbatim.runtime.controller.sim;

import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * The seeded simulations of segments' ownership ({@link OwnershipSimulation}): 1,000 seeds in CI, ten times as
 * many with {@code -Plong} ({@code verbatim.scale=10}). A failure names the seed, the time and the property;
 * {@code -Dverbatim.seed=N -Dverbatim.simulations=1} replays it exactly.
 */
class OwnershipSimulationTest {
    private static final int SCALE = Integer.getInteger("verbatim.scale", 1);

    @Test
    void everySeedKeepsOneActingOwnerPerSegmentAndOwnsEverySegmentOnceTheFaultsEnd() {
        long first = Long.getLong("verbatim.seed", 0x0_25_0001L);
        int count = Integer.getInteger("verbatim.simulations", 1000 * SCALE);
        long started = System.nanoTime();
        Map<String, Long> totals = new TreeMap<>();
        for (int i = 0; i < count; i++) {
            long seed = first + i;
            OwnershipSimulation run = new OwnershipSimulation(seed);
            try {
                run.run();
                run.stats().forEach((k, v) -> totals.merge(k, (long) v, Long::sum));
            } catch (Throwable t) {
                throw new AssertionError("ownership simulation seed " + seed + " failed: " + t.getMessage()
                        + "\n  " + run.describe()
                        + "\n  replay: mvn -B -o -pl runtime verify -Dtest=OwnershipSimulationTest"
                        + " -Dsurefire.failIfNoSpecifiedTests=false -Dverbatim.seed=" + seed + " -Dverbatim.simulations=1", t);
            }
        }
        System.out.printf("ownership simulation: %d seeds from %d in %.1f s; %s%n", count, first,
                (System.nanoTime() - started) / 1e9, totals);
    }
}
