package io.verbatim.metadatalog.raft;

import io.verbatim.metadatalog.proto.AppendEntriesReplyProto;
import io.verbatim.metadatalog.proto.AppendEntriesRequestProto;
import io.verbatim.metadatalog.proto.AppendResult;
import io.verbatim.metadatalog.proto.InstallSnapshotReplyProto;
import io.verbatim.metadatalog.proto.InstallSnapshotRequestProto;
import io.verbatim.metadatalog.proto.InstallSnapshotResult;
import io.verbatim.metadatalog.proto.ListenerAssignmentProto;
import io.verbatim.metadatalog.proto.RaftMessageProto;
import io.verbatim.metadatalog.proto.RaftPeerProto;
import io.verbatim.metadatalog.proto.RaftPeerRole;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.jspecify.annotations.Nullable;

/**
 * Listener delegation (RATIS-2599) for one {@link RaftNode}, all three sides of it. As leader: which
 * follower feeds each listener now (the admin's assignment less what this leader revoked), the assignment
 * each follower is told, and the fallback that revokes a delegation and restores it after a cooldown. As a
 * delegate follower: an appender per listener the leader assigned it, over this member's own log,
 * sending committed entries only. As a receiver: which members take a delegate's messages, and the
 * refusal the others answer. The sending itself is {@link Replication}'s and {@link SnapshotTransfer}'s,
 * the leader's progress of each member the node's; this class decides who feeds whom. The rules and why
 * are in the package documentation.
 */
final class Delegation {
    /** At most this many doublings of the revocation cooldown (16 times as long). */
    private static final int MAX_COOLDOWN_DOUBLINGS = 4;

    private final RaftNode node;
    private final RaftConfig config;
    private final String id;
    private final RaftLog log;
    private final RaftCounters counters;
    /** The node's progress of each other member, as leader (the node's own map, not a copy). */
    private final TreeMap<String, Progress> progress;

    /** As leader, the tick at which it became leader. */
    private long leaderSinceTick;
    /** As leader with delegation on, ticks since revoked delegations were last reconsidered. */
    private int delegationElapsed;
    /**
     * As a delegate follower: an appender per listener the leader of this term assigned it (a Progress
     * over this member's own log, sending committed entries only); cleared on any change of term, leader
     * or role, and whenever the leader's assignment stops naming a listener.
     */
    private final TreeMap<String, Progress> appenders = new TreeMap<>();
    /**
     * As a follower, the term of the leader's assignment {@link #appenders} follow (0: none read since the
     * last change of term, leader or role): an append that carries no assignment keeps them only if it is
     * this term's.
     */
    private long assignmentTerm;

    Delegation(RaftNode node, RaftConfig config, RaftLog log, RaftCounters counters,
            TreeMap<String, Progress> progress) {
        this.node = node;
        this.config = config;
        this.id = config.memberId();
        this.log = log;
        this.counters = counters;
        this.progress = progress;
    }

    /** This member became leader at {@code tick}: the fallback's clocks start now. */
    void leaderStarted(long tick) {
        leaderSinceTick = tick;
        delegationElapsed = 0;
    }

    /**
     * A change of term, leader or role (or this member became a listener): it feeds no listener until a
     * leader of its term assigns it some.
     */
    void dropAppenders() {
        appenders.clear();
        assignmentTerm = 0;
    }

    /** As a delegate, the appender feeding {@code listener}; null if this member does not feed it. */
    @Nullable Progress appender(String listener) {
        return appenders.get(listener);
    }

    /** As a delegate: {@code listener} refused it (no longer a listener); stop feeding it. */
    void dropAppender(String listener) {
        appenders.remove(listener);
    }

    /** The listeners this member feeds as a delegate, for the status page. */
    List<String> feeding() {
        return List.copyOf(appenders.keySet());
    }

    /** Whether {@code m} is a delegate's append or snapshot chunk (fromFollower). */
    static boolean fromDelegate(RaftMessageProto m) {
        return (m.hasAppendEntries() && m.getAppendEntries().getFromFollower())
                || (m.hasInstallSnapshot() && m.getInstallSnapshot().getFromFollower());
    }

