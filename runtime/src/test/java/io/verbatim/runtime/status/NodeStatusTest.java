package io.verbatim.runtime.status;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.verbatim.exchange.Caps;
import io.verbatim.exchange.ClusterStatus;
import io.verbatim.metadatalog.server.Group;
import io.verbatim.metadatalog.server.MemberRole;
import io.verbatim.metadatalog.server.MemberStatus;
import io.verbatim.pipeline.ReplicatorStatus;
import io.verbatim.pipeline.SegmentReplicator;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** A node's status with a failing and a stalled replicator: the JSON's fields (the live page draws its table from them). */
class NodeStatusTest {
    private static final ReplicatorStatus OK = new ReplicatorStatus("a/t/0000-7fff-0->b", "0000-7fff-0",
            SegmentReplicator.State.REPLICATING, 1, 0, Optional.of("java.io.IOException: once"));
    private static final ReplicatorStatus FAILING = new ReplicatorStatus("a/t/8000-ffff-1->b", "8000-ffff-1",
            SegmentReplicator.State.FAILED, 2, 3,
            Optional.of("java.lang.IllegalStateException: b refused <it>"));
    /** Rewinding across a partition: not failing, but standing still with backlog. */
    private static final ReplicatorStatus STALLED = new ReplicatorStatus("a/t/0000-7fff-0->c", "0000-7fff-0",
            SegmentReplicator.State.BACKING_OFF, 0, 0, Optional.empty(), 42, Optional.of(Duration.ofMillis(12_345)));
    private static final NodeStatus STATUS = new NodeStatus(new ClusterStatus("a", new Caps(4, 8), false, Map.of(),
            Map.of()), NodeStatus.Replicators.of(List.of(OK, FAILING, STALLED)));

    @Test
    void failingAndStalledReplicatorsAreNamedWithStateFailuresRestartsStallAndLastError() throws Exception {
        assertThat(new ObjectMapper().writeValueAsString(STATUS)).isEqualTo("{\"cluster\":\"a\","
                + "\"caps\":{\"maxSegments\":4,\"maxEntryBucketsPerSegment\":8},\"deferringOwnChanges\":false,"
                + "\"peers\":{},\"topics\":{},\"replicators\":{\"total\":3,\"restarts\":3,\"failing\":[{"
                + "\"id\":\"a/t/8000-ffff-1->b\",\"state\":\"FAILED\",\"consecutiveFailures\":3,\"restarts\":2,"
                + "\"lastError\":\"java.lang.IllegalStateException: b refused <it>\"}],\"stalled\":[{"
                + "\"id\":\"a/t/0000-7fff-0->c\",\"state\":\"BACKING_OFF\",\"stalledForMillis\":12345,"
                + "\"backlog\":42,\"consecutiveFailures\":0,\"lastError\":null}]},\"metadataLog\":[],"
                + "\"listenerFeeds\":[],\"storage\":{\"type\":\"none\",\"durable\":false,\"failure\":\"\"}}");
        assertThat(STATUS.replicators().failing()).containsExactly(FAILING);
        assertThat(STATUS.replicators().stalled()).containsExactly(STALLED);
    }

    /** A failed journal shows in the status, not only in a metric: the node acknowledges nothing until a restart. */
    @Test
    void theStorageSaysWhereSegmentsAreKeptAndWhyItsJournalFailed() throws Exception {
        NodeStatus failed = new NodeStatus(STATUS.exchange(), STATUS.replicators(), List.of(), List.of(),
                new NodeStatus.Storage("embedded", true, "journal /data/journal failed: No space left on device"));
        assertThat(new ObjectMapper().writeValueAsString(failed)).endsWith("\"storage\":{\"type\":\"embedded\","
                + "\"durable\":true,\"failure\":\"journal /data/journal failed: No space left on device\"}}");
    }

    @Test
    void eachMetadataLogMemberShowsItsRoleAndHowFarBehindTheLeaderKnowsItIs() {
        Group conf = Group.of(List.of(), List.of());
        MemberStatus leader = new MemberStatus("c1", MemberRole.LEADER, 3, "c1", 40, 40, 42, conf,
                List.of(new MemberStatus.Peer("c2", true, 42), new MemberStatus.Peer("b0", false, 30)), List.of(),
                List.of());
        MemberStatus follower = new MemberStatus("c2", MemberRole.FOLLOWER, 3, "c1", 40, 40, 42, conf, List.of(),
                List.of(), List.of());
        MemberStatus listener = new MemberStatus("b0", MemberRole.LISTENER, 3, "c1", 30, 30, 30, conf, List.of(),
                List.of(), List.of());
        MemberStatus stranger = new MemberStatus("b1", MemberRole.LISTENER, 2, "", 0, 0, 0, conf, List.of(),
                List.of(), List.of());
        assertThat(NodeStatus.MetadataLogMember.members(List.of(leader, follower, listener, stranger)))
                .extracting(NodeStatus.MetadataLogMember::id, NodeStatus.MetadataLogMember::role,
                        NodeStatus.MetadataLogMember::lag)
                .containsExactly(tuple("c1", "LEADER", 0L), tuple("c2", "FOLLOWER", 0L), tuple("b0", "LISTENER", 12L),
                        tuple("b1", "LISTENER", -1L));
        assertThat(NodeStatus.MetadataLogMember.members(List.of(follower))).extracting(NodeStatus.MetadataLogMember::lag)
                .containsExactly(-1L);
    }
}
