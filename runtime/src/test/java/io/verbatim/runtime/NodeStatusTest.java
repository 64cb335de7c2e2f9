package io.verbatim.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.verbatim.exchange.Caps;
import io.verbatim.exchange.ClusterStatus;
import io.verbatim.pipeline.ReplicatorStatus;
import io.verbatim.pipeline.SegmentReplicator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** A node's status with a failing replicator: the JSON's fields (the live page draws its table from them). */
class NodeStatusTest {
    private static final ReplicatorStatus OK = new ReplicatorStatus("a/t/0000-7fff-0->b", "0000-7fff-0",
            SegmentReplicator.State.REPLICATING, 1, 0, Optional.of("java.io.IOException: once"));
    private static final ReplicatorStatus FAILING = new ReplicatorStatus("a/t/8000-ffff-1->b", "8000-ffff-1",
            SegmentReplicator.State.FAILED, 2, 3,
            Optional.of("java.lang.IllegalStateException: b refused <it>"));
    private static final NodeStatus STATUS = new NodeStatus(new ClusterStatus("a", new Caps(4, 8), false, Map.of(),
            Map.of()), NodeStatus.Replicators.of(List.of(OK, FAILING)));

    @Test
    void aFailingReplicatorIsNamedWithItsStateFailuresRestartsAndLastError() throws Exception {
        assertThat(new ObjectMapper().writeValueAsString(STATUS)).isEqualTo("{\"cluster\":\"a\","
                + "\"caps\":{\"maxSegments\":4,\"maxEntryBucketsPerSegment\":8},\"deferringOwnChanges\":false,"
                + "\"peers\":{},\"topics\":{},\"replicators\":{\"total\":2,\"restarts\":3,\"failing\":[{"
                + "\"id\":\"a/t/8000-ffff-1->b\",\"state\":\"FAILED\",\"consecutiveFailures\":3,\"restarts\":2,"
                + "\"lastError\":\"java.lang.IllegalStateException: b refused <it>\"}]}}");
        assertThat(STATUS.replicators().failing()).containsExactly(FAILING);
    }
}
