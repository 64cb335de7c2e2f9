package io.verbatim.metadatalog.raft;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import io.verbatim.metadatalog.proto.AppendEntriesRequestProto;
import io.verbatim.metadatalog.proto.AppendResult;
import io.verbatim.metadatalog.proto.LogEntryProto;
import io.verbatim.metadatalog.proto.RaftMessageProto;
import io.verbatim.metadatalog.proto.RaftPeerRole;
import io.verbatim.metadatalog.proto.RequestVoteRequestProto;
import io.verbatim.metadatalog.proto.StateMachineLogEntryProto;
import io.verbatim.metadatalog.proto.TermIndexProto;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The rules of the core, one scripted scenario each. */
class RaftRulesTest {

    private static Harness threeVotersTwoListeners() {
        return Harness.group(List.of("n1", "n2", "n3"), List.of("l1", "l2"));
    }

    @Test
    void aListenerNeverCountsTowardQuorum() {
        Harness h = threeVotersTwoListeners();
        h.elect("n1");
        long before = h.status("n1").commitIndex();
        h.isolated.add("n2");
        h.isolated.add("n3");
        long index = h.propose("n1", "x");
        h.run(3);
        assertThat(h.status("l1").lastIndex()).isGreaterThanOrEqualTo(index);
        assertThat(h.status("l2").lastIndex()).isGreaterThanOrEqualTo(index);
        assertThat(h.status("n1").commitIndex()).as("listeners alone never commit").isEqualTo(before);
        h.isolated.clear();
        h.run(2);
        assertThat(h.status("n1").commitIndex()).isGreaterThanOrEqualTo(index);
        assertThat(h.appliedData("l1")).containsExactly("x");
    }

    @Test
    void aListenerRejectsEveryVote() {
        Harness h = threeVotersTwoListeners();
        for (boolean pre : new boolean[] {true, false}) {
            h.node("l1").step(RaftMessageProto.newBuilder().setRequestVote(RequestVoteRequestProto.newBuilder()
                    .setServerRequest(Messages.request("n2", "l1", Harness.GROUP, 1)).setCandidateTerm(7)
                    .setCandidateLastEntry(TermIndexProto.newBuilder().setTerm(6).setIndex(100)).setPreVote(pre))
                    .build());
            h.drive("l1");
            RaftMessageProto reply = h.inflight.pollLast();
            assertThat(reply.hasRequestVoteReply()).isTrue();
            assertThat(reply.getRequestVoteReply().getServerReply().getSuccess()).as("pre-vote " + pre).isFalse();
        }
        assertThat(h.status("l1").role()).isEqualTo(RaftPeerRole.LISTENER);
    }

    @Test
    void aListenerNeverCampaigns() {
        Harness h = threeVotersTwoListeners();
        h.tick("l1", 200);
        assertThat(h.status("l1").role()).isEqualTo(RaftPeerRole.LISTENER);
        assertThat(h.count("l1", RaftMessageProto.BodyCase.REQUESTVOTE)).isZero();
        h.elect("n1");
        h.isolated.add("l1");
        h.run(100);
        assertThat(h.status("l1").role()).isEqualTo(RaftPeerRole.LISTENER);
        assertThat(h.count("l1", RaftMessageProto.BodyCase.REQUESTVOTE)).isZero();
    }

