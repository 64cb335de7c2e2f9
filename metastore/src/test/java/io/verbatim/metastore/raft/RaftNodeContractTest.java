package io.verbatim.metastore.raft;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.ByteString;
import io.verbatim.metastore.proto.HardStateProto;
import io.verbatim.metastore.proto.LogEntryProto;
import io.verbatim.metastore.proto.RaftPeerRole;
import io.verbatim.metastore.proto.SnapshotMetaProto;
import io.verbatim.metastore.proto.TermIndexProto;
import io.verbatim.metastore.storage.RaftStorage;
import java.util.List;
import java.util.Optional;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** The driver's side of the contract: one Ready at a time, recovery, bootstrap, compaction bounds. */
class RaftNodeContractTest {

    private static RaftNode single(RaftStorage.Recovered recovered, Optional<ByteString> data) {
        return RaftNode.start(RaftConfig.defaults("n1", "g"), recovered, data,
                Harness.configuration(List.of("n1"), List.of()), new SplittableRandom(1));
    }

    @Test
    void aSingleVoterElectsItselfCommitsAndHandsOneReadyAtATime() {
        RaftNode n = single(RaftStorage.Recovered.empty(), Optional.empty());
        for (int i = 0; i < 20 && n.status().role() != RaftPeerRole.LEADER; i++) {
            n.tick();
        }
        assertThat(n.status().role()).isEqualTo(RaftPeerRole.LEADER);
        assertThat(n.propose(ByteString.copyFromUtf8("x"))).isInstanceOf(Proposal.Accepted.class);
        Ready r = n.ready();
        assertThat(r.hardState()).isPresent();
        assertThat(r.entries()).hasSize(2);
        assertThat(r.committedEntries()).hasSize(2);
        assertThat(r.softState().map(Ready.SoftState::role)).contains(RaftPeerRole.LEADER);
        assertThat(n.hasReady()).isFalse();
        assertThatThrownBy(n::ready).isInstanceOf(IllegalStateException.class);
        n.advance(r);
        assertThat(n.status().appliedIndex()).isEqualTo(2);
        assertThat(n.hasReady()).isFalse();
        assertThatThrownBy(() -> n.compact(3, ByteString.EMPTY)).hasMessageContaining("applied 2");
        SnapshotMetaProto meta = n.compact(2, ByteString.copyFromUtf8("s"));
        assertThat(meta.getLastIncluded()).isEqualTo(TermIndexProto.newBuilder().setTerm(1).setIndex(2).build());
        assertThat(meta.getConfiguration().getPeers(0).getId()).isEqualTo("n1");
        assertThat(n.status().firstIndex()).isEqualTo(3);
    }

    @Test
    void aRestartedMemberReappliesFromItsSnapshotUpToItsCommit() {
        SnapshotMetaProto meta = SnapshotMetaProto.newBuilder()
                .setLastIncluded(TermIndexProto.newBuilder().setTerm(2).setIndex(5))
                .setConfiguration(Harness.configuration(List.of("n1"), List.of())).build();
        List<LogEntryProto> entries = List.of(LogEntryProto.newBuilder().setTerm(2).setIndex(6).build(),
                LogEntryProto.newBuilder().setTerm(3).setIndex(7).build());
        var recovered = new RaftStorage.Recovered(Optional.of(meta),
                HardStateProto.newBuilder().setCurrentTerm(3).setVotedFor("n1").setCommitIndex(6).build(), entries);
        assertThatThrownBy(() -> single(recovered, Optional.empty())).hasMessageContaining("needs its data");
        RaftNode n = single(recovered, Optional.of(ByteString.copyFromUtf8("s")));
        assertThat(n.status().term()).isEqualTo(3);
        assertThat(n.status().lastIndex()).isEqualTo(7);
        Ready r = n.ready();
        assertThat(r.hardState()).isEmpty();
        assertThat(r.entries()).isEmpty();
        assertThat(r.committedEntries()).extracting(LogEntryProto::getIndex).containsExactly(6L);
        n.advance(r);
    }

    @Test
    void aJoinerWithNoConfigurationNeverCampaigns() {
        RaftNode n = RaftNode.start(RaftConfig.defaults("n9", "g"), RaftStorage.Recovered.empty(), Optional.empty(),
                io.verbatim.metastore.proto.RaftConfigurationProto.getDefaultInstance(), new SplittableRandom(1));
        for (int i = 0; i < 500; i++) {
            n.tick();
        }
        assertThat(n.status().role()).isEqualTo(RaftPeerRole.FOLLOWER);
        assertThat(n.hasReady()).isFalse();
        assertThat(n.readIndex(1)).as("no leader known").isFalse();
        assertThat(n.propose(ByteString.EMPTY)).isEqualTo(new Proposal.NotLeader(Optional.empty()));
    }

    @Test
    void aConfigNamesTheParameterItRefuses() {
        assertThatThrownBy(() -> RaftConfig.defaults("n1", "g").withHeartbeatTicks(10))
                .hasMessageContaining("electionTicks").hasMessageContaining("10");
        assertThatThrownBy(() -> RaftConfig.defaults("n1", "g").withMaxInflightAppends(0))
                .hasMessageContaining("maxInflightAppends");
    }
}
