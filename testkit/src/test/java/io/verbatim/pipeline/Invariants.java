package io.verbatim.pipeline;

import static org.assertj.core.api.Assertions.assertThat;

import io.verbatim.embedded.MemorySegments;
import io.verbatim.testkit.ReplicationChecks;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** What every cluster's stored data must satisfy after replication settles: {@link ReplicationChecks}, asserted. */
final class Invariants {
    private Invariants() {
    }

    /** Every message stored on {@code cluster}, in delivery order (segment id, then position). */
    static List<ReplicationChecks.Stored> stored(MemorySegments cluster) {
        return ReplicationChecks.stored(cluster);
    }

    /**
     * Every message of every origin arrived on every cluster; on the fast path exactly once, and
     * duplicates at all only where a copy came through the slow path. Per origin and key, order holds.
     */
    static void checkDelivery(World world, boolean allowSlowPathDuplicates) {
        Map<String, Long> produced = new LinkedHashMap<>();
        world.clusters.keySet().forEach(origin -> produced.put(origin, (long) world.produced(origin)));
        assertPassed(ReplicationChecks.delivery(world.clusters, produced, allowSlowPathDuplicates));
    }

    /**
     * No stored entry straddles a bucket of its segment, or holds a keyed message outside the segment's
     * range; every stamp covers the entry's messages.
     */
    static void checkPlacement(MemorySegments cluster) {
        assertPassed(List.of(ReplicationChecks.placement(cluster)));
    }

    /** A replicated whole entry carries the source entry's payload bytes unchanged. */
    static void checkVerbatimPayloads(World world) {
        assertPassed(List.of(ReplicationChecks.verbatimPayloads(world.clusters)));
    }

    private static void assertPassed(List<ReplicationChecks.Check> checks) {
        assertThat(checks).allSatisfy(c -> assertThat(c.passed()).as(c.name() + ": " + c.detail()).isTrue());
    }
}