    /**
     * Whether this member takes a delegate's messages: only a member that is no voter of its own latest
     * configuration (a listener, or one added as a listener that has not yet received the entry adding it:
     * a joiner's configuration is empty), and never a leader or a candidate.
     */
    boolean takesDelegates() {
        return node.role() != RaftPeerRole.LEADER && node.role() != RaftPeerRole.CANDIDATE
                && !node.membership().isVoter(id);
    }

    /**
     * A delegate's message to a member that takes none: NOT_LEADER in this member's own term, whatever the
     * message's. A voter learns terms and leaders only from leaders and candidates: a delegate's newer term
     * adopted here, with the leader it names, would put this voter in a lease it never heard (refusing
     * votes) and have it answer its real leader with a term that deposes it. A reply in an older term
     * than the delegate's is dropped there; it resends after an election timeout, until the assignment
     * stops naming this member.
     */
    void refuseDelegated(RaftMessageProto m) {
        if (m.hasAppendEntries()) {
            AppendEntriesRequestProto a = m.getAppendEntries();
            node.replyAppend(AppendEntriesReplyProto.newBuilder()
                    .setServerReply(Messages.reply(a.getServerRequest(), false)).setTerm(node.term())
                    .setResult(AppendResult.NOT_LEADER).setNextIndex(log.lastIndex() + 1)
                    .setIsHeartbeat(a.getEntriesCount() == 0).setReadContext(a.getReadContext()));
        } else {
            InstallSnapshotRequestProto s = m.getInstallSnapshot();
            node.snapshots().reply(s, InstallSnapshotReplyProto.newBuilder().setTerm(node.term())
                    .setSnapshotIndex(s.getSnapshot().getLastIncluded().getIndex())
                    .setResult(InstallSnapshotResult.SNAPSHOT_NOT_LEADER));
        }
    }

    /** The follower the admin assigned {@code listener} to, if the leader may delegate it at all now. */
    private @Nullable String adminDelegate(String listener) {
        if (!config.delegationEnabled() || !node.membership().isListener(listener)) {
            return null;
        }
        String f = node.membership().delegations().get(listener);
        if (f == null || f.equals(id) || !node.membership().isVoter(f) || !progress.containsKey(f)) {
            return null;
        }
        return takesItselfForAVoter(listener) ? null : f;
    }

    /**
     * Whether {@code listener} may take itself for a voter, and so refuse its delegate, which could never
     * bring it what it lacks: it said so in its last reply (its log holds an older term's entry promoting
     * it, say, from a leader deposed before the promotion reached anyone else), or it is not known to hold
     * the entry that made it a listener after it was a voter (a demotion, or its removal and return as a
     * listener). The leader feeds it directly until neither holds, and delegates it from then on.
     */
    private boolean takesItselfForAVoter(String listener) {
        Progress p = progress.get(listener);
        return p != null && (p.ownVoter || p.match < log.becameListenerAt(listener));
    }

    /** A listener's match advanced: if it was fed directly only until it held what makes it one, delegate it now. */
    void onListenerMatchAdvanced(Progress p) {
        if (node.role() == RaftPeerRole.LEADER && config.delegationEnabled() && p.delegatedTo.isEmpty()
                && !p.revoked && node.membership().isListener(p.id)
                && node.membership().delegations().containsKey(p.id)) {
            refreshDelegations(true);
        }
    }

    /** What the leader tells {@code follower} to feed: the admin's assignment less what it revoked. */
    ListenerAssignmentProto assignmentFor(String follower) {
        ListenerAssignmentProto.Builder b = ListenerAssignmentProto.newBuilder().setLeaderTerm(node.term());
        for (RaftPeerProto l : node.membership().proto().getListenersList()) {
            Progress p = progress.get(l.getId());
            if (p != null && p.delegatedTo.equals(follower)) {
                b.addAssignedListeners(l);
            }
        }
        return b.build();
    }

