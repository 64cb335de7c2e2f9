package io.verbatim.metadatalog.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.verbatim.metadatalog.proto.ListenerDelegationProto;
import io.verbatim.metadatalog.proto.RaftConfigurationProto;
import io.verbatim.metadatalog.proto.RaftPeerProto;
import io.verbatim.metadatalog.proto.RaftPeerRole;
import io.verbatim.metadatalog.raft.RaftStatus;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** A group in plain values and the configuration it stands for, both ways. */
class GroupTest {
    private static final RaftConfigurationProto CONF = RaftConfigurationProto.newBuilder()
            .addPeers(RaftPeerProto.newBuilder().setId("c1").setAddress("h1:7000"))
            .addPeers(RaftPeerProto.newBuilder().setId("c2").setStartupRole(RaftPeerRole.FOLLOWER))
            .addListeners(RaftPeerProto.newBuilder().setId("b0"))
            .addDelegations(ListenerDelegationProto.newBuilder().setListener("b0").setFollower("c2"))
            .build();

    @Test
    void aConfigurationReadsBackAsItsGroup() {
        Group group = Group.of(CONF);
        assertThat(group.voters()).containsExactly(new Group.Member("c1", "h1:7000"), new Group.Member("c2", ""));
        assertThat(group.listenerIds()).containsExactly("b0");
        assertThat(group.delegations()).containsExactly(Map.entry("b0", "c2"));
        assertThat(group.onto(CONF)).as("unchanged, it changes nothing").isEqualTo(CONF);
    }

    @Test
    void aChangeOfDelegationsKeepsTheMembersEntriesAsTheyAre() {
        RaftConfigurationProto changed = Group.of(CONF).withDelegations(Map.of()).onto(CONF);
        assertThat(changed.getPeersList()).isEqualTo(CONF.getPeersList());
        assertThat(changed.getDelegationsList()).isEmpty();
    }

    @Test
    void aStartingGroupWritesItsDelegationsByListener() {
        RaftConfigurationProto conf = Group.of(List.of("c1", "c2"), List.of("b1", "b0"))
                .withDelegations(Map.of("b1", "c1", "b0", "c2")).toProto();
        assertThat(conf.getListenersList()).extracting(RaftPeerProto::getId).containsExactly("b1", "b0");
        assertThat(conf.getDelegationsList()).extracting(ListenerDelegationProto::getListener).containsExactly("b0", "b1");
    }

    @Test
    void aCoresStatusReadsAsTheMembersStatus() {
        RaftStatus core = new RaftStatus("c1", RaftPeerRole.LEADER, false, 3, "c1", 40, 39, 1, 42, CONF, 0, 900,
                List.of(new RaftStatus.PeerStatus("c2", true, 42, 43, "REPLICATE", 0, 899, 40)));
        MemberStatus member = MemberStatus.of(core);
        assertThat(member.leads()).isTrue();
        assertThat(member.role()).isEqualTo(MemberRole.LEADER);
        assertThat(member.group()).isEqualTo(Group.of(CONF));
        assertThat(member.peers()).containsExactly(new MemberStatus.Peer("c2", true, 42));
        assertThat(List.of(member.term(), member.commitIndex(), member.appliedIndex(), member.lastIndex()))
                .containsExactly(3L, 40L, 39L, 42L);
    }
}