    /** Raft's Figure 8: an entry of an older term on a quorum is not committed until one of the leader's own is. */
    @Test
    void aLeaderCommitsOnlyEntriesOfItsOwnTerm() {
        Harness h = Harness.group(Harness.configuration(List.of("n1", "n2", "n3", "n4", "n5"), List.of()),
                c -> c.withPreVote(false).withCheckQuorum(false).withMaxEntriesBytesPerAppend(1).withMaxInflightAppends(1));
        h.elect("n1");
        h.isolated.addAll(List.of("n3", "n4", "n5"));
        long x = h.propose("n1", "x");
        h.deliver();
        assertThat(h.status("n2").lastIndex()).isEqualTo(x);
        h.isolated.clear();
        h.isolated.addAll(List.of("n1"));
        h.drop = m -> m.hasAppendEntries() && m.getAppendEntries().getEntriesCount() > 0;
        h.elect("n5"); // with n3 and n4; its no-op stays on n5
        long t5 = h.status("n5").term();
        h.drop = m -> false;
        h.isolated.clear();
        h.isolated.add("n5");
        // n1 comes back, learns term t5 from the replies to its stale appends, and wins the next term. Its
        // own entries never leave; x (of the old term) reaches n3 and n4, so a quorum holds it.
        h.rewrite = m -> m.hasAppendEntries() ? withoutEntriesAfterTerm(m, t5) : m;
        h.tick("n1", 1);
        h.deliver();
        h.elect("n1");
        long t1 = h.status("n1").term();
        assertThat(t1).isGreaterThan(t5);
        h.run(5);
        assertThat(h.status("n3").lastIndex()).isEqualTo(x);
        assertThat(h.node("n3").termAt(x)).isLessThan(t1);
        assertThat(h.status("n1").commitIndex()).as("an old-term entry on a quorum is not committed").isLessThan(x);
        // Rightly so: n5 may still win and replace it.
        h.isolated.clear();
        h.isolated.add("n1");
        h.rewrite = m -> m;
        h.tick("n5", 1); // the stale leader of t5 learns the newer term
        h.deliver();
        h.elect("n5");
        h.run(3);
        assertThat(h.node("n3").termAt(x)).isEqualTo(t5);
    }

    /** The append as sent, less its entries of terms after {@code term} (as if they were lost on the way). */
    private static RaftMessageProto withoutEntriesAfterTerm(RaftMessageProto m, long term) {
        AppendEntriesRequestProto a = m.getAppendEntries();
        List<LogEntryProto> kept = a.getEntriesList().stream().takeWhile(e -> e.getTerm() <= term).toList();
        long prev = a.hasPreviousLog() ? a.getPreviousLog().getIndex() : 0;
        return m.toBuilder().setAppendEntries(a.toBuilder().clearEntries().addAllEntries(kept)
                .setLeaderCommit(Math.min(a.getLeaderCommit(), prev + kept.size()))).build();
    }

    @Test
    void preVoteDoesNotDisruptAStableLeader() {
        Harness h = Harness.group(List.of("n1", "n2", "n3"), List.of());
        h.elect("n1");
        long term = h.status("n1").term();
        h.isolated.add("n3");
        h.run(100);
        assertThat(h.status("n3").term()).as("pre-votes do not raise the term").isEqualTo(term);
        h.isolated.clear();
        h.run(20);
        assertThat(h.status("n1").role()).isEqualTo(RaftPeerRole.LEADER);
        assertThat(h.status("n1").term()).isEqualTo(term);
    }

    @Test
    void aVoterThatHearsALeaderIgnoresACampaign() {
        Harness h = Harness.group(Harness.configuration(List.of("n1", "n2", "n3"), List.of()), c -> c.withPreVote(false));
        h.elect("n1");
        long term = h.status("n1").term();
        h.isolated.add("n3");
        h.run(25); // n3 campaigns alone, raising its term
        assertThat(h.status("n3").term()).isGreaterThan(term);
        h.isolated.clear();
        h.tick("n3", 30);
        h.deliver();
        // n1 and n2 hear n1 every tick, so they ignore n3's higher-term votes: the leader is not disrupted
        // by the campaign itself (only n3's replies, carrying its term, make it step down later).
        assertThat(h.status("n2").term()).isEqualTo(term);
    }

    @Test
    void checkQuorumStepsDownAnIsolatedLeader() {
        Harness h = Harness.group(List.of("n1", "n2", "n3"), List.of("l1"));
        h.elect("n1");
        h.isolated.addAll(List.of("n2", "n3"));
        h.run(25);
        assertThat(h.status("n1").role()).as("the listener's replies do not keep it leading").isEqualTo(RaftPeerRole.FOLLOWER);
    }