    /**
     * Sets each listener's source from the admin's assignment and the revocations; a listener that stops
     * being delegated is replicated to directly at once (a probe from its match + 1), one that starts is
     * only heartbeated from now on. With {@code push}, each follower whose assignment changed is told at
     * once, in an append of its own ({@link #pushAssignment}); without, with its next append or heartbeat
     * (a new leader's no-op, or the configuration entry that changed the assignment, goes to it at once).
     */
    void refreshDelegations(boolean push) {
        if (node.role() != RaftPeerRole.LEADER) {
            return;
        }
        Set<String> told = new TreeSet<>();
        for (Progress p : progress.values()) {
            String assigned = node.membership().isListener(p.id)
                    ? node.membership().delegations().getOrDefault(p.id, "") : "";
            if (!assigned.equals(p.assignedFollower)) {
                // The admin's new assignment takes effect at once: what this leader revoked, and the backoff
                // of those revocations, belonged to the old one.
                p.assignedFollower = assigned;
                p.revoked = false;
                p.revocationReason = "";
                p.revocationsInARow = 0;
            }
            String f = adminDelegate(p.id);
            String source = f == null || p.revoked ? "" : f;
            if (source.equals(p.delegatedTo)) {
                continue;
            }
            boolean wasDelegated = !p.delegatedTo.isEmpty();
            if (wasDelegated) {
                told.add(p.delegatedTo);
            }
            if (!source.isEmpty()) {
                told.add(source);
            }
            p.delegatedTo = source;
            p.becomeProbe(p.match + 1, node.lastCallId());
            if (source.isEmpty()) {
                if (wasDelegated) {
                    node.replication().sendAppend(p, true);
                }
            } else {
                p.matchTick = node.ticks();
                p.delegatedSinceTick = node.ticks();
                p.delegatedAtLastIndex = log.lastIndex();
            }
        }
        if (push) {
            for (String f : told) {
                Progress d = progress.get(f);
                if (d != null && node.membership().isVoter(f)) {
                    pushAssignment(d);
                }
            }
        }
    }

    /**
     * Tells the follower {@code d} its assignment now: a heartbeat (which carries it), or, while it is
     * being sent a snapshot (whose chunks carry none), an empty append at its match, or at the snapshot's
     * index when its match is compacted away (as a REPLICATE heartbeat does): the follower reads the
     * assignment before the consistency check, and a rejection leaves the snapshot under way. A delegate
     * whose delegation was revoked stops feeding the listener within a round trip, not a heartbeat period
     * (or a whole snapshot) later.
     */
    private void pushAssignment(Progress d) {
        if (d.state != Progress.State.SNAPSHOT) {
            node.replication().heartbeat(d);
            return;
        }
        long prevTerm = log.term(d.match);
        if (prevTerm >= 0) {
            node.replication().sendAppendEntries(d, d.match, prevTerm, List.of());
        } else {
            node.replication().sendAppendEntries(d, log.snapshotIndex(), log.snapshotTerm(), List.of());
        }
    }

    /** The cooldown after the {@code nth} revocation in a row (1 is the first): doubled each time, capped. */
    long cooldownTicks(int nth) {
        return (long) config.revocationCooldownTicks() << Math.min(Math.max(nth - 1, 0), MAX_COOLDOWN_DOUBLINGS);
    }

    /** Why {@code delegate} cannot feed listeners now, or null if it can. */
    private @Nullable String unhealthy(Progress delegate) {
        if (node.ticks() - Math.max(delegate.lastResponseTick, leaderSinceTick) >= config.electionTicks()) {
            return "delegate " + delegate.id + " not heard for " + config.electionTicks() + " ticks";
        }
        // Lag against the commit, and only once the delegate answered in this term: a new leader knows no
        // match yet, and a burst of proposals within one round trip is not a delegate falling behind. The lag
        // must also last two heartbeat intervals: at thousands of commits a second, 100 entries are a few
        // milliseconds, and a delegate a moment behind (a pause, a full window) catches up by the next reply.
        if (delegate.laggingSinceTick >= 0 && node.ticks() - delegate.laggingSinceTick >= lagTicks()) {
            return "delegate " + delegate.id + " at " + delegate.match + " lags the leader's commit "
                    + log.committed() + " by more than " + config.followerLagThreshold() + " for " + lagTicks()
                    + " ticks";
        }
        return null;
    }

