package io.verbatim.metadatalog.raft;

import io.verbatim.metadatalog.proto.AppendEntriesReplyProto;
import io.verbatim.metadatalog.proto.AppendEntriesRequestProto;
import io.verbatim.metadatalog.proto.AppendResult;
import io.verbatim.metadatalog.proto.ListenerAssignmentProto;
import io.verbatim.metadatalog.proto.LogEntryProto;
import io.verbatim.metadatalog.proto.RaftMessageProto;
import io.verbatim.metadatalog.proto.RaftPeerRole;
import io.verbatim.metadatalog.proto.TermIndexProto;
import java.util.List;
import java.util.TreeMap;

/**
 * Log replication for one {@link RaftNode}, per member's {@link Progress} (etcd's probe / replicate /
 * snapshot states): what to send a member next within its window, heartbeats, and, as leader, a member's
 * replies to its appends (the progress rule, stale rejections, probes restarted at a hint). A delegate
 * follower sends through it too, over its appenders ({@link Delegation}), only what it knows committed.
 * The commit itself, from the voters' matches, is the node's.
 */
final class Replication {
    private final RaftNode node;
    private final RaftConfig config;
    private final String id;
    private final RaftLog log;
    private final RaftCounters counters;
    /** The node's progress of each other member, as leader (the node's own map, not a copy). */
    private final TreeMap<String, Progress> progress;

    Replication(RaftNode node, RaftConfig config, RaftLog log, RaftCounters counters,
            TreeMap<String, Progress> progress) {
        this.node = node;
        this.config = config;
        this.id = config.memberId();
        this.log = log;
        this.counters = counters;
        this.progress = progress;
    }

    /**
     * As leader, a member's reply to an append or heartbeat: its activity, its read-context acknowledgement,
     * the assignment it has read, then its progress (the progress rule; a delegated listener's from its
     * commit), and what it needs next.
     */
    void onAppendEntriesReply(String from, AppendEntriesReplyProto r) {
        Progress p = progress.get(from);
        if (p == null) {
            return;
        }
        p.recentActive = true;
        p.lastResponseTick = node.ticks();
        p.followerCommit = Math.max(p.followerCommit, r.getFollowerCommit());
        if ((r.getResult() == AppendResult.SUCCESS || r.getResult() == AppendResult.INCONSISTENCY)
                && p.assignmentSent != null && r.getServerReply().getCallId() >= p.assignmentFirstCallId) {
            p.assignmentAcked = true; // it answered an append that carried the current assignment
        }
        if (node.membership().isVoter(from) && r.getReadContext() > p.ackedReadContext) {
            p.ackedReadContext = r.getReadContext();
            node.reads().release();
        }
        long matchBefore = p.match;
        boolean delegated = !p.delegatedTo.isEmpty();
        if (delegated && r.getResult() != AppendResult.NOT_LEADER && r.getFollowerCommit() > p.match) {
            // A delegated listener's progress, from its own reply: its log up to its commit is committed,
            // and committed entries are the same in every leader's log of this term or later.
            p.match = Math.min(r.getFollowerCommit(), log.lastIndex());
            p.matchCallId = Math.max(p.matchCallId, r.getServerReply().getCallId());
            p.freeTo(p.match);
            p.next = Math.max(p.next, p.match + 1);
        }
        switch (r.getResult()) {
            case SUCCESS -> onAppendSuccess(p, r);
            case INCONSISTENCY -> {
                if (!delegated) { // a delegated listener is never probed by the leader
                    onAppendInconsistency(p, r.getNextIndex(), r.getServerReply().getCallId());
                }
            }
            default -> {
            }
        }
        if (p.match > matchBefore) {
            p.matchTick = node.ticks();
            node.delegation().onListenerMatchAdvanced(p);
        }
        if (node.membership().isListener(from) && r.getVoter() != p.ownVoter) {
            p.ownVoter = r.getVoter(); // it refuses delegates while it takes itself for a voter: fed directly
            node.delegation().refreshDelegations(true);
        }
        if (node.role() == RaftPeerRole.LEADER && progress.containsKey(from)) {
            sendAppend(p, false);
        }
    }