    @Test
    void aFollowerNeverTruncatesCommittedEntries() {
        Harness h = Harness.group(List.of("n1", "n2", "n3"), List.of());
        h.elect("n1");
        h.propose("n1", "a");
        h.propose("n1", "b");
        h.run(2);
        long commit = h.status("n2").commitIndex();
        long term = h.status("n2").term();
        assertThat(commit).isGreaterThanOrEqualTo(3);
        LogEntryProto rogue = LogEntryProto.newBuilder().setTerm(term).setIndex(2)
                .setStateMachineLogEntry(StateMachineLogEntryProto.newBuilder().setLogData(ByteString.copyFromUtf8("z")))
                .build();
        h.inflight.clear();
        h.node("n2").step(RaftMessageProto.newBuilder().setAppendEntries(AppendEntriesRequestProto.newBuilder()
                .setServerRequest(Messages.request("n1", "n2", Harness.GROUP, 99)).setLeaderTerm(term)
                .setPreviousLog(TermIndexProto.newBuilder().setTerm(term).setIndex(1)).addEntries(rogue)
                .setLeaderCommit(commit)).build());
        h.drive("n2");
        var reply = h.inflight.pollLast().getAppendEntriesReply();
        assertThat(reply.getResult()).isEqualTo(AppendResult.INCONSISTENCY);
        assertThat(reply.getNextIndex()).isEqualTo(commit + 1);
        assertThat(h.appliedData("n2")).containsExactly("a", "b");
        assertThat(h.status("n2").lastIndex()).isEqualTo(3);
    }

    @Test
    void readIndexWaitsForTheNoOpOfTheNewTerm() {
        Harness h = Harness.group(List.of("n1", "n2", "n3"), List.of());
        h.elect("n1");
        h.propose("n1", "a");
        h.run(2);
        h.isolated.add("n1");
        // A new leader wins, but its no-op is held back: it does not yet know what is committed.
        h.drop = m -> m.hasAppendEntries() && m.getAppendEntries().getEntriesCount() > 0;
        String leader = null;
        for (int i = 0; i < 60 && leader == null; i++) {
            h.run(1);
            leader = h.status("n2").role() == RaftPeerRole.LEADER ? "n2"
                    : h.status("n3").role() == RaftPeerRole.LEADER ? "n3" : null;
        }
        assertThat(leader).isNotNull();
        assertThat(h.node(leader).readIndex(7)).isTrue();
        h.run(3);
        assertThat(h.reads.get(leader)).isEmpty();
        h.drop = m -> false;
        h.run(3);
        long noOp = h.status(leader).commitIndex();
        assertThat(h.node(leader).termAt(noOp)).isEqualTo(h.status(leader).term());
        assertThat(h.reads.get(leader)).containsExactly(new Ready.ReadState(7, noOp));
    }

    @Test
    void readIndexOnAListenerIsForwardedToTheLeaderAndConfirmedByVoters() {
        Harness h = threeVotersTwoListeners();
        h.elect("n1");
        long index = h.propose("n1", "a");
        h.run(2);
        h.isolated.add("n3");
        h.drop = m -> m.hasAppendEntriesReply() && Messages.from(m).equals("n2");
        assertThat(h.node("l1").readIndex(42)).isTrue();
        h.run(3);
        assertThat(h.reads.get("l1")).as("listeners' acknowledgements do not confirm a read").isEmpty();
        h.drop = m -> false;
        h.run(2);
        assertThat(h.reads.get("l1")).containsExactly(new Ready.ReadState(42, index));
    }

    @Test
    void transferToAListenerIsRefused() {
        Harness h = threeVotersTwoListeners();
        h.elect("n1");
        Proposal p = h.node("n1").transferLeadership("l1");
        assertThat(p).isInstanceOf(Proposal.Refused.class);
        assertThat(((Proposal.Refused) p).reason()).contains("l1").contains("listener");
        assertThat(h.node("n1").transferLeadership("nobody")).isInstanceOf(Proposal.Refused.class);
    }