    /** How long a delegate's lag past the threshold lasts before it counts: two heartbeat intervals. */
    private int lagTicks() {
        return 2 * config.heartbeatTicks();
    }

    /** Once a tick: when each voter's lag past the threshold began (-1: it is within it). */
    private void trackLag() {
        for (Progress v : progress.values()) {
            boolean lagging = node.membership().isVoter(v.id) && v.lastResponseTick >= 0
                    && log.committed() - v.match > config.followerLagThreshold();
            if (!lagging) {
                v.laggingSinceTick = -1;
            } else if (v.laggingSinceTick < 0) {
                v.laggingSinceTick = node.ticks();
            }
        }
    }

    /**
     * Fallback (R-H6), each tick: revoke a delegation whose delegate is inactive or lags, or whose listener
     * has not advanced for reassignmentTicks while the commit is above it; every reassignmentTicks, restore
     * a revoked one whose cooldown is over if its delegate is healthy again. The listener notices nothing.
     */
    void checkDelegations() {
        if (!config.delegationEnabled() || node.role() != RaftPeerRole.LEADER) {
            return;
        }
        trackLag();
        boolean reconsider = ++delegationElapsed >= config.reassignmentTicks();
        if (reconsider) {
            delegationElapsed = 0;
        }
        boolean changed = false;
        for (Progress p : progress.values()) {
            String f = adminDelegate(p.id);
            if (f == null) {
                continue;
            }
            Progress d = Objects.requireNonNull(progress.get(f), "adminDelegate names a tracked voter");
            String why = unhealthy(d);
            if (log.committed() <= p.match) {
                p.matchTick = node.ticks(); // the stuck clock runs only while the commit is above the listener's match
            }
            if (!p.revoked) {
                if (why == null && log.committed() > p.match
                        && node.ticks() - p.matchTick >= config.reassignmentTicks()) {
                    why = "listener " + p.id + " stuck at " + p.match + " for " + config.reassignmentTicks()
                            + " ticks (commit " + log.committed() + ")";
                }
                if (why != null) {
                    p.revoked = true;
                    p.revokedTick = node.ticks();
                    p.revocationReason = why;
                    p.revocations++;
                    p.revocationsInARow++;
                    counters.revoked();
                    changed = true;
                } else if (p.revocationsInARow > 0 && !p.delegatedTo.isEmpty()
                        && node.ticks() - p.delegatedSinceTick >= 2L * config.reassignmentTicks()
                        && p.match > p.delegatedAtLastIndex) {
                    // In force for longer than the stuck rule takes to revoke a cut listener, and the delegate
                    // fed the listener meanwhile: healthy again. Time alone proves nothing, as the stuck clock
                    // stands still while there is nothing to send: a cut outlasting a quiet spell would look
                    // healthy.
                    p.revocationsInARow = 0;
                }
            } else if (reconsider && node.ticks() - p.revokedTick >= cooldownTicks(p.revocationsInARow) && why == null
                    && d.laggingSinceTick < 0) {
                // healthy means within the lag threshold now, not only behind for less time than a lag needs to
                // count: restored while behind, it would be revoked again and its backoff doubled
                p.revoked = false;
                p.revocationReason = "";
                counters.restored();
                changed = true;
            }
        }
        if (changed) {
            refreshDelegations(true);
        }
    }

