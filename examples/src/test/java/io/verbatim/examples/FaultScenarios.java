package io.verbatim.examples;

import io.verbatim.examples.FaultChecker.Violation;
import io.verbatim.examples.FaultTable.Phase;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Random;
import java.util.TreeMap;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 23's fault suite, one scenario per fault, on three {@code verbatim node} processes that live through
 * all of them (a class's scenarios run in order, each a phase of {@link FaultSuite}: traffic, the fault with
 * splits during it, the heal, the drain, the checker). A scenario fails on the violations its phase found
 * first; it names the seed, which {@code -Dverbatim.seed=} replays (the fault's targets, its latency and loss
 * draws, the splits and the keys; the processes' timing is the machine's). {@code -Dverbatim.scale=K} ({@code
 * -Plong}: 10) runs each fault K times with longer faults. The table is printed at the end and kept with the
 * nodes' logs in {@code examples/target/fault-suite/<storage>/}.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
abstract class FaultScenarios {
    static final long SEED = Long.getLong("verbatim.seed", 2315L);
    static final int SCALE = Integer.getInteger("verbatim.scale", 1);
    static final List<String> CLUSTERS = List.of("us-east", "eu-west", "ap-south");
    private static final Path KEPT = Path.of("target", "fault-suite");

    /** This class's temporary directory (the nodes' data and logs, a broker's data). */
    Path dir;

    private FaultSuite suite;

    /** What the table and the kept logs are called, e.g. {@code embedded}. */
    abstract String label();

    /** The storage every node keeps its segments in (started here if it needs a process). */
    abstract FaultSuite.Storage storage() throws Exception;

    /** Stops what {@link #storage} started. */
    void stopStorage() {
    }

    /** How long the traffic's calls wait for their answer before they give up (unknown). */
    Duration callTimeout() {
        return Duration.ofSeconds(3);
    }

    /** Whether every phase splits during its fault ({@code -Dverbatim.faults.splits=true|false} overrides). */
    boolean splitsDuringFaults() {
        return true;
    }

    FaultSuite.Settings settings() {
        boolean longRun = SCALE > 1;
        String splits = System.getProperty("verbatim.faults.splits");
        return new FaultSuite.Settings(Duration.ofMillis(800), Duration.ofSeconds(longRun ? 8 : 3),
                Duration.ofSeconds(30), new FaultTraffic.Settings(10, Duration.ofMillis(100), callTimeout(), 64), 8,
                splits == null ? splitsDuringFaults() : Boolean.parseBoolean(splits));
    }

    @BeforeAll
    void start(@TempDir Path tempDir) throws Exception {
        dir = tempDir;
        String title = "fault suite, " + label() + " storage, seed " + SEED + " (replay: -Dverbatim.seed=" + SEED
                + "), scale " + SCALE;
        System.out.println(title);
        suite = FaultSuite.start(CLUSTERS, storage(), settings(), dir, KEPT.resolve(label()).toAbsolutePath(), SEED,
                title);
        // Traffic and a split without a fault first: warm JVMs for the first fault, and a baseline to compare with.
        check(new Fault.None(), suite.run(new Fault.None(), new Random(SEED)));
    }

    @AfterAll
    void stop() {
        try {
            if (suite != null) {
                System.out.println(suite.table());
                suite.close();
            }
        } finally {
            stopStorage();
        }
    }

    /** Runs the fault {@code make} draws, {@link #SCALE} times, each from its own seed. */
    void rounds(int scenario, Function<Random, Fault> make) throws Exception {
        for (int round = 0; round < SCALE; round++) {
            long seed = SEED * 1_000 + scenario * 100L + round;
            Random random = new Random(seed);
            Fault fault = make.apply(random);
            Phase phase = suite.run(fault, random);
            check(fault, phase);
        }
    }

    private void check(Fault fault, Phase phase) {
        System.out.println("phase " + phase.number() + " " + fault.name() + " on " + fault.target() + ": drains "
                + phase.drains().stream().map(d -> d.from() + "->" + d.to() + " " + d.shown()).toList()
                + ", acknowledged " + phase.acknowledged() + ", splits " + phase.splits() + " (last not applied: "
                + suite.lastSplitProblem() + "), took " + phase.tookMillis() / 1000 + " s, violations "
                + phase.violationCounts());
        if (!phase.violations().isEmpty()) {
            throw new AssertionError(fault.name() + " on " + fault.target() + " (seed " + SEED + ", replay with "
                    + "-Dverbatim.seed=" + SEED + "; logs in examples/" + KEPT.resolve(label()) + "):\n"
                    + describe(phase.violations()) + "\n" + suite.table());
        }
    }