    @Test
    void leadershipTransferHandsOverAndRefusesProposalsMeanwhile() {
        Harness h = threeVotersTwoListeners();
        h.elect("n1");
        h.isolated.add("n3");
        h.propose("n1", "a");
        h.deliver();
        h.isolated.clear();
        assertThat(h.node("n1").transferLeadership("n3")).isInstanceOf(Proposal.Accepted.class);
        assertThat(h.node("n1").propose(ByteString.copyFromUtf8("b"))).isInstanceOf(Proposal.Refused.class);
        h.drive("n1");
        h.deliver();
        assertThat(h.status("n3").role()).isEqualTo(RaftPeerRole.LEADER);
        assertThat(h.status("n1").role()).isEqualTo(RaftPeerRole.FOLLOWER);
        assertThat(h.count("n1", RaftMessageProto.BodyCase.STARTLEADERELECTION)).isEqualTo(1);
    }

    @Test
    void oneVoterChangeAtATime() {
        Harness h = Harness.group(List.of("n1", "n2", "n3"), List.of("l1"));
        h.elect("n1");
        h.run(2);
        Proposal two = h.node("n1").setConfiguration(Harness.configuration(List.of("n1", "n2", "n3", "n4", "n5"), List.of("l1")));
        assertThat(two).isInstanceOf(Proposal.Refused.class);
        assertThat(((Proposal.Refused) two).reason()).contains("n4").contains("n5");
        Proposal swap = h.node("n1").setConfiguration(Harness.configuration(List.of("n1", "n2", "n4"), List.of("l1")));
        assertThat(((Proposal.Refused) swap).reason()).contains("n3").contains("n4");
        // Listeners change freely alongside one voter.
        assertThat(h.node("n1").setConfiguration(Harness.configuration(List.of("n1", "n2", "n3", "l1"), List.of("l2", "l3"))))
                .isInstanceOf(Proposal.Accepted.class);
        Proposal again = h.node("n1").setConfiguration(Harness.configuration(List.of("n1", "n2", "n3", "l1"), List.of("l2")));
        assertThat(((Proposal.Refused) again).reason()).contains("not yet committed");
        assertThat(h.status("n1").configuration().getPeersCount()).as("in force when appended").isEqualTo(4);
    }

    @Test
    void aNewLeaderChangesNoMembershipBeforeCommittingAnEntryOfItsTerm() {
        Harness h = Harness.group(List.of("n1", "n2", "n3"), List.of());
        h.isolated.addAll(List.of("n2", "n3"));
        h.drop = m -> m.hasAppendEntriesReply();
        h.isolated.clear();
        h.elect("n1");
        Proposal p = h.node("n1").setConfiguration(Harness.configuration(List.of("n1", "n2", "n3"), List.of("l1")));
        assertThat(((Proposal.Refused) p).reason()).contains("n1").contains("committed an entry of its term");
    }

    @Test
    void aListenerIsPromotedToVoterAndAVoterDemotedToListener() {
        Harness h = Harness.group(List.of("n1", "n2", "n3"), List.of("l1"));
        h.elect("n1");
        h.run(2);
        assertThat(h.node("n1").setConfiguration(Harness.configuration(List.of("n1", "n2", "n3", "l1"), List.of())))
                .isInstanceOf(Proposal.Accepted.class);
        h.run(2);
        assertThat(h.status("l1").role()).isEqualTo(RaftPeerRole.FOLLOWER);
        assertThat(h.node("n1").setConfiguration(Harness.configuration(List.of("n1", "n2", "l1"), List.of("n3"))))
                .isInstanceOf(Proposal.Accepted.class);
        h.run(2);
        assertThat(h.status("n3").role()).isEqualTo(RaftPeerRole.LISTENER);
        h.isolated.add("n2");
        h.propose("n1", "a");
        h.run(2);
        assertThat(h.appliedData("n1")).as("commits with the promoted voter").containsExactly("a");
    }

