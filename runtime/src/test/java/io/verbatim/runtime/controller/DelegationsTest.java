package io.verbatim.runtime.controller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.verbatim.config.ClusterConfig;
import io.verbatim.config.MetadataLogConfig;
import io.verbatim.config.VerbatimConfig;
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

    @Test
    void theDefaultSpreadDealsTheListenersToTheSortedVotersInTurnUpToTheCap() {
        List<String> voters = List.of("c3", "c1", "c2");
        assertThat(Delegations.defaultSpread(List.of("broker-1", "broker-2", "broker-3", "broker-4"), voters, 5))
                .isEqualTo(Map.of("broker-1", "c1", "broker-2", "c2", "broker-3", "c3", "broker-4", "c1"));
        // at the cap every voter feeds as many as it may: the rest are fed by the leader
        List<String> seven = List.of("l1", "l2", "l3", "l4", "l5", "l6", "l7");
        Map<String, String> capped = Delegations.defaultSpread(seven, voters, 2);
        assertThat(capped).isEqualTo(Map.of("l1", "c1", "l2", "c2", "l3", "c3", "l4", "c1", "l5", "c2", "l6", "c3"));
        assertThat(Delegations.refusal(Group.of(voters, seven), capped, ON)).as("within the cap").isEmpty();
        // the listeners' order decides, the voters' does not
        assertThat(Delegations.defaultSpread(List.of("x", "y"), List.of("c2", "c1"), 1))
                .isEqualTo(Delegations.defaultSpread(List.of("x", "y"), List.of("c1", "c2"), 1))
                .isEqualTo(Map.of("x", "c1", "y", "c2"));
        assertThat(Delegations.defaultSpread(List.of("y", "x"), List.of("c1", "c2"), 1))
                .isEqualTo(Map.of("y", "c1", "x", "c2"));
        assertThat(Delegations.defaultSpread(List.of(), voters, 1)).isEmpty();
        assertThatThrownBy(() -> Delegations.defaultSpread(seven, voters, 0)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("maxPerFollower is 0");
    }

    /**
     * A log starts from the admin's delegations when the file names any; else named broker members are spread
     * with delegation on; else (the one brokers process, or delegation off) the leader feeds every listener.
     */
    @Test
    void aNetworkedLogStartsFromTheAdminsDelegationsElseTheSpreadOfNamedBrokerMembers() {
        String members = """
                    brokerMembers:
                      - {id: broker-1, adminPort: 8111, brokerPorts: [6661], raftPort: 7111}
                      - {id: broker-2, adminPort: 8112, brokerPorts: [6662], raftPort: 7112}
                      - {id: broker-3, adminPort: 8113, brokerPorts: [6663], raftPort: 7113}
                """;
        String oneProcess = "    adminPort: 8111\n    brokerPorts: [6661]\n    raftPort: 7111\n";
        MetadataLogConfig on = config(members, "", "{enabled: true, maxListenersPerFollower: 1}").metadataLog();
        ClusterConfig spread = config(members, "", "{enabled: true}").cluster("east");
        assertThat(Delegations.initial(spread, on))
                .isEqualTo(Map.of("broker-1", "c1", "broker-2", "c2", "broker-3", "c3"));
        ClusterConfig named = config(members, "    delegations: {broker-3: c2}\n", "{enabled: true}").cluster("east");
        assertThat(Delegations.initial(named, on)).as("the admin's map, whole").isEqualTo(Map.of("broker-3", "c2"));
        assertThat(Delegations.initial(spread, on.withEnabled(false))).as("delegation off").isEmpty();
        ClusterConfig brokers = config(oneProcess, "", "{enabled: true}").cluster("east");
        assertThat(Delegations.initial(brokers, on)).as("the one brokers process, as before").isEmpty();
        assertThat(NetworkedMember.group(spread, on).delegations())
                .isEqualTo(Map.of("broker-1", "c1", "broker-2", "c2", "broker-3", "c3"));
        assertThat(NetworkedMember.group(spread, on).listeners()).containsExactly(
                new Group.Member("broker-1", "127.0.0.1:7111"), new Group.Member("broker-2", "127.0.0.1:7112"),
                new Group.Member("broker-3", "127.0.0.1:7113"));
    }

    private static VerbatimConfig config(String members, String delegations, String log) {
        return VerbatimConfig.parse("""
                storage: pulsar
                clusters:
                  - name: east
                    token: t-east
                    pulsar: {serviceUrl: "pulsar://p:6650", adminUrl: "http://p:8080"}
                    controllers:
                      - {id: c2, adminPort: 8102, raftPort: 7102}
                      - {id: c1, adminPort: 8101, raftPort: 7101}
                      - {id: c3, adminPort: 8103, raftPort: 7103}
                %s%s  - name: west
                    token: t-west
                    pulsar: {serviceUrl: "pulsar://p:6650", adminUrl: "http://p:8080"}
                metadataLog: %s
                """.formatted(members, delegations, log));
    }
}