    /**
     * The progress rule: a SUCCESS reply in this term, heartbeat or not, proves that member's log held this
     * leader's log up to {@code matchIndex} = previousLog.index + entries when it answered: the previous
     * entry matched (log matching) and the entries were appended, and it answered only after syncing them.
     */
    private void onAppendSuccess(Progress p, AppendEntriesReplyProto r) {
        boolean advanced = r.getMatchIndex() > p.match;
        if (advanced) {
            p.match = r.getMatchIndex();
            p.matchCallId = r.getServerReply().getCallId();
            p.freeTo(p.match);
        }
        p.next = Math.max(p.next, p.match + 1);
        switch (p.state) {
            case PROBE -> p.becomeReplicate(node.lastCallId());
            case SNAPSHOT -> {
                if (p.match >= p.sendingSnapshot().getLastIncluded().getIndex()) {
                    p.becomeProbe(p.match + 1, node.lastCallId());
                }
            }
            case REPLICATE -> {
            }
        }
        if (advanced) {
            node.maybeCommit();
            if (node.role() != RaftPeerRole.LEADER) {
                return;
            }
        }
        if (p.id.equals(node.transferTarget()) && p.match == log.lastIndex()) {
            node.sendStartLeaderElection(p.id);
        }
    }

    /**
     * A rejection restarts the probe at its hint unless it is stale: it answers a request sent before the
     * member's current state began (a probe restarted or the window opened since; the requests sent since
     * bring their own answers — restarting again on such a reply would send again everything in flight),
     * or it hints at or below the known match and is older than the SUCCESS that proved that match. A newer
     * one hinting at or below the match means the member's log diverges right after its match (a suffix
     * of an older term whose run reaches below it): the probe restarts at match + 1.
     */
    void onAppendInconsistency(Progress p, long hint, long callId) {
        if (p.state == Progress.State.SNAPSHOT || callId <= p.since) {
            return;
        }
        if (hint <= p.match && callId < p.matchCallId) {
            return;
        }
        p.becomeProbe(Math.min(Math.max(hint, p.match + 1), sendLimit() + 1), node.lastCallId());
    }

    /**
     * The last index this member may send: a leader its whole log; a delegate follower only what it knows
     * committed — committed entries are the same in every leader's log, so a delegate with a stale suffix
     * of an older term, or one still following a deposed leader, never hands a listener anything else.
     */
    long sendLimit() {
        return node.role() == RaftPeerRole.LEADER ? log.lastIndex() : log.committed();
    }

    /** Sends what {@code p} needs next, within its window; with {@code sendIfEmpty}, at least the commit. */
    void sendAppend(Progress p, boolean sendIfEmpty) {
        if (!p.delegatedTo.isEmpty()) {
            return; // the leader only heartbeats a delegated listener
        }
        long limit = sendLimit();
        if (p.next - 1 > limit) {
            return; // a delegate: the listener holds all this member knows committed
        }
        if (node.role() != RaftPeerRole.LEADER && !p.awaitingReply()) {
            p.waitingSinceTick = node.ticks(); // the retry clock starts with this send, not at the last reply
        }
        switch (p.state) {
            case SNAPSHOT:
                return;
            case PROBE:
                if (p.probeSent) {
                    return;
                }
                break;
            case REPLICATE:
                if (p.inflight.size() >= config.maxInflightAppends()) {
                    return;
                }
                break;
        }
        long prevIndex = p.next - 1;
        long prevTerm = log.term(prevIndex);
        if (prevTerm < 0) {
            node.snapshots().start(p);
            return;
        }
        List<LogEntryProto> entries = log.slice(p.next, limit, config.maxEntriesBytesPerAppend());
        if (entries.isEmpty() && !sendIfEmpty && p.state == Progress.State.REPLICATE) {
            return;
        }
        sendAppendEntries(p, prevIndex, prevTerm, entries);
        if (p.state == Progress.State.PROBE) {
            p.probeSent = true;
        } else if (!entries.isEmpty()) {
            long last = entries.get(entries.size() - 1).getIndex();
            p.next = last + 1;
            p.inflight.addLast(last);
            if (p.inflight.size() < config.maxInflightAppends() && p.next <= limit) {
                sendAppend(p, false);
            }
        }
    }