    @Test
    void aPromotionWaitsUntilStayingVotersHoldTheConfiguration() {
        Harness h = Harness.group(List.of("n1", "n2", "n3"), List.of("l1"));
        h.elect("n1");
        h.run(2);
        h.isolated.add("l1");
        assertThat(h.node("n1").setConfiguration(Harness.configuration(List.of("n1", "n2", "n3", "l1"), List.of())))
                .isInstanceOf(Proposal.Accepted.class);
        h.run(2);
        Proposal next = h.node("n1").setConfiguration(Harness.configuration(List.of("n1", "l1", "n3"), List.of()));
        assertThat(((Proposal.Refused) next).reason()).contains("voter l1 has not acknowledged");
    }

    /**
     * A voter whose log ends in an older term's configuration entry demoting it (appended by a leader cut
     * off from the others, kept by no later leader) holds the bootstrap configuration the new leader has in
     * force, yet takes itself for a listener and rejects every vote. Were the next change to make the quorum
     * need it (removing another voter), no one could be elected; so the change waits until it has
     * acknowledged the new leader's first entry, which truncates the stale one.
     */
    @Test
    void aVoterChangeWaitsUntilStayingVotersHoldTheLeadersFirstEntry() {
        Harness h = Harness.group(Harness.configuration(List.of("n1", "n2", "n3"), List.of()), c -> c.withCheckQuorum(false));
        h.elect("n3");
        h.run(2);
        h.isolated.add("n3");
        assertThat(h.node("n3").setConfiguration(Harness.configuration(List.of("n1", "n2"), List.of("n3"))))
                .isInstanceOf(Proposal.Accepted.class);
        h.drive("n3");
        h.elect("n1");
        h.run(2);
        assertThat(h.status("n1").configuration().getPeersCount()).as("the demotion was never replicated").isEqualTo(3);
        Proposal early = h.node("n1").setConfiguration(Harness.configuration(List.of("n1", "n3"), List.of()));
        assertThat(early).isInstanceOf(Proposal.Refused.class);
        assertThat(((Proposal.Refused) early).reason()).contains("voter n3 has not acknowledged");
        h.isolated.clear();
        h.run(3);
        assertThat(h.status("n3").role()).as("its stale demotion truncated").isEqualTo(RaftPeerRole.FOLLOWER);
        assertThat(h.node("n1").setConfiguration(Harness.configuration(List.of("n1", "n3"), List.of())))
                .isInstanceOf(Proposal.Accepted.class);
    }

    @Test
    void aRemovedLeaderStepsDownAfterTheChangeCommitsAndNeverCampaigns() {
        Harness h = Harness.group(List.of("n1", "n2", "n3"), List.of());
        h.elect("n1");
        h.run(2);
        assertThat(h.node("n1").setConfiguration(Harness.configuration(List.of("n2", "n3"), List.of())))
                .isInstanceOf(Proposal.Accepted.class);
        h.drive("n1");
        assertThat(h.status("n1").role()).as("leads until the change commits").isEqualTo(RaftPeerRole.LEADER);
        h.deliver();
        assertThat(h.status("n1").role()).isEqualTo(RaftPeerRole.FOLLOWER);
        h.run(60);
        assertThat(h.status("n2").role() == RaftPeerRole.LEADER || h.status("n3").role() == RaftPeerRole.LEADER).isTrue();
        long campaigns = h.count("n1", RaftMessageProto.BodyCase.REQUESTVOTE);
        h.isolated.add("n1");
        h.run(60);
        assertThat(h.count("n1", RaftMessageProto.BodyCase.REQUESTVOTE)).isEqualTo(campaigns);
    }

