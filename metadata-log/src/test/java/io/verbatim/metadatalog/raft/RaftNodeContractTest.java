package io.verbatim.metadatalog.raft;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.ByteString;
import io.verbatim.metadatalog.proto.HardStateProto;
import io.verbatim.metadatalog.proto.LogEntryProto;
import io.verbatim.metadatalog.proto.RaftConfigurationProto;
import io.verbatim.metadatalog.proto.RaftPeerRole;
import io.verbatim.metadatalog.proto.SnapshotMetaProto;
import io.verbatim.metadatalog.proto.TermIndexProto;
import io.verbatim.metadatalog.storage.RaftStorage;
import io.verbatim.metadatalog.storage.SegmentedRaftStorage;
import io.verbatim.metadatalog.storage.StorageOptions;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

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
        // the log keeps a tail (RaftConfig.logTailEntries, 1,000 by default): both entries stay
        assertThat(n.status().firstIndex()).isEqualTo(1);
        assertThat(n.termAt(1)).isEqualTo(1);
    }

    @Test
    void aCompactionWithNoTailDropsEveryEntryItCovers() {
        RaftNode n = RaftNode.start(RaftConfig.defaults("n1", "g").withLogTailEntries(0), RaftStorage.Recovered.empty(),
                Optional.empty(), Harness.configuration(List.of("n1"), List.of()), new SplittableRandom(1));
        for (int i = 0; i < 30 && n.status().role() != RaftPeerRole.LEADER; i++) {
            n.tick();
        }
        n.propose(ByteString.copyFromUtf8("x"));
        n.advance(n.ready());
        n.compact(2, ByteString.copyFromUtf8("s"));
        assertThat(n.status().firstIndex()).isEqualTo(3);
        assertThat(n.termAt(2)).isEqualTo(1);
        assertThat(n.termAt(1)).isEqualTo(-1);
    }

    /** Hands every Ready to {@code storage} as the driver does, and returns the data applied. */
    private static List<String> drive(RaftNode n, RaftStorage storage) {
        List<String> applied = new ArrayList<>();
        while (n.hasReady()) {
            Ready r = n.ready();
            r.snapshot().ifPresent(s -> storage.saveSnapshot(s.meta(), s.data()));
            if (!r.entries().isEmpty()) {
                storage.append(r.entries());
            }
            r.hardState().ifPresent(storage::saveHardState);
            storage.sync();
            r.committedEntries().stream().filter(LogEntryProto::hasStateMachineLogEntry)
                    .forEach(e -> applied.add(e.getStateMachineLogEntry().getLogData().toStringUtf8()));
            n.advance(r);
        }
        return applied;
    }

    private static RaftNode leaderOn(RaftStorage storage, long tail) {
        RaftStorage.Recovered recovered = storage.recover();
        RaftNode n = RaftNode.start(RaftConfig.defaults("n1", "g").withLogTailEntries(tail), recovered,
                storage.snapshotData(), Harness.configuration(List.of("n1"), List.of()), new SplittableRandom(1));
        for (int i = 0; i < 60 && n.status().role() != RaftPeerRole.LEADER; i++) {
            n.tick();
            drive(n, storage);
        }
        assertThat(n.status().role()).isEqualTo(RaftPeerRole.LEADER);
        return n;
    }

    /**
     * The tail is kept in memory only: the storage drops what the snapshot covers. A member restarted from
     * disk after a compaction with a tail starts at the snapshot, with the entries after it, and keeps a
     * tail again at its next compaction (as far back as its log then reaches).
     */
    @Test
    void aRestartFromDiskAfterACompactionWithATailStartsAtTheSnapshot(@TempDir Path dir) {
        long snapshotAt;
        try (SegmentedRaftStorage storage = SegmentedRaftStorage.open(dir, StorageOptions.defaults())) {
            RaftNode n = leaderOn(storage, 5);
            for (int i = 0; i < 8; i++) {
                n.propose(ByteString.copyFromUtf8("v" + i));
                drive(n, storage);
            }
            snapshotAt = n.status().appliedIndex();
            SnapshotMetaProto meta = n.compact(snapshotAt, ByteString.copyFromUtf8("s" + snapshotAt));
            storage.saveSnapshot(meta, ByteString.copyFromUtf8("s" + snapshotAt));
            assertThat(n.status().firstIndex()).isEqualTo(snapshotAt - 5 + 1);
            assertThat(n.termAt(snapshotAt - 5)).isEqualTo(1);
            for (int i = 8; i < 10; i++) {
                n.propose(ByteString.copyFromUtf8("v" + i));
                drive(n, storage);
            }
            assertThat(n.status().commitIndex()).isEqualTo(snapshotAt + 2);
        }
        try (SegmentedRaftStorage storage = SegmentedRaftStorage.open(dir, StorageOptions.defaults())) {
            RaftStorage.Recovered recovered = storage.recover();
            assertThat(recovered.snapshot().orElseThrow().getLastIncluded().getIndex()).isEqualTo(snapshotAt);
            assertThat(recovered.entries()).extracting(LogEntryProto::getIndex)
                    .containsExactly(snapshotAt + 1, snapshotAt + 2);
            RaftNode n = RaftNode.start(RaftConfig.defaults("n1", "g").withLogTailEntries(5), recovered,
                    storage.snapshotData(), Harness.configuration(List.of("n1"), List.of()), new SplittableRandom(1));
            assertThat(n.status().firstIndex()).isEqualTo(snapshotAt + 1);
            assertThat(n.status().lastIndex()).isEqualTo(snapshotAt + 2);
            assertThat(n.termAt(snapshotAt)).isEqualTo(1);
            assertThat(n.termAt(snapshotAt - 1)).isEqualTo(-1);
            assertThat(drive(n, storage)).containsExactly("v8", "v9");
        }
        try (SegmentedRaftStorage storage = SegmentedRaftStorage.open(dir, StorageOptions.defaults())) {
            RaftNode n = leaderOn(storage, 5);
            n.propose(ByteString.copyFromUtf8("w"));
            assertThat(drive(n, storage)).containsExactly("w");
            long applied = n.status().appliedIndex();
            SnapshotMetaProto meta = n.compact(applied, ByteString.copyFromUtf8("s" + applied));
            storage.saveSnapshot(meta, ByteString.copyFromUtf8("s" + applied));
            // the log reached back to the previous snapshot only: the tail is what it held, under five entries
            assertThat(n.status().firstIndex()).isEqualTo(snapshotAt + 1);
            assertThat(n.termAt(snapshotAt)).isEqualTo(1);
            assertThat(storage.recover().entries()).isEmpty();
        }
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
                RaftConfigurationProto.getDefaultInstance(), new SplittableRandom(1));
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