    /**
     * A heartbeat: no entries, the commit (capped at previousLog.index) and the read context. Its
     * previousLog is the leader's view of that member's log end (nextIndex - 1): a SUCCESS reply proves
     * the member's log up to it (the progress rule), and an INCONSISTENCY reply reveals appends lost on
     * the way within one heartbeat (on a FIFO transport the heartbeat follows the appends it covers).
     * While probing, too, it carries no entries: the probe out is not sent again each heartbeat (on a
     * round trip longer than a heartbeat that sent each entry many times); the heartbeat's reply, like
     * the probe's, moves the member on (SUCCESS: replicate from its match; INCONSISTENCY: a new probe), so a
     * lost probe costs a round trip. Only with no probe out, or its previous entry compacted, does a
     * heartbeat send the append (or the snapshot) itself.
     */
    void heartbeat(Progress p) {
        if (!p.delegatedTo.isEmpty()) {
            // Delegated: no entries, previousLog at the listener's known match (its reply proves it again),
            // the commit capped there as always, so it applies nothing the delegate has not sent.
            long prevTerm = log.term(p.match);
            if (prevTerm >= 0) {
                sendAppendEntries(p, p.match, prevTerm, List.of());
            } else {
                sendAppendEntries(p, log.snapshotIndex(), log.snapshotTerm(), List.of());
            }
            return;
        }
        switch (p.state) {
            case SNAPSHOT -> node.snapshots().sendChunk(p);
            case PROBE -> {
                long prevTerm = log.term(p.next - 1);
                if (p.probeSent && prevTerm >= 0) {
                    sendAppendEntries(p, p.next - 1, prevTerm, List.of());
                } else {
                    p.probeSent = false;
                    sendAppend(p, true);
                }
            }
            case REPLICATE -> {
                long prevIndex = p.next - 1;
                long prevTerm = log.term(prevIndex);
                if (prevTerm < 0) {
                    prevIndex = log.snapshotIndex();
                    prevTerm = log.snapshotTerm();
                }
                sendAppendEntries(p, prevIndex, prevTerm, List.of());
            }
        }
    }

    void sendAppendEntries(Progress p, long prevIndex, long prevTerm, List<LogEntryProto> entries) {
        AppendEntriesRequestProto.Builder a = AppendEntriesRequestProto.newBuilder()
                .setServerRequest(node.request(p.id)).setLeaderTerm(node.term())
                .setLeaderCommit(Math.min(log.committed(), prevIndex + entries.size()))
                .addAllEntries(entries).setReadContext(node.reads().latestContext());
        if (prevIndex > 0 || prevTerm > 0) {
            a.setPreviousLog(TermIndexProto.newBuilder().setTerm(prevTerm).setIndex(prevIndex));
        }
        boolean delegate = node.role() != RaftPeerRole.LEADER;
        if (delegate) {
            a.setFromFollower(true).setLeaderId(node.leader());
        } else if (config.delegationEnabled() && node.membership().isVoter(p.id)) {
            // The assignment rides on every append to this follower from the first one after it changed (a
            // push included) until the follower answers one of them; then only on a heartbeat once an election
            // timeout, which repairs one an older message overtook and a follower restarted in this term. A
            // follower keeps this term's assignment it last read when an append carries none (updateAssignment).
            ListenerAssignmentProto assignment = node.delegation().assignmentFor(p.id);
            boolean changed = !assignment.equals(p.assignmentSent);
            if (changed || !p.assignmentAcked
                    || (entries.isEmpty() && node.ticks() - p.assignmentSentTick >= config.electionTicks())) {
                a.setListenerAssignment(assignment);
                if (changed) {
                    p.assignmentSent = assignment;
                    p.assignmentAcked = false;
                    p.assignmentFirstCallId = a.getServerRequest().getCallId();
                }
                p.assignmentSentTick = node.ticks();
            }
        }
        if (!entries.isEmpty()) {
            long bytes = 0;
            for (LogEntryProto e : entries) {
                bytes += e.getSerializedSize();
            }
            counters.entriesSent(p.id, entries.size(), bytes);
            if (delegate) {
                counters.delegatedEntriesSent(entries.size(), bytes);
            }
        }
        node.send(RaftMessageProto.newBuilder().setAppendEntries(a).build());
    }
}