    /**
     * A compaction keeps a tail of entries (RaftConfig.logTailEntries): a voter and a listener five entries
     * behind the snapshot are sent those entries, not the snapshot.
     */
    @Test
    void membersFiveEntriesBehindACompactionAreSentEntriesFromTheTail() {
        Harness h = Harness.group(Harness.configuration(List.of("n1", "n2", "n3"), List.of("l1")),
                c -> c.withSnapshotChunkBytes(4).withLogTailEntries(10));
        h.elect("n1");
        h.propose("n1", "a");
        h.run(2);
        long before = h.status("n1").appliedIndex();
        h.proposeWithout(List.of("n3", "l1"), "n1", 5, 2);
        long applied = h.status("n1").appliedIndex();
        assertThat(applied).isEqualTo(before + 5);
        var meta = h.node("n1").compact(applied, ByteString.copyFromUtf8("state-machine-at-" + applied));
        assertThat(meta.getLastIncluded().getIndex()).isEqualTo(applied);
        assertThat(h.status("n1").firstIndex()).isEqualTo(Math.max(1, applied - 10 + 1));
        assertThat(h.status("n3").lastIndex()).isEqualTo(before);
        h.isolated.clear();
        h.propose("n1", "after");
        h.run(4);
        assertThat(h.count("n1", RaftMessageProto.BodyCase.INSTALLSNAPSHOT)).isZero();
        assertThat(h.snapshots.getOrDefault("n3", List.of())).isEmpty();
        assertThat(h.snapshots.getOrDefault("l1", List.of())).isEmpty();
        for (String m : List.of("n3", "l1")) {
            assertThat(h.appliedData(m)).containsExactly("a", "v0", "v1", "v2", "v3", "v4", "after");
            assertThat(h.status(m).appliedIndex()).isEqualTo(h.status("n1").commitIndex());
        }
    }

    /** A member further behind than the tail kept still needs the snapshot, and gets it. */
    @Test
    void aMemberBehindTheTailGetsTheSnapshot() {
        Harness h = Harness.group(Harness.configuration(List.of("n1", "n2", "n3"), List.of("l1")),
                c -> c.withSnapshotChunkBytes(4).withLogTailEntries(2));
        h.elect("n1");
        h.propose("n1", "a");
        h.run(2);
        h.proposeWithout(List.of("l1"), "n1", 5, 2);
        long applied = h.status("n1").appliedIndex();
        ByteString state = ByteString.copyFromUtf8("state-machine-at-" + applied);
        h.node("n1").compact(applied, state);
        assertThat(h.status("n1").firstIndex()).isEqualTo(applied - 1);
        assertThat(h.node("n1").termAt(applied - 2)).isEqualTo(h.status("n1").term()); // the tail's previous entry
        assertThat(h.node("n1").termAt(applied - 3)).isEqualTo(-1);
        h.isolated.clear();
        h.propose("n1", "after");
        h.run(4);
        assertThat(h.count("n1", RaftMessageProto.BodyCase.INSTALLSNAPSHOT)).isPositive();
        assertThat(h.snapshots.get("l1")).hasSize(1);
        assertThat(h.snapshots.get("l1").get(0).data()).isEqualTo(state);
        assertThat(h.snapshots.getOrDefault("n2", List.of())).isEmpty();
        assertThat(h.snapshots.getOrDefault("n3", List.of())).isEmpty();
        assertThat(h.appliedData("l1")).containsExactly("after");
        assertThat(h.status("l1").appliedIndex()).isEqualTo(h.status("n1").commitIndex());
    }

    @Test
    void aMemberBehindThePurgedLogGetsASnapshotInChunks() {
        Harness h = Harness.group(Harness.configuration(List.of("n1", "n2", "n3"), List.of("l1")),
                c -> c.withSnapshotChunkBytes(4).withLogTailEntries(0));
        h.elect("n1");
        h.proposeWithout(List.of("l1"), "n1", 5, 2);
        long applied = h.status("n1").appliedIndex();
        ByteString state = ByteString.copyFromUtf8("state-machine-at-" + applied);
        var meta = h.node("n1").compact(applied, state);
        assertThat(meta.getLastIncluded().getIndex()).isEqualTo(applied);
        assertThat(meta.getConfiguration().getListenersCount()).isEqualTo(1);
        h.isolated.clear();
        h.propose("n1", "after");
        h.run(3);
        long chunks = h.count("n1", RaftMessageProto.BodyCase.INSTALLSNAPSHOT);
        assertThat(chunks).isGreaterThanOrEqualTo((state.size() + 3) / 4);
        assertThat(h.snapshots.get("l1")).hasSize(1);
        assertThat(h.snapshots.get("l1").get(0).data()).isEqualTo(state);
        assertThat(h.appliedData("l1")).containsExactly("after");
        assertThat(h.status("l1").appliedIndex()).isEqualTo(h.status("n1").commitIndex());
    }

