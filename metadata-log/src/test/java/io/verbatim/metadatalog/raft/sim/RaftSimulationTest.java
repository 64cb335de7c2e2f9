package io.verbatim.metadatalog.raft.sim;

import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * The seeded simulations ({@link RaftSimulation}): 1,000 seeds in CI, ten times as many with
 * {@code -Plong} ({@code verbatim.scale=10}). A failure names the seed, the tick, the step and the
 * property; {@code -Dverbatim.seed=N -Dverbatim.simulations=1} replays it exactly.
 */
class RaftSimulationTest {
    private static final int SCALE = Integer.getInteger("verbatim.scale", 1);

    @Test
    void everySeedKeepsRaftSafeLinearizableAndLive() {
        long first = Long.getLong("verbatim.seed", 0x5AF7_0001L);
        int count = Integer.getInteger("verbatim.simulations", 1000 * SCALE);
        long started = System.nanoTime();
        Map<String, Long> totals = new TreeMap<>();
        for (int i = 0; i < count; i++) {
            long seed = first + i;
            RaftSimulation run = new RaftSimulation(seed);
            try {
                run.run();
                run.stats().forEach((k, v) -> totals.merge(k, (long) v, Long::sum));
            } catch (Throwable t) {
                throw new AssertionError("raft simulation seed " + seed + " failed: " + t.getMessage()
                        + "\n  " + run.describe()
                        + "\n  replay: mvn -B -o -pl metadata-log -am verify -Dtest=RaftSimulationTest"
                        + " -Dsurefire.failIfNoSpecifiedTests=false -Dverbatim.seed=" + seed + " -Dverbatim.simulations=1", t);
            }
        }
        System.out.printf("raft simulation: %d seeds from %d in %.1f s%n", count, first,
                (System.nanoTime() - started) / 1e9);
        if (Boolean.getBoolean("verbatim.sim.stats")) {
            System.out.println("raft simulation totals: " + totals);
        }
    }
}
