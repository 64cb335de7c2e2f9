package io.verbatim.runtime.controller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.verbatim.config.MetadataLogConfig;
import io.verbatim.metadatalog.server.Group;
import io.verbatim.metadatalog.server.MemberRole;
import io.verbatim.metadatalog.server.MemberStatus;
import io.verbatim.runtime.status.NodeStatus;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The admin's assignment on a configuration, its checks, its drift from the YAML, and the leader's view. */
class DelegationsTest {
    private static final MetadataLogConfig ON = new MetadataLogConfig(true, 2, 100, Duration.ofSeconds(30));
    private static final Group GROUP = Group.of(List.of("c1", "c2", "c3"), List.of("b0", "b1", "b2"));

    @Test
    void anAssignmentReplacesTheDelegationsAndReadsBack() {
        Group once = GROUP.withDelegations(Map.of("b1", "c3", "b0", "c2"));
        assertThat(Delegations.of(once)).containsExactly(Map.entry("b0", "c2"), Map.entry("b1", "c3"));
        assertThat(once.voters()).isEqualTo(GROUP.voters());
        assertThat(Delegations.of(once.withDelegations(Map.of()))).isEmpty();
    }

    @Test
    void aRefusalNamesTheEntryAtFault() {
        assertThat(Delegations.refusal(GROUP, Map.of("b0", "c2", "b1", "c3"), ON)).isEmpty();
        assertThat(Delegations.refusal(GROUP, Map.of("b9", "c2"), ON)).hasValueSatisfying(w -> assertThat(w)
                .contains("b9 is not a listener").contains("[b0, b1, b2]"));
        assertThat(Delegations.refusal(GROUP, Map.of("b0", "b1"), ON)).hasValueSatisfying(w -> assertThat(w)
                .contains("b1 is not a voter"));
        assertThat(Delegations.refusal(GROUP, Map.of("b0", "c2", "b1", "c2", "b2", "c2"), ON))
                .hasValueSatisfying(w -> assertThat(w).contains("c2 would feed 3 listeners")
                        .contains("maxListenersPerFollower is 2"));
        assertThat(Delegations.refusal(GROUP, Map.of("b0", "c2"), ON.withEnabled(false)))
                .hasValueSatisfying(w -> assertThat(w).contains("metadataLog.enabled is false"));
        assertThat(Delegations.refusal(GROUP, Map.of(), ON.withEnabled(false))).as("clearing is fine").isEmpty();
    }

    @Test
    void aPutThatGivesAListenerTwiceIsRefusedNamingItNotTakenAtItsLastValue() {
        assertThat(DelegationApi.assignment("{\"b0\": \"c2\", \"b1\": \"c3\"}".getBytes()))
                .containsExactly(Map.entry("b0", "c2"), Map.entry("b1", "c3"));
        assertThatThrownBy(() -> DelegationApi.assignment("{\"b0\": \"c2\", \"b1\": \"c1\", \"b0\": \"c3\"}".getBytes()))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("listener b0 is given twice (expected each listener once: the later would silently win)");
        assertThatThrownBy(() -> DelegationApi.assignment("{\"b0\": ".getBytes())).hasMessageContaining("is not JSON");
    }

    @Test
    void aLogHeldOnDiskThatDiffersFromTheYamlIsNamed() {
        assertThat(Delegations.drift(GROUP, GROUP)).isEmpty();
        assertThat(Delegations.drift(GROUP.withDelegations(Map.of("b0", "c2")), GROUP))
                .hasValueSatisfying(d -> assertThat(d).contains("delegations {} (the YAML names {b0=c2}")
                        .contains("PUT /admin/v2/metadata/delegations"));
        Group fewer = Group.of(GROUP.voterIds(), List.of("b0", "b1"));
        assertThat(Delegations.drift(GROUP, fewer)).hasValueSatisfying(d -> assertThat(d)
                .contains("listeners [b0, b1] (the YAML names [b0, b1, b2])"));
    }

    @Test
    void theLeadersViewSaysWhoFeedsEachListener() {
        Group conf = GROUP.withDelegations(Map.of("b0", "c2", "b1", "c1"));
        MemberStatus leader = new MemberStatus("c1", MemberRole.LEADER, 4, "c1", 50, 50, 52, conf,
                List.of(new MemberStatus.Peer("b0", false, 50), new MemberStatus.Peer("b1", false, 48),
                        new MemberStatus.Peer("b2", false, 40)),
                List.of(new MemberStatus.ListenerSource("b0", "c2", "c2", false, "", 0),
                        new MemberStatus.ListenerSource("b1", "c1", "c1", false, "", 0),
                        new MemberStatus.ListenerSource("b2", "", "c1", true, "delegate c3 not heard", 2)),
                List.of());
        assertThat(Delegations.feeds(leader)).containsExactly(
                new NodeStatus.ListenerFeed("b0", "c2", "c2", true, false, "", 0, 0),
                new NodeStatus.ListenerFeed("b1", "c1", "c1", false, false, "", 0, 2),
                new NodeStatus.ListenerFeed("b2", "", "c1", false, true, "delegate c3 not heard", 2, 10));
        MemberStatus follower = new MemberStatus("c2", MemberRole.FOLLOWER, 4, "c1", 50, 50, 52, conf, List.of(),
                List.of(), List.of());
        assertThat(Delegations.feeds(follower)).as("only a leader knows").isEmpty();
    }
}