    /**
     * The progress rule future delegation relies on: a heartbeat whose previousLog matched proves the
     * member's log up to that index, so a leader that only heartbeats a listener still learns its match.
     */
    @Test
    void aHeartbeatReplyTeachesTheLeaderAListenersMatchIndex() {
        Harness h = threeVotersTwoListeners();
        h.elect("n1");
        h.propose("n1", "a");
        h.run(2);
        long last = h.status("n1").lastIndex();
        var l1 = h.status("n1").peers().stream().filter(p -> p.id().equals("l1")).findFirst().orElseThrow();
        assertThat(l1.voter()).isFalse();
        assertThat(l1.matchIndex()).isEqualTo(last);
        assertThat(l1.nextIndex()).isEqualTo(last + 1);
        assertThat(l1.followerCommit()).isEqualTo(h.status("n1").commitIndex());
        assertThat(h.transcript.stream().anyMatch(s -> s.startsWith("l1 > n1 AppendEntriesReply") && s.contains("heartbeat")
                && s.contains("matchIndex=" + last))).isTrue();
    }

    /**
     * A member whose log ends in a suffix of an older term that no leader will keep, where that term's run
     * reaches below the match the leader has proved (a heartbeat at the common prefix succeeded), answers
     * a probe past its match with a hint at or below that match. Such a rejection, newer than the SUCCESS
     * that proved the match, is not stale: the probe restarts right after the match (before, it was ignored
     * as stale and the member never caught up).
     */
    @Test
    void aRejectionHintingAtOrBelowTheMatchRestartsTheProbeAfterTheMatch() {
        Harness h = Harness.group(Harness.configuration(List.of("n1", "n2", "n3", "n4", "n5"), List.of()),
                c -> c.withPreVote(false).withCheckQuorum(false));
        h.elect("n1");
        h.propose("n1", "a");
        h.deliver();
        assertThat(h.status("n2").commitIndex()).isEqualTo(2);
        // (1,3) and (1,4) reach n2 and n3 and commit on n1, which tells no one; (1,5) reaches n2 alone.
        h.isolated.addAll(List.of("n4", "n5"));
        h.drop = m -> m.hasAppendEntries() && Transcript.from(m).equals("n1") && (m.getAppendEntries().getEntriesCount() == 0
                || Transcript.to(m).equals("n3") && m.getAppendEntries().getEntriesList().stream().anyMatch(e -> e.getIndex() == 5));
        h.propose("n1", "b");
        h.propose("n1", "c");
        h.propose("n1", "d");
        h.deliver();
        assertThat(h.status("n1").commitIndex()).isEqualTo(4);
        assertThat(h.status("n3").lastIndex()).isEqualTo(4);
        assertThat(h.status("n2").lastIndex()).isEqualTo(5);
        assertThat(h.status("n2").commitIndex()).isEqualTo(2);
        // n3 leads term 2 with the votes of n4 and n5, which then hear nothing from it, so it commits nothing
        // (its commit stays 2); n2 is away meanwhile, so the no-op's probe to it is lost.
        h.isolated.clear();
        h.isolated.addAll(List.of("n1", "n2"));
        boolean[] lost = {false};
        h.drop = m -> m.hasAppendEntries() && Transcript.from(m).equals("n3") && !Transcript.to(m).equals("n2");
        h.elect("n3");
        assertThat(h.status("n3").commitIndex()).isEqualTo(2);
        h.isolated.remove("n2");
        h.propose("n3", "e");
        // A heartbeat at (1,4) proves n2's match 4; the append [(2,5),(2,6)] that follows is lost; the next
        // heartbeat, at (2,6), finds n2 short (hint 6); the probe at (2,5) conflicts with n2's (1,5), whose
        // term runs back to n2's commit + 1 = 3: hint 3, below the match.
        h.drop = m -> {
            if (!m.hasAppendEntries() || !Transcript.from(m).equals("n3")) {
                return false;
            }
            if (!Transcript.to(m).equals("n2")) {
                return true;
            }
            if (!lost[0] && m.getAppendEntries().getEntriesCount() > 0) {
                lost[0] = true;
                return true;
            }
            return false;
        };
        for (int i = 0; i < 20; i++) {
            h.tick("n3", 1); // n4 and n5 do not tick: unheard, they would campaign
            h.deliver();
        }
        assertThat(lost[0]).isTrue();
        assertThat(h.transcript).anyMatch(l -> l.startsWith("n2 > n3 AppendEntriesReply term=2 INCONSISTENCY")
                && l.contains("nextIndex=3"));
        assertThat(h.status("n3").role()).isEqualTo(RaftPeerRole.LEADER);
        assertThat(h.status("n2").lastIndex()).isEqualTo(h.status("n3").lastIndex());
        assertThat(h.node("n2").termAt(5)).as("n2's (1,5) replaced by the leader's no-op").isEqualTo(2);
        assertThat(h.node("n2").termAt(6)).isEqualTo(2);
        // n3 and n2 are a quorum of two of five only with one more: n3 still commits nothing of its term,
        // but n2 holds its whole log.
        var n2 = h.status("n3").peers().stream().filter(p -> p.id().equals("n2")).findFirst().orElseThrow();
        assertThat(n2.matchIndex()).isEqualTo(h.status("n3").lastIndex());
    }

