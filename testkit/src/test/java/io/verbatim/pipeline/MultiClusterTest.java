package io.verbatim.pipeline;

import static org.assertj.core.api.Assertions.assertThat;

import io.verbatim.budget.SlowPathBudget;
import io.verbatim.model.Compression;
import io.verbatim.model.Join;
import io.verbatim.model.Layout;
import io.verbatim.model.Mutation;
import io.verbatim.model.Segment;
import io.verbatim.model.Shape;
import java.time.Duration;
import java.util.Random;
import org.junit.jupiter.api.Test;

class MultiClusterTest {

    @Test
    void twoClustersWithTheSameLayoutReplicateEverythingVerbatimExactlyOnce() {
        World world = new World(Layout.initial(2, 8, 0), "east", "west").link(World.testConfig(),
                SlowPathBudget.unlimited());
        Random r = new Random(1);
        for (int round = 0; round < 20; round++) {
            world.produce("east", r, 50, 40, Compression.LZ4);
            world.produce("west", r, 50, 40, Compression.ZSTD);
            world.advance(Duration.ofMillis(20));
        }
        assertThat(world.settle(Duration.ofSeconds(30))).isTrue();
        Invariants.checkDelivery(world, false);
        Invariants.checkVerbatimPayloads(world);
        world.clusters.values().forEach(Invariants::checkPlacement);
        assertThat(world.links).allSatisfy(l -> {
            assertThat(l.metrics().rebatchedEntries()).isZero();
            assertThat(l.metrics().verbatimEntries()).isPositive();
        });
    }

    @Test
    void threeClustersConvergeWhileOneSplitsAndRebucketsDuringTraffic() {
        World world = new World(Layout.initial(1, 4, 0), "a", "b", "c").link(World.testConfig(),
                SlowPathBudget.unlimited());
        Random r = new Random(2);
        for (int round = 0; round < 30; round++) {
            world.produce("a", r, 30, 60, Compression.LZ4);
            world.produce("b", r, 30, 60, Compression.NONE);
            world.produce("c", r, 30, 60, Compression.SNAPPY);
            if (round == 5) {
                split(world, "b", 0);
            }
            if (round == 12) {
                rebucket(world, "b", 16);
            }
            if (round == 20) {
                // The other clusters fold b's layout in, as the exchange will make them do.
                for (String c : new String[] {"a", "c"}) {
                    follow(world, c, "b");
                }
            }
            world.advance(Duration.ofMillis(30));
        }
        assertThat(world.settle(Duration.ofSeconds(60))).isTrue();
        Invariants.checkDelivery(world, true);
        Invariants.checkVerbatimPayloads(world);
        world.clusters.values().forEach(Invariants::checkPlacement);
        long rebatched = world.links.stream().mapToLong(l -> l.metrics().rebatchedEntries()).sum();
        assertThat(rebatched).as("a and c re-batch toward the finer b while they lag").isPositive();
    }

    @Test
    void layoutsThatDoNotNestStillReplicateCorrectly() {
        World world = new World(Layout.initial(1, 2, 0), "a", "b").link(World.testConfig(), SlowPathBudget.unlimited());
        world.cluster("a").apply(Mutation.splitAt(0, 0x1234)).layoutOrThrow();
        world.cluster("b").apply(Mutation.splitAt(0, 0xabcd)).layoutOrThrow();
        Random r = new Random(3);
        for (int round = 0; round < 10; round++) {
            world.produce("a", r, 40, 100, Compression.ZLIB);
            world.produce("b", r, 40, 100, Compression.LZ4);
            world.advance(Duration.ofMillis(30));
        }
        assertThat(world.settle(Duration.ofSeconds(30))).isTrue();
        Invariants.checkDelivery(world, true);
        world.clusters.values().forEach(Invariants::checkPlacement);
    }

    static void split(World world, String cluster, int index) {
        Segment s = world.cluster(cluster).layout().activeSegments().get(index);
        world.cluster(cluster).apply(Mutation.split(s.id())).layoutOrThrow();
    }

    static void rebucket(World world, String cluster, int buckets) {
        for (Segment s : world.cluster(cluster).layout().activeSegments()) {
            world.cluster(cluster).apply(Mutation.rebucket(s.id(), buckets));
        }
    }

    /** Applies to {@code cluster} the plan that reaches the join with {@code peer}'s layout. */
    static void follow(World world, String cluster, String peer) {
        var local = world.cluster(cluster);
        var target = Join.of(Shape.of(local.layout()),
                Shape.of(world.cluster(peer).layout()));
        for (Mutation m : Join.toReach(local.layout(), target)) {
            local.apply(m).layoutOrThrow();
        }
    }
}