    /**
     * A follower reads the leader's assignment on each of its appends: it feeds exactly the listeners
     * named for its current term, keeps the appenders of those it already fed, and drops the others. The
     * leader attaches it from a change until this follower answers an append that carried it, and then to a
     * heartbeat once an election timeout only: an append with none keeps the assignment read in this term (never
     * one of an earlier term or leader: a change of either clears it), or feeds none if none was read yet
     * (a follower restarted in this term waits for the next refresh). With
     * delegation off here it feeds none, whatever the leader assigns (a group switching delegation on
     * member by member): the leader's stuck rule revokes those listeners and feeds them itself.
     */
    void updateAssignment(AppendEntriesRequestProto a) {
        if (config.delegationEnabled() && node.role() == RaftPeerRole.FOLLOWER && !a.hasListenerAssignment()
                && assignmentTerm == node.term() && a.getLeaderTerm() == node.term()) {
            return; // unchanged since the last one this leader sent: keep it
        }
        if (!config.delegationEnabled() || node.role() != RaftPeerRole.FOLLOWER || !a.hasListenerAssignment()
                || a.getListenerAssignment().getLeaderTerm() != node.term()) {
            appenders.clear();
            assignmentTerm = 0;
            return;
        }
        assignmentTerm = node.term();
        Set<String> named = new TreeSet<>();
        a.getListenerAssignment().getAssignedListenersList().forEach(l -> named.add(l.getId()));
        named.remove(id);
        appenders.keySet().removeIf(l -> !named.contains(l));
        for (String l : named) {
            if (!appenders.containsKey(l)) {
                Progress p = new Progress(l, log.committed() + 1);
                p.since = node.lastCallId();
                p.lastResponseTick = node.ticks();
                p.waitingSinceTick = node.ticks();
                appenders.put(l, p);
            }
        }
    }

    /** As a delegate: send each listener what it needs of the committed log, within its window. */
    void feedListeners() {
        if (node.role() != RaftPeerRole.FOLLOWER) {
            return;
        }
        for (Progress p : appenders.values()) {
            node.replication().sendAppend(p, false);
        }
    }

    /**
     * As a delegate: an append or snapshot chunk unanswered for an election timeout is sent again (a probe
     * from match + 1, or the chunk).
     */
    void tickAppenders() {
        if (node.role() != RaftPeerRole.FOLLOWER || appenders.isEmpty()) {
            return;
        }
        // An election timeout: longer than any round trip a working link has (a shorter one resent what was
        // merely slow), and a listener cut off that long is the leader's to revoke meanwhile.
        int retry = config.electionTicks();
        for (Progress p : appenders.values()) {
            if (p.awaitingReply() && node.ticks() - p.waitingSinceTick >= retry) {
                p.waitingSinceTick = node.ticks();
                if (p.state == Progress.State.SNAPSHOT) {
                    node.snapshots().sendChunk(p);
                } else {
                    p.becomeProbe(p.match + 1, node.lastCallId());
                    node.replication().sendAppend(p, true);
                }
            }
        }
    }

    /**
     * A listener's reply to this delegate: the leader's probe/replicate rules over this member's committed
     * log, plus one: the listener's {@code followerCommit} is a prefix of the committed log, as is this
     * member's, so they agree up to the smaller one and nothing at or below the listener's commit is sent.
     * Either way the reply's call id is recorded with the match it proves, so the stale-hint filter of
     * {@link Replication#onAppendInconsistency} applies here as on the leader. NOT_LEADER (the listener is no longer a
     * listener) drops the appender.
     */
    void onDelegateReply(Progress p, AppendEntriesReplyProto r) {
        p.lastResponseTick = node.ticks();
        p.waitingSinceTick = node.ticks();
        long committed = log.committed();
        switch (r.getResult()) {
            case NOT_LEADER -> {
                appenders.remove(p.id);
                return;
            }
            case SUCCESS -> {
                if (r.getMatchIndex() > p.match) {
                    p.match = r.getMatchIndex();
                    p.matchCallId = r.getServerReply().getCallId();
                    p.freeTo(p.match);
                }
                if (p.state == Progress.State.PROBE) {
                    p.becomeReplicate(node.lastCallId());
                }
            }
            case INCONSISTENCY ->
                    node.replication().onAppendInconsistency(p, r.getNextIndex(), r.getServerReply().getCallId());
            default -> {
            }
        }
        long known = r.getFollowerCommit();
        if (p.state != Progress.State.SNAPSHOT && known > p.match) {
            long matched = Math.min(known, committed);
            if (matched > p.match) {
                // the reply proves the match as a SUCCESS would: older rejections hinting below it are stale
                p.match = matched;
                p.matchCallId = Math.max(p.matchCallId, r.getServerReply().getCallId());
            }
            p.freeTo(known);
            if (p.state == Progress.State.PROBE) {
                p.becomeReplicate(node.lastCallId());
            }
            p.next = Math.max(p.next, known + 1);
        }
        node.replication().sendAppend(p, false);
    }
}