    /** Per rule: how many, how many on each cluster, and the first 10. */
    private static String describe(List<Violation> violations) {
        return violations.stream().collect(Collectors.groupingBy(Violation::rule)).entrySet().stream()
                .map(e -> e.getKey() + " (" + e.getKey().text + "): " + e.getValue().size() + " "
                        + e.getValue().stream().collect(Collectors.groupingBy(v -> where(v.id()),
                                TreeMap::new, Collectors.counting())) + "\n  "
                        + e.getValue().stream().limit(10).map(Violation::detail).collect(Collectors.joining("\n  ")))
                .collect(Collectors.joining("\n"));
    }

    /** {@code from us-east on eu-west} for {@code missing us-east/12 on eu-west}; the id itself otherwise. */
    private static String where(String id) {
        int on = id.lastIndexOf(" on ");
        int slash = id.indexOf('/');
        int space = id.indexOf(' ');
        return on < 0 || slash < space ? "-" : "from " + id.substring(space + 1, slash) + id.substring(on);
    }

    private static Fault.Blackhole blackhole(Random r) {
        List<String> p = Fault.pair(CLUSTERS, r);
        return new Fault.Blackhole(p.get(0), p.get(1));
    }

    @Test
    @Order(0)
    void concurrentSplitsOnTwoClustersWhileProducingLoseNothing() throws Exception {
        rounds(10, r -> new Fault.Splits(Fault.pair(CLUSTERS, r)));
    }

    @Test
    @Order(1)
    void aBothWayBlackholePartitionLosesNothingAndEveryDirectionDrains() throws Exception {
        rounds(1, FaultScenarios::blackhole);
    }

    @Test
    @Order(2)
    void aBothWayPartitionResettingConnectionsLosesNothingAndEveryDirectionDrains() throws Exception {
        rounds(2, r -> {
            List<String> p = Fault.pair(CLUSTERS, r);
            return new Fault.Reset(p.get(0), p.get(1));
        });
    }

    @Test
    @Order(3)
    void aOneWayPartitionLosesNothingAndEveryDirectionDrains() throws Exception {
        rounds(3, r -> {
            List<String> p = Fault.pair(CLUSTERS, r);
            return new Fault.OneWay(p.get(0), p.get(1));
        });
    }

    @Test
    @Order(4)
    void latencyWithJitterAndLossLosesNothingAndEveryDirectionDrains() throws Exception {
        rounds(4, r -> new Fault.Latency(new FaultProxy.Latency(Duration.ofMillis(20 + r.nextInt(40)),
                Duration.ofMillis(20 + r.nextInt(60)), 0.01 + r.nextDouble() * 0.04, r.nextDouble() * 0.002)));
    }

    @Test
    @Order(5)
    void halfOpenConnectionsLoseNothingAndEveryDirectionDrains() throws Exception {
        rounds(5, r -> {
            List<String> p = Fault.pair(CLUSTERS, r);
            return new Fault.HalfOpen(p.get(0), p.get(1));
        });
    }

    @Test
    @Order(6)
    void produceCallsAbandonedByTheirClientLeaveTheNodeProducingAndLoseNothing() throws Exception {
        rounds(6, r -> new Fault.Abandon(Fault.one(CLUSTERS, r)));
    }

    @Test
    @Order(7)
    void aPausedNodeLosesNothingAndEveryDirectionDrainsAfterItResumes() throws Exception {
        rounds(7, r -> new Fault.Pause(Fault.one(CLUSTERS, r)));
    }

    @Test
    @Order(8)
    void aNodeStoppedWithSigtermAndRestartedLosesNothingAcknowledged() throws Exception {
        rounds(8, r -> new Fault.Terminate(Fault.one(CLUSTERS, r)));
    }

    @Test
    @Order(9)
    void aNodeKilledWithSigkillAndRestartedLosesNothingAcknowledged() throws Exception {
        rounds(9, r -> new Fault.Kill(Fault.one(CLUSTERS, r)));
    }
}