    @Test
    void theLeaderCountsWhatItSends() {
        Harness h = threeVotersTwoListeners();
        h.elect("n1");
        h.propose("n1", "payload");
        h.run(1);
        RaftCounters c = h.node("n1").counters();
        assertThat(c.entryBytesSentByPeer()).containsOnlyKeys("n2", "n3", "l1", "l2");
        assertThat(c.entryBytesSent()).isPositive();
        assertThat(c.heartbeatsSent()).isPositive();
        assertThat(c.messagesSent(RaftMessageProto.BodyCase.APPENDENTRIES)).isGreaterThan(c.heartbeatsSent());
    }

    /**
     * Issue 23 (10): a proposal larger than the transport's largest message was accepted, could never be sent,
     * and nothing committed behind it. Across the boundary, every proposal is either refused naming its size
     * and the limit, or sent in appends that fit and committed; the boundary is within 200 bytes of the
     * limit (the estimate takes every field of an append at its largest).
     */
    @Test
    void aProposalThatCouldNeverBeSentIsRefusedNamingItsSizeAndTheLimit() {
        int limit = 4096;
        Harness h = Harness.group(Harness.configuration(List.of("n1", "n2", "n3"), List.of("l1")),
                c -> c.withMaxMessageBytes(limit));
        h.elect("n1");
        int largestAccepted = 0;
        int refused = 0;
        for (int size = limit - 300; size <= limit + 10; size += 7) {
            long last = h.status("n1").lastIndex();
            Proposal p = h.node("n1").propose(ByteString.copyFrom(new byte[size]));
            if (p instanceof Proposal.TooLarge t) {
                refused++;
                assertThat(t.reason()).contains(size + " bytes").contains(limit + " bytes");
                assertThat(t.commandBytes()).isEqualTo(size);
                assertThat(t.messageBytes()).isGreaterThan(limit);
                assertThat(h.status("n1").lastIndex()).as("nothing appended").isEqualTo(last);
                continue;
            }
            assertThat(p).as("size " + size).isInstanceOf(Proposal.Accepted.class);
            largestAccepted = size;
            h.drive("n1");
            h.run(3);
            assertThat(h.status("l1").commitIndex()).as("committed and applied everywhere").isEqualTo(last + 1);
        }
        assertThat(h.sent).allSatisfy(m -> assertThat(m.getSerializedSize()).isLessThanOrEqualTo(limit));
        assertThat(refused).isPositive();
        assertThat(largestAccepted).isGreaterThan(limit - 200);
        h.run(3);
        assertThat(h.appliedData("l1")).hasSize((largestAccepted - (limit - 300)) / 7 + 1);
    }
}
