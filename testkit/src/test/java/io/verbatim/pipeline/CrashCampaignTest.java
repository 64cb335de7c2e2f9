package io.verbatim.pipeline;

import static org.assertj.core.api.Assertions.assertThat;

import io.verbatim.budget.BrokerBudget;
import io.verbatim.budget.BudgetConfig;
import io.verbatim.budget.SlowPathBudget;
import io.verbatim.embedded.MemorySegments;
import io.verbatim.embedded.SendFaults;
import io.verbatim.model.Compression;
import io.verbatim.model.Layout;
import io.verbatim.model.Mutation;
import io.verbatim.model.Segment;
import java.time.Duration;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * Seeded campaigns of crashes and send faults. Each seed builds a small mesh, produces while sends
 * are lost, rejected, hung or delayed and replicators crash at random points, then heals and checks
 * what every cluster stores. {@code -Dverbatim.seed=N} replays one campaign from its first seed;
 * {@code -Dverbatim.campaigns=N} runs more.
 */
class CrashCampaignTest {
    private static final Compression[] CODECS = Compression.values();

    @Test
    void fastPathLosesNothingAndDuplicatesNothingThroughCrashesAndFaults() {
        int crashes = campaign(0xC0FFEE_0001L, false);
        assertThat(crashes).isGreaterThanOrEqualTo(1000);
    }

    @Test
    void slowPathLosesNothingWhileLayoutsChangeUnderCrashesAndFaults() {
        campaign(0xC0FFEE_0002L, true);
    }

    /** Runs the seeds; returns how many crash points were exercised. */
    private static int campaign(long defaultSeed, boolean layoutChanges) {
        long first = Long.getLong("verbatim.seed", defaultSeed);
        int count = Integer.getInteger("verbatim.campaigns", (layoutChanges ? 300 : 600)
                * Integer.getInteger("verbatim.scale", 1));
        int crashes = 0;
        for (int i = 0; i < count; i++) {
            long seed = first + i;
            try {
                crashes += runOne(seed, layoutChanges);
            } catch (Throwable t) {
                throw new AssertionError("campaign seed " + seed + " failed (replay with -Dverbatim.seed=" + seed
                        + " -Dverbatim.campaigns=1): " + t.getMessage(), t);
            }
        }
        return crashes;
    }

    private static int runOne(long seed, boolean layoutChanges) {
        Random r = new Random(seed);
        String[] names = r.nextInt(4) == 0 ? new String[] {"a", "b", "c"} : new String[] {"a", "b"};
        World world = new World(Layout.initial(1 + r.nextInt(2), 1 << (1 + r.nextInt(3)), 0), names);
        ReplicatorConfig config = World.testConfig().withMaxInFlight(1 + r.nextInt(64))
                .withSendTimeout(Duration.ofMillis(200 + r.nextInt(300)));
        long rate = 20_000 + r.nextInt(200_000);
        world.link(config, cluster -> new BrokerBudget(BudgetConfig.of(rate)
                .withMaxConcurrentRebatches(1 + r.nextInt(3)), world.clock));
        for (MemorySegments c : world.clusters.values()) {
            c.faults(SendFaults.seeded(r.nextLong(), 0.02 + r.nextDouble() * 0.08, Duration.ofMillis(r.nextInt(30))));
        }
        int crashes = 0;
        int rounds = 8 + r.nextInt(8);
        for (int round = 0; round < rounds; round++) {
            String origin = names[r.nextInt(names.length)];
            world.produce(origin, r, 5 + r.nextInt(30), 20, CODECS[r.nextInt(CODECS.length)]);
            if (layoutChanges && r.nextInt(3) == 0) {
                mutate(world.cluster(names[r.nextInt(names.length)]), r);
            }
            world.advance(Duration.ofMillis(r.nextInt(120)));
            // Crash points: every replicator of one link, or of the whole mesh, at a random moment.
            int crashKind = r.nextInt(5);
            if (crashKind == 0) {
                ReplicationLink link = world.links.get(r.nextInt(world.links.size()));
                link.stop();
                world.advance(Duration.ofMillis(r.nextInt(50)));
                link.start();
                crashes++;
            } else if (crashKind == 1) {
                world.crashAll();
                world.advance(Duration.ofMillis(r.nextInt(50)));
                world.restartAll();
                crashes++;
            } else if (crashKind == 2) {
                world.cluster(names[r.nextInt(names.length)]).disconnectAll();
            }
        }
        for (MemorySegments c : world.clusters.values()) {
            c.faults(SendFaults.NONE);
        }
        assertThat(world.settle(Duration.ofMinutes(5))).as("replication settles once faults stop").isTrue();
        for (ReplicationLink link : world.links) {
            assertThat(link.status()).as("no replicator failing at the end").noneMatch(ReplicatorStatus::failing);
        }
        Invariants.checkDelivery(world, layoutChanges);
        Invariants.checkVerbatimPayloads(world);
        world.clusters.values().forEach(Invariants::checkPlacement);
        if (!layoutChanges) {
            assertThat(world.links).allSatisfy(l -> assertThat(l.metrics().rebatchedEntries()).isZero());
        }
        return crashes;
    }

    private static void mutate(MemorySegments cluster, Random r) {
        List<Segment> active = cluster.layout().activeSegments();
        Segment s = active.get(r.nextInt(active.size()));
        if (active.size() < 8 && r.nextBoolean()) {
            cluster.apply(Mutation.split(s.id()));
        } else {
            cluster.apply(Mutation.rebucket(s.id(), Math.min(64, s.buckets().count() * 2)));
        }
    }
}
