package io.verbatim.metadatalog.raft;

import com.google.protobuf.ByteString;
import io.verbatim.metadatalog.proto.AppendEntriesReplyProto;
import io.verbatim.metadatalog.proto.AppendEntriesRequestProto;
import io.verbatim.metadatalog.proto.AppendResult;
import io.verbatim.metadatalog.proto.HardStateProto;
import io.verbatim.metadatalog.proto.InstallSnapshotReplyProto;
import io.verbatim.metadatalog.proto.InstallSnapshotRequestProto;
import io.verbatim.metadatalog.proto.InstallSnapshotResult;
import io.verbatim.metadatalog.proto.LogEntryProto;
import io.verbatim.metadatalog.proto.RaftConfigurationProto;
import io.verbatim.metadatalog.proto.RaftMessageProto;
import io.verbatim.metadatalog.proto.RaftPeerRole;
import io.verbatim.metadatalog.proto.RaftRpcRequestProto;
import io.verbatim.metadatalog.proto.ReadIndexReplyProto;
import io.verbatim.metadatalog.proto.ReadIndexRequestProto;
import io.verbatim.metadatalog.proto.RequestVoteReplyProto;
import io.verbatim.metadatalog.proto.RequestVoteRequestProto;
import io.verbatim.metadatalog.proto.SnapshotMetaProto;
import io.verbatim.metadatalog.proto.StartLeaderElectionRequestProto;
import io.verbatim.metadatalog.proto.StateMachineLogEntryProto;
import io.verbatim.metadatalog.proto.TermIndexProto;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;
import java.util.random.RandomGenerator;
import org.jspecify.annotations.Nullable;

/**
 * One member of a Raft group as a pure state machine, shaped like etcd raft's {@code RawNode}: no thread,
 * no I/O, no clock; randomness only from the generator passed in. A driver owns the thread, the disk
 * (its {@code RaftStorage}) and the transport, and loops:
 * <pre>{@code
 * on a timer:            node.tick();
 * on a message:          node.step(message);
 * on a client request:   node.propose(data) / node.readIndex(id) / node.setConfiguration(next) ...
 * then, while (node.hasReady()) { Ready r = node.ready(); ...persist, sync, send, apply...; node.advance(r); }
 * }</pre>
 * See {@link Ready} for the exact order the driver must follow. Not thread-safe: one thread at a time.
 *
 * <p>Members are voters or listeners ({@code RaftConfigurationProto.peers} / {@code .listeners}). Only
 * voters vote, campaign, count toward a commit, check-quorum or read-index confirmation; listeners receive
 * the log as followers do. The package documentation gives the rules and why.
 *
 * <p>This class is the core: the roles, {@link #step} and a step function per role (as etcd's
 * {@code stepLeader}, {@code stepCandidate}, {@code stepFollower}), elections, a follower's side of an
 * append, membership changes, the commit rule and the Ready handshake. Beside it, package-private and
 * each one member's: {@link Replication} (appends and heartbeats per member's {@link Progress}, and the
 * leader's handling of the replies), {@link Delegation} (listener delegation), {@link SnapshotTransfer}
 * (snapshots sent in chunks and received) and {@link ReadIndex} (the leader's linearizable reads).
 */
public final class RaftNode {
    private final RaftConfig config;
    private final String id;
    private final RandomGenerator random;
    private final RaftLog log;
    private final RaftCounters counters = new RaftCounters();

    private long term;
    private String votedFor;
    private String leader = "";
    private RaftPeerRole role;
    private boolean preCandidate;
    private Membership membership;
    private final TreeMap<String, Boolean> votes = new TreeMap<>();
    private final TreeMap<String, Progress> progress = new TreeMap<>();
    private String transferTarget = "";
    /** As leader, the index of its no-op, the first entry of its term. */
    private long termFirstIndex;

    private int electionElapsed;
    private int heartbeatElapsed;
    private int randomizedElectionTimeout;
    private long ticks;
    private long callIds;

    private final List<RaftMessageProto> outbox = new ArrayList<>();
    private final List<Ready.ReadState> readStates = new ArrayList<>();
    private Ready.@Nullable Snapshot snapshotToInstall;
    private HardStateProto handedHardState;
    private Ready.SoftState handedSoftState;
    private long handedApplied;
    private @Nullable Ready outstanding;

    /** Appends, heartbeats and the replies to them, per member's progress. */
    private final Replication replication;
    /** Listener delegation: as leader, who feeds each listener; as a delegate, the listeners it feeds. */
    private final Delegation delegation;
    /** Snapshots: the latest this member holds, sent in chunks; those it receives. */
    private final SnapshotTransfer snapshots;
    /** As leader, the linearizable reads in flight. */
    private final ReadIndex reads;

    private RaftNode(RaftConfig config, RecoveredState recovered, Optional<ByteString> snapshotData,
            RaftConfigurationProto initialConfiguration, RandomGenerator random) {
        this.config = config;
        this.id = config.memberId();
        this.random = random;
        Optional<String> badDelegation = Membership.delegationRefusal(initialConfiguration,
                config.maxListenersPerFollower());
        if (badDelegation.isPresent()) {
            throw new IllegalArgumentException("the initial configuration's delegations: " + badDelegation.get());
        }
        SnapshotMetaProto meta = recovered.snapshot().orElse(SnapshotMetaProto.newBuilder()
                .setLastIncluded(TermIndexProto.getDefaultInstance()).setConfiguration(initialConfiguration).build());
        if (recovered.snapshot().isPresent() && snapshotData.isEmpty()) {
            throw new IllegalArgumentException("a recovered snapshot at " + meta.getLastIncluded().getIndex()
                    + " needs its data (storage.snapshotData())");
        }
        HardStateProto hs = recovered.hardState();
        this.log = new RaftLog(meta.getLastIncluded().getIndex(), meta.getLastIncluded().getTerm(),
                meta.getConfiguration(), recovered.entries(), hs.getCommitIndex());
        this.replication = new Replication(this, config, log, counters, progress);
        this.delegation = new Delegation(this, config, log, counters, progress);
        this.reads = new ReadIndex(this, id, log, progress, readStates);
        this.snapshots = new SnapshotTransfer(this, config, log, counters, meta, snapshotData.orElse(ByteString.EMPTY));
        this.term = hs.getCurrentTerm();
        this.votedFor = hs.getVotedFor();
        this.handedHardState = hs;
        this.handedApplied = log.applied();
        this.membership = Membership.of(log.latestConfiguration());
        this.role = membership.isListener(id) ? RaftPeerRole.LISTENER : RaftPeerRole.FOLLOWER;
        this.handedSoftState = new Ready.SoftState(role, term, leader);
        resetRandomizedElectionTimeout();
    }

    /**
     * Starts a member from what its storage recovered.
     *
     * <p>Bootstrap: the group's first configuration is the configuration at index 0, as if a snapshot at
     * (term 0, index 0) held it; every founding member passes the same {@code initialConfiguration}, and
     * no entry or write is needed for it. It is used only when {@code recovered} has no snapshot; the
     * latest configuration entry in the log overrides it. A member that joins a running group passes
     * {@code RaftConfigurationProto.getDefaultInstance()} (no members): it never campaigns, and it learns the
     * configuration from the leader (in the entry that adds it, or in a snapshot).
     *
     * @param config how this member runs
     * @param recovered what its storage recovered ({@code RaftStorage.Recovered.empty()} for a new member)
     * @param snapshotData the recovered snapshot's data ({@code storage.snapshotData()}), required when
     *     {@code recovered} has a snapshot, so this member can send it if it leads
     * @param initialConfiguration the group's first configuration (founders) or an empty one (joiners)
     * @param random the only source of randomness (election timeouts); seed it for determinism
     */
    public static RaftNode start(RaftConfig config, RecoveredState recovered, Optional<ByteString> snapshotData,
            RaftConfigurationProto initialConfiguration, RandomGenerator random) {
        return new RaftNode(config, recovered, snapshotData, initialConfiguration, random);
    }

    // ---------------------------------------------------------------------------------------------
    // Inputs

    /** Advances logical time by one tick: elections on followers, heartbeats and check-quorum on a leader. */
    public void tick() {
        ticks++;
        if (role == RaftPeerRole.LEADER) {
            tickLeader();
            return;
        }
        electionElapsed++;
        delegation.tickAppenders();
        if (promotable() && electionElapsed >= randomizedElectionTimeout) {
            electionElapsed = 0;
            campaign(config.preVote(), false);
        }
    }

    private void tickLeader() {
        heartbeatElapsed++;
        electionElapsed++;
        if (electionElapsed >= config.electionTicks()) {
            electionElapsed = 0;
            if (config.checkQuorum()) {
                if (!quorumActive()) {
                    becomeFollower(term, "");
                    return;
                }
                progress.values().forEach(p -> p.recentActive = false);
            }
            transferTarget = "";
        }
        if (heartbeatElapsed >= config.heartbeatTicks()) {
            heartbeatElapsed = 0;
            progress.values().forEach(replication::heartbeat);
        }
        delegation.checkDelegations();
    }

    /**
     * Takes one message from another member. Messages for another group or from this member are dropped;
     * anything else is handled by the rules of its term and this member's role: as etcd raft's
     * {@code Step}, this method does the term checks and what every role handles alike (reads, a
     * delegate's message to a member that takes none, a vote request), then hands the message to
     * {@link #stepLeader}, {@link #stepCandidate} or {@link #stepFollower}.
     */
    public void step(RaftMessageProto m) {
        String from = Messages.from(m);
        if (!Messages.group(m).equals(config.groupId()) || from.isEmpty() || from.equals(id)) {
            return;
        }
        switch (m.getBodyCase()) {
            case READINDEX -> {
                reads.onRequest(m.getReadIndex());
                return;
            }
            case READINDEXREPLY -> {
                ReadIndexReplyProto r = m.getReadIndexReply();
                if (r.getServerReply().getSuccess()) {
                    readStates.add(new Ready.ReadState(r.getRequestId(), r.getReadIndex()));
                }
                return;
            }
            default -> {
            }
        }
        if (Delegation.fromDelegate(m) && !delegation.takesDelegates()) {
            delegation.refuseDelegated(m);
            return;
        }
        long mTerm = Messages.term(m);
        if (mTerm > term) {
            if (m.hasRequestVote() && !m.getRequestVote().getLeadershipTransfer() && inLease()) {
                // Stickiness: a live leader was heard within the election timeout; this campaign is a
                // partitioned or removed member's, and obeying its term would depose a working leader.
                replyVote(m.getRequestVote(), false);
                return;
            }
            boolean preVoteAsk = m.hasRequestVote() && m.getRequestVote().getPreVote();
            boolean preVoteGranted = m.hasRequestVoteReply() && m.getRequestVoteReply().getPreVote()
                    && m.getRequestVoteReply().getServerReply().getSuccess();
            if (!preVoteAsk && !preVoteGranted) {
                boolean fromLeader = m.hasAppendEntries() || m.hasInstallSnapshot() || m.hasStartLeaderElection();
                int elapsed = electionElapsed;
                becomeFollower(mTerm, fromLeader ? leaderOf(m) : "");
                if (m.hasRequestVote()) {
                    // Only a vote granted restarts the election timer (Raft §5.2): a candidate with a stale
                    // log that keeps campaigning must not keep the up-to-date voters from campaigning.
                    electionElapsed = elapsed;
                }
            }
        } else if (mTerm < term) {
            onStaleTerm(m);
            return;
        }
        if (m.hasRequestVote()) {
            onRequestVote(m.getRequestVote());
            return;
        }
        switch (role) {
            case LEADER -> stepLeader(from, m);
            case CANDIDATE -> stepCandidate(from, m);
            default -> stepFollower(from, m); // a follower or a listener
        }
    }

    /**
     * A leader's step in its own term: the replies of the members it replicates to. Another leader's append
     * or snapshot in this term cannot happen (two leaders in one term), and is never obeyed; vote replies
     * and a call to campaign are not for a leader.
     */
    private void stepLeader(String from, RaftMessageProto m) {
        switch (m.getBodyCase()) {
            case APPENDENTRIESREPLY -> replication.onAppendEntriesReply(from, m.getAppendEntriesReply());
            case INSTALLSNAPSHOTREPLY -> snapshots.onReply(from, progress.get(from), m.getInstallSnapshotReply());
            default -> {
            }
        }
    }

    /**
     * A candidate's step in its own term: the votes; a leader's append or snapshot in this term means the
     * election is lost, so it follows that leader and takes the message as a follower would. It takes no
     * delegate's message ({@link #step} refused it).
     */
    private void stepCandidate(String from, RaftMessageProto m) {
        switch (m.getBodyCase()) {
            case REQUESTVOTEREPLY -> onRequestVoteReply(from, m.getRequestVoteReply());
            case APPENDENTRIES -> {
                becomeFollower(term, from);
                onAppendEntries(m.getAppendEntries());
            }
            case INSTALLSNAPSHOT -> {
                becomeFollower(term, from);
                onInstallSnapshot(m.getInstallSnapshot());
            }
            default -> {
            }
        }
    }

    /**
     * A follower's or listener's step in its own term: the leader's (or, for a member that takes them, a
     * delegate's) appends and snapshot chunks, the leader's call to campaign, and, as a delegate, the
     * replies of the listeners it feeds.
     */
    private void stepFollower(String from, RaftMessageProto m) {
        switch (m.getBodyCase()) {
            case APPENDENTRIES -> onAppendEntries(m.getAppendEntries());
            case INSTALLSNAPSHOT -> onInstallSnapshot(m.getInstallSnapshot());
            case APPENDENTRIESREPLY -> {
                Progress a = role == RaftPeerRole.FOLLOWER ? delegation.appender(from) : null;
                if (a != null) {
                    delegation.onDelegateReply(a, m.getAppendEntriesReply());
                }
            }
            case INSTALLSNAPSHOTREPLY -> snapshots.onReply(from,
                    role == RaftPeerRole.FOLLOWER ? delegation.appender(from) : null, m.getInstallSnapshotReply());
            case STARTLEADERELECTION -> onStartLeaderElection(from);
            default -> {
            }
        }
    }

    /**
     * Who leads the term of a leader's message: its sender, or for a delegate's message (fromFollower) the
     * leader it names — a listener never takes the delegate for its leader.
     */
    private static String leaderOf(RaftMessageProto m) {
        if (m.hasAppendEntries() && m.getAppendEntries().getFromFollower()) {
            return m.getAppendEntries().getLeaderId();
        }
        if (m.hasInstallSnapshot() && m.getInstallSnapshot().getFromFollower()) {
            return m.getInstallSnapshot().getLeaderId();
        }
        return Messages.from(m);
    }

    /** A message of an older term: tell a stale leader or pre-candidate the newer term; drop the rest. */
    private void onStaleTerm(RaftMessageProto m) {
        if (m.hasAppendEntries()) {
            AppendEntriesRequestProto a = m.getAppendEntries();
            send(RaftMessageProto.newBuilder().setAppendEntriesReply(AppendEntriesReplyProto.newBuilder()
                    .setServerReply(Messages.reply(a.getServerRequest(), false)).setTerm(term)
                    .setResult(AppendResult.NOT_LEADER).setNextIndex(log.lastIndex() + 1)
                    .setFollowerCommit(log.committed()).setReadContext(a.getReadContext())
                    .setIsHeartbeat(a.getEntriesCount() == 0)).build());
        } else if (m.hasInstallSnapshot()) {
            InstallSnapshotRequestProto s = m.getInstallSnapshot();
            send(RaftMessageProto.newBuilder().setInstallSnapshotReply(InstallSnapshotReplyProto.newBuilder()
                    .setServerReply(Messages.reply(s.getServerRequest(), false)).setTerm(term)
                    .setResult(InstallSnapshotResult.SNAPSHOT_NOT_LEADER)
                    .setSnapshotIndex(s.getSnapshot().getLastIncluded().getIndex())).build());
        } else if (m.hasRequestVote() && m.getRequestVote().getPreVote()) {
            replyVote(m.getRequestVote(), false);
        }
    }

    /**
     * Proposes {@code data} for the state machine. Only a leader accepts, and not during a leadership
     * transfer; a command too large for the transport to send in one append is refused
     * ({@link Proposal.TooLarge}). Accepted means appended, not committed: see {@link Proposal.Accepted}.
     */
    public Proposal propose(ByteString data) {
        if (role != RaftPeerRole.LEADER) {
            return notLeader();
        }
        if (!transferTarget.isEmpty()) {
            return new Proposal.Refused("leadership transfer to " + transferTarget + " in progress");
        }
        LogEntryProto entry = LogEntryProto.newBuilder().setTerm(term).setIndex(log.lastIndex() + 1)
                .setStateMachineLogEntry(StateMachineLogEntryProto.newBuilder().setLogData(data)).build();
        Optional<Proposal> tooLarge = tooLarge(entry, data.size(), membership);
        if (tooLarge.isPresent()) {
            return tooLarge.get();
        }
        return new Proposal.Accepted(term, appendOwn(entry));
    }

    /**
     * Refused if the largest append carrying {@code entry} alone (under {@code after}, the configuration in
     * force once it is appended) is above the transport's largest message: it could never be sent.
     */
    private Optional<Proposal> tooLarge(LogEntryProto entry, long commandBytes, Membership after) {
        if (config.maxMessageBytes() == RaftConfig.UNLIMITED_MESSAGE_BYTES) {
            return Optional.empty();
        }
        long bytes = AppendSize.of(entry, config.groupId(), after, id);
        return bytes > config.maxMessageBytes()
                ? Optional.of(new Proposal.TooLarge(commandBytes, bytes, config.maxMessageBytes())) : Optional.empty();
    }

    /**
     * Proposes the next configuration: its voters ({@code peers}) and listeners. Refused unless this
     * member leads, has committed an entry of its term, has no uncommitted configuration entry and no
     * transfer in progress, and {@code next} changes at most one voter (listeners freely; a listener
     * promoted to voter or a voter demoted to listener is one voter change), and, when the voters change,
     * every voter that stays has acknowledged the configuration in force. The configuration takes
     * effect on every member when appended, not when committed. A leader not among the new voters leads
     * until the entry commits, then steps down.
     */
    public Proposal setConfiguration(RaftConfigurationProto next) {
        if (role != RaftPeerRole.LEADER) {
            return notLeader();
        }
        if (!transferTarget.isEmpty()) {
            return new Proposal.Refused("leadership transfer to " + transferTarget + " in progress");
        }
        if (log.term(log.committed()) != term) {
            return new Proposal.Refused("leader " + id + " has not yet committed an entry of its term " + term);
        }
        if (log.latestConfigurationIndex() > log.committed()) {
            return new Proposal.Refused("the configuration at index " + log.latestConfigurationIndex()
                    + " is not yet committed (commit " + log.committed() + ")");
        }
        Optional<String> refusal = membership.refusal(next);
        if (refusal.isEmpty()) {
            refusal = Membership.delegationRefusal(next, config.maxListenersPerFollower());
        }
        if (refusal.isPresent()) {
            return new Proposal.Refused(refusal.get());
        }
        Membership after = Membership.of(next);
        if (!after.voters().equals(membership.voters())) {
            // A listener promoted by an entry it has not yet received still rejects every vote; were the
            // next change to make the quorum need it, the group could wedge. So every voter that stays must
            // hold the configuration in force before the voters change again — and this leader's first
            // entry: before it, that voter's log may end in an older term's configuration entry that no
            // leader keeps (one demoting it, say), and it would reject votes as a listener it no longer is.
            long needed = Math.max(log.latestConfigurationIndex(), termFirstIndex);
            for (String voter : membership.voters()) {
                Progress p = progress.get(voter);
                if (!voter.equals(id) && after.isVoter(voter) && (p == null || p.match < needed)) {
                    return new Proposal.Refused("voter " + voter + " has not acknowledged index " + needed
                            + " (the configuration in force at " + log.latestConfigurationIndex()
                            + ", this leader's first entry at " + termFirstIndex + "; matchIndex "
                            + (p == null ? 0 : p.match) + "); wait for it, or remove it first");
                }
            }
        }
        LogEntryProto entry = LogEntryProto.newBuilder().setTerm(term).setIndex(log.lastIndex() + 1)
                .setConfigurationEntry(next).build();
        Optional<Proposal> tooLarge = tooLarge(entry, next.getSerializedSize(), after);
        if (tooLarge.isPresent()) {
            return tooLarge.get();
        }
        return new Proposal.Accepted(term, appendOwn(entry));
    }

    /**
     * Asks for a linearizable read (etcd's ReadIndex). On the leader: once it has committed an entry of its
     * term, it records its commit index and confirms it still leads by a heartbeat round acknowledged by a
     * quorum of voters; then a {@link Ready.ReadState} with {@code requestId} and that index appears in a
     * later Ready. On a follower or listener the request is forwarded to the leader and its answer comes
     * back the same way. No answer comes if leadership is lost meanwhile: the caller times out and retries.
     *
     * @return false if no leader is known (nothing was sent)
     */
    public boolean readIndex(long requestId) {
        if (role == RaftPeerRole.LEADER) {
            reads.read(requestId, id);
            return true;
        }
        if (leader.isEmpty()) {
            return false;
        }
        send(RaftMessageProto.newBuilder().setReadIndex(ReadIndexRequestProto.newBuilder()
                .setServerRequest(request(leader)).setRequestId(requestId)).build());
        return true;
    }

    /**
     * Hands leadership to the voter {@code target} (Ratis' StartLeaderElection, etcd's TimeoutNow): the
     * leader stops accepting proposals, brings the target up to its last index, then tells it to campaign
     * at once. Abandoned if not done within an election timeout. Refused for a listener (it cannot lead)
     * or a non-member.
     */
    public Proposal transferLeadership(String target) {
        if (role != RaftPeerRole.LEADER) {
            return notLeader();
        }
        if (target.equals(id)) {
            return new Proposal.Refused(target + " already leads term " + term);
        }
        if (membership.isListener(target)) {
            return new Proposal.Refused(target + " is a listener; only a voter can lead");
        }
        if (!membership.isVoter(target)) {
            return new Proposal.Refused(target + " is not a member of the configuration");
        }
        transferTarget = target;
        electionElapsed = 0;
        Progress p = Objects.requireNonNull(progress.get(target), "a leader tracks every voter but itself");
        if (p.match == log.lastIndex()) {
            sendStartLeaderElection(target);
        } else {
            // What is in flight is not sent again: a heartbeat now, after any entries not yet sent, shows at
            // once whether the target lacks some (a lost append), and its reply brings the target up to date.
            replication.sendAppend(p, false);
            if (p.state != Progress.State.SNAPSHOT) {
                replication.heartbeat(p);
            }
        }
        return new Proposal.Accepted(term, log.lastIndex());
    }

    /**
     * The application has a snapshot of its state machine up to {@code index} (at most the applied
     * index): the log may drop the entries it covers but the last {@code config.logTailEntries()} of them
     * (members that far behind are still sent entries), and the core sends this snapshot, in chunks, to
     * members that need dropped entries. The driver stores it: {@code storage.saveSnapshot(meta, data)}
     * with the returned meta (the term at {@code index} and the configuration in force there).
     */
    public SnapshotMetaProto compact(long index, ByteString stateMachineSnapshot) {
        if (index > log.applied() || index < log.snapshotIndex()) {
            throw new IllegalArgumentException("compact index must be in [" + log.snapshotIndex() + ", applied "
                    + log.applied() + "], was " + index);
        }
        SnapshotMetaProto meta = SnapshotMetaProto.newBuilder()
                .setLastIncluded(TermIndexProto.newBuilder().setTerm(log.term(index)).setIndex(index))
                .setConfiguration(log.configurationAt(index)).build();
        log.compact(index, config.logTailEntries());
        snapshots.hold(meta, stateMachineSnapshot);
        return meta;
    }

    // ---------------------------------------------------------------------------------------------
    // Outputs

    /** Whether {@link #ready()} has anything (false while a Ready is handed out and not advanced). */
    public boolean hasReady() {
        if (outstanding != null) {
            return false;
        }
        return !hardState().equals(handedHardState) || log.hasUnstable() || snapshotToInstall != null
                || log.committed() > handedApplied || !outbox.isEmpty() || !readStates.isEmpty()
                || !softState().equals(handedSoftState);
    }

    /** What the driver must persist, send and apply now; see {@link Ready} for the order. */
    public Ready ready() {
        if (outstanding != null) {
            throw new IllegalStateException("advance the previous Ready first");
        }
        HardStateProto hs = hardState();
        Ready.SoftState ss = softState();
        Optional<Ready.Snapshot> snapshot = Optional.ofNullable(snapshotToInstall);
        long appliedBase = snapshot.map(s -> s.meta().getLastIncluded().getIndex()).orElse(handedApplied);
        Ready r = new Ready(
                hs.equals(handedHardState) ? Optional.empty() : Optional.of(hs),
                log.takeUnstable(),
                snapshot,
                log.committedAfter(appliedBase),
                List.copyOf(outbox),
                List.copyOf(readStates),
                ss.equals(handedSoftState) ? Optional.empty() : Optional.of(ss));
        handedHardState = hs;
        handedSoftState = ss;
        snapshotToInstall = null;
        outbox.clear();
        readStates.clear();
        handedApplied = r.committedEntries().isEmpty() ? appliedBase
                : r.committedEntries().get(r.committedEntries().size() - 1).getIndex();
        outstanding = r;
        return r;
    }

    /** The driver has persisted, sent and applied {@code ready}. */
    public void advance(Ready ready) {
        if (ready != outstanding) {
            throw new IllegalStateException("advance takes the Ready last handed out");
        }
        outstanding = null;
        log.appliedTo(handedApplied);
    }

    /** A snapshot of this member's state, for a status page. */
    public RaftStatus status() {
        List<RaftStatus.PeerStatus> peers = new ArrayList<>();
        for (Progress p : progress.values()) {
            peers.add(new RaftStatus.PeerStatus(p.id, membership.isVoter(p.id), p.match, p.next, p.state.name(),
                    p.inflight.size(), p.lastResponseTick, p.followerCommit));
        }
        List<RaftStatus.ListenerSource> sources = new ArrayList<>();
        if (role == RaftPeerRole.LEADER && config.delegationEnabled()) {
            for (String l : membership.listeners()) {
                Progress p = progress.get(l);
                if (p != null) {
                    sources.add(new RaftStatus.ListenerSource(l, membership.delegations().getOrDefault(l, ""),
                            p.delegatedTo.isEmpty() ? id : p.delegatedTo, p.revoked, p.revocationReason,
                            p.revokedTick, p.revocations, p.revocationsInARow,
                            delegation.cooldownTicks(p.revoked ? p.revocationsInARow : p.revocationsInARow + 1)));
                }
            }
        }
        return new RaftStatus(id, role, preCandidate, term, leader, log.committed(), log.applied(), log.firstIndex(),
                log.lastIndex(), membership.proto(), log.latestConfigurationIndex(), ticks, peers, sources,
                delegation.feeding());
    }

    /** What this member sent, by message type and by peer. */
    public RaftCounters counters() {
        return counters;
    }

    /** The term of the entry at {@code index}, or -1 if it is compacted or not in the log. */
    public long termAt(long index) {
        return log.term(index);
    }

    // ---------------------------------------------------------------------------------------------
    // Roles

    private boolean promotable() {
        return membership.isVoter(id);
    }

    private boolean inLease() {
        return config.checkQuorum() && !leader.isEmpty() && electionElapsed < config.electionTicks();
    }

    private void becomeFollower(long newTerm, String newLeader) {
        if (newTerm > term) {
            term = newTerm;
            votedFor = "";
        }
        role = membership.isListener(id) ? RaftPeerRole.LISTENER : RaftPeerRole.FOLLOWER;
        leader = newLeader;
        preCandidate = false;
        electionElapsed = 0;
        heartbeatElapsed = 0;
        progress.clear();
        delegation.dropAppenders();
        votes.clear();
        reads.clear();
        transferTarget = "";
        resetRandomizedElectionTimeout();
    }

    private void campaign(boolean pre, boolean transfer) {
        if (!promotable()) {
            return;
        }
        role = RaftPeerRole.CANDIDATE;
        preCandidate = pre;
        leader = "";
        electionElapsed = 0;
        resetRandomizedElectionTimeout();
        progress.clear();
        delegation.dropAppenders();
        reads.clear();
        votes.clear();
        if (!pre) {
            term++;
            votedFor = id;
        }
        votes.put(id, true);
        if (tally()) {
            return;
        }
        long campaignTerm = pre ? term + 1 : term;
        for (String voter : membership.voters()) {
            if (voter.equals(id)) {
                continue;
            }
            send(RaftMessageProto.newBuilder().setRequestVote(RequestVoteRequestProto.newBuilder()
                    .setServerRequest(request(voter)).setCandidateTerm(campaignTerm)
                    .setCandidateLastEntry(TermIndexProto.newBuilder().setTerm(log.lastTerm()).setIndex(log.lastIndex()))
                    .setPreVote(pre).setLeadershipTransfer(transfer)).build());
        }
    }

    /** Counts the votes; wins or loses the campaign if a quorum decided. Returns whether the round ended. */
    private boolean tally() {
        int granted = 0;
        int rejected = 0;
        for (var e : votes.entrySet()) {
            if (membership.isVoter(e.getKey())) {
                if (e.getValue()) {
                    granted++;
                } else {
                    rejected++;
                }
            }
        }
        if (granted >= membership.quorum()) {
            if (preCandidate) {
                campaign(false, false);
            } else {
                becomeLeader();
            }
            return true;
        }
        if (rejected > membership.voters().size() - membership.quorum()) {
            becomeFollower(term, "");
            return true;
        }
        return false;
    }

    private void becomeLeader() {
        role = RaftPeerRole.LEADER;
        leader = id;
        preCandidate = false;
        transferTarget = "";
        electionElapsed = 0;
        heartbeatElapsed = 0;
        votes.clear();
        reads.clear();
        progress.clear();
        delegation.dropAppenders();
        delegation.leaderStarted(ticks);
        for (String member : membership.members()) {
            if (!member.equals(id)) {
                progress.put(member, new Progress(member, log.lastIndex() + 1));
            }
        }
        // A new leader starts from the admin's assignment: nothing it revoked survives it.
        delegation.refreshDelegations(false);
        // The no-op: a leader may commit only entries of its own term (§5.4.2), so it appends one at once
        // to commit everything before it and to learn its commit index for reads.
        termFirstIndex = log.lastIndex() + 1;
        appendOwn(LogEntryProto.newBuilder().setTerm(term).setIndex(log.lastIndex() + 1).build());
    }

    // ---------------------------------------------------------------------------------------------
    // Elections

    private void onRequestVote(RequestVoteRequestProto rv) {
        String candidate = rv.getServerRequest().getRequestorId();
        boolean grant;
        if (role == RaftPeerRole.LISTENER || membership.isListener(id)) {
            // A listener never votes, even when asked by a member whose configuration is stale (Ratis).
            grant = false;
        } else {
            boolean canVote = rv.getPreVote() ? rv.getCandidateTerm() > term
                    : votedFor.equals(candidate) || (votedFor.isEmpty() && leader.isEmpty());
            TermIndexProto last = rv.getCandidateLastEntry();
            grant = canVote && log.isUpToDate(last.getTerm(), last.getIndex());
        }
        if (grant && !rv.getPreVote()) {
            votedFor = candidate;
            electionElapsed = 0;
        }
        replyVote(rv, grant);
    }

    private void replyVote(RequestVoteRequestProto rv, boolean grant) {
        long replyTerm = grant && rv.getPreVote() ? rv.getCandidateTerm() : term;
        send(RaftMessageProto.newBuilder().setRequestVoteReply(RequestVoteReplyProto.newBuilder()
                .setServerReply(Messages.reply(rv.getServerRequest(), grant)).setTerm(replyTerm)
                .setPreVote(rv.getPreVote())).build());
    }

    private void onRequestVoteReply(String from, RequestVoteReplyProto r) {
        if (r.getPreVote() != preCandidate) {
            return;
        }
        boolean granted = r.getServerReply().getSuccess();
        if (granted && r.getTerm() != (preCandidate ? term + 1 : term)) {
            return;
        }
        votes.putIfAbsent(from, granted);
        tally();
    }

    private void onStartLeaderElection(String from) {
        if (role == RaftPeerRole.FOLLOWER && from.equals(leader) && promotable()) {
            campaign(false, true);
        }
    }

    // ---------------------------------------------------------------------------------------------
    // Followers and listeners

    private void onAppendEntries(AppendEntriesRequestProto a) {
        String from = a.getServerRequest().getRequestorId();
        if (a.getFromFollower()) {
            onDelegatedAppend(a);
            return;
        }
        if (!leader.equals(from)) {
            becomeFollower(term, from);
        }
        electionElapsed = 0;
        delegation.updateAssignment(a);
        acceptAppend(a);
        delegation.feedListeners();
    }

    /**
     * An append from a delegate follower (fromFollower), to a member that takes them ({@link #step} refused
     * it for any other, see {@link Delegation#takesDelegates}): it never takes its sender for its leader — the term's
     * leader is the one it names (a higher term was adopted with it as leader by {@link #step}; an older
     * term was refused there, NOT_LEADER to the sender). The consistency check and the commit cap are those
     * of any append; the reply goes to the sender.
     */
    private void onDelegatedAppend(AppendEntriesRequestProto a) {
        if (leader.isEmpty()) {
            leader = a.getLeaderId();
        }
        electionElapsed = 0;
        acceptAppend(a);
    }

    /** The follower's and listener's side of an append: consistency check, append, commit, reply. */
    private void acceptAppend(AppendEntriesRequestProto a) {
        long prevIndex = a.hasPreviousLog() ? a.getPreviousLog().getIndex() : 0;
        long prevTerm = a.hasPreviousLog() ? a.getPreviousLog().getTerm() : 0;
        List<LogEntryProto> entries = a.getEntriesList();
        AppendEntriesReplyProto.Builder reply = AppendEntriesReplyProto.newBuilder()
                .setServerReply(Messages.reply(a.getServerRequest(), false)).setTerm(term)
                .setIsHeartbeat(entries.isEmpty()).setReadContext(a.getReadContext());
        if (!wellFormed(a, prevIndex)) {
            return;
        }
        if (!entries.isEmpty() && entries.get(0).getIndex() <= log.committed()) {
            // Never rewrite what is committed: send the leader past it.
            replyAppend(reply.setResult(AppendResult.INCONSISTENCY).setNextIndex(log.committed() + 1));
            return;
        }
        boolean matched = log.matches(prevIndex, prevTerm)
                || (prevIndex < log.snapshotIndex() && prevIndex <= log.committed());
        if (!matched) {
            replyAppend(reply.setResult(AppendResult.INCONSISTENCY).setNextIndex(log.conflictHint(prevIndex)));
            return;
        }
        if (log.appendAfterMatch(entries)) {
            onMembershipChanged();
        }
        long lastNew = prevIndex + entries.size();
        log.commitTo(Math.min(a.getLeaderCommit(), lastNew));
        replyAppend(reply.setResult(AppendResult.SUCCESS).setMatchIndex(lastNew).setNextIndex(lastNew + 1)
                .setServerReply(Messages.reply(a.getServerRequest(), true)));
    }

    /** Entries contiguous after the previous one, none of a term beyond the leader's. */
    private static boolean wellFormed(AppendEntriesRequestProto a, long prevIndex) {
        long expect = prevIndex + 1;
        for (LogEntryProto e : a.getEntriesList()) {
            if (e.getIndex() != expect++ || e.getTerm() > a.getLeaderTerm()) {
                return false;
            }
        }
        return true;
    }

    /** Answers an append with this member's commit and whether it is a voter of its latest configuration. */
    void replyAppend(AppendEntriesReplyProto.Builder reply) {
        send(RaftMessageProto.newBuilder().setAppendEntriesReply(reply.setFollowerCommit(log.committed())
                .setVoter(membership.isVoter(id))).build());
    }

    private void onInstallSnapshot(InstallSnapshotRequestProto s) {
        String from = s.getServerRequest().getRequestorId();
        if (s.getFromFollower()) {
            if (leader.isEmpty()) { // as for a delegated append: this member takes delegates (step)
                leader = s.getLeaderId();
            }
        } else if (!leader.equals(from)) {
            becomeFollower(term, from);
        }
        electionElapsed = 0;
        if (snapshots.receive(from, s)) {
            delegation.feedListeners();
        }
    }

    /**
     * A snapshot received whole ({@code meta}'s entries are in the log's place now): the driver installs it
     * with the next Ready, and the configuration may have changed.
     */
    void restored(SnapshotMetaProto meta, ByteString data) {
        snapshotToInstall = new Ready.Snapshot(meta, data);
        handedApplied = Math.max(handedApplied, meta.getLastIncluded().getIndex());
        onMembershipChanged();
    }

    /** The latest configuration changed (appended, truncated, or from a snapshot): adjust role and peers. */
    private void onMembershipChanged() {
        membership = Membership.of(log.latestConfiguration());
        switch (role) {
            case LISTENER -> {
                if (!membership.isListener(id)) {
                    role = RaftPeerRole.FOLLOWER;
                }
            }
            case FOLLOWER -> {
                if (membership.isListener(id)) {
                    role = RaftPeerRole.LISTENER;
                    delegation.dropAppenders();
                }
            }
            case CANDIDATE -> {
                if (!membership.isVoter(id)) {
                    becomeFollower(term, "");
                }
            }
            case LEADER -> {
                progress.keySet().removeIf(p -> !membership.isVoter(p) && !membership.isListener(p));
                for (String member : membership.members()) {
                    if (!member.equals(id) && !progress.containsKey(member)) {
                        progress.put(member, new Progress(member, log.lastIndex() + 1));
                    }
                }
                if (!membership.isVoter(transferTarget)) {
                    transferTarget = "";
                }
                delegation.refreshDelegations(false);
            }
            default -> {
            }
        }
    }

    // ---------------------------------------------------------------------------------------------
    // Leader: appends and commit (the sending is Replication's)

    private long appendOwn(LogEntryProto e) {
        log.append(e);
        if (e.hasConfigurationEntry()) {
            onMembershipChanged();
        }
        for (Progress p : progress.values()) {
            replication.sendAppend(p, false);
        }
        maybeCommit();
        return e.getIndex();
    }

    /**
     * As leader, commits up to the index a quorum of voters holds if that entry is of this term, and tells
     * every member; a leader the committed configuration leaves out of the voters then steps down.
     */
    void maybeCommit() {
        if (role != RaftPeerRole.LEADER) {
            return;
        }
        List<Long> matches = new ArrayList<>();
        for (String voter : membership.voters()) {
            if (voter.equals(id)) {
                matches.add(log.lastIndex());
            } else {
                Progress p = progress.get(voter);
                matches.add(p == null ? 0 : p.match);
            }
        }
        matches.sort((a, b) -> Long.compare(b, a));
        long quorumIndex = matches.get(membership.quorum() - 1);
        // Only an entry of the current term is committed by counting replicas (§5.4.2); those before it
        // commit with it.
        if (quorumIndex <= log.committed() || log.term(quorumIndex) != term) {
            return;
        }
        log.commitTo(quorumIndex);
        reads.noOpCommitted();
        if (!membership.isVoter(id) && log.committed() >= log.latestConfigurationIndex()) {
            // Removed (or demoted) by a configuration that is now committed: tell the others, then step down.
            progress.values().forEach(p -> replication.sendAppend(p, true));
            becomeFollower(term, "");
            return;
        }
        progress.values().forEach(p -> replication.sendAppend(p, true));
    }

    private boolean quorumActive() {
        int active = 0;
        for (String voter : membership.voters()) {
            if (voter.equals(id)) {
                active++;
            } else {
                Progress p = progress.get(voter);
                if (p != null && p.recentActive) {
                    active++;
                }
            }
        }
        return active >= membership.quorum();
    }

    /** Tells {@code target} to campaign at once: the last step of a leadership transfer. */
    void sendStartLeaderElection(String target) {
        send(RaftMessageProto.newBuilder().setStartLeaderElection(StartLeaderElectionRequestProto.newBuilder()
                .setServerRequest(request(target)).setLeaderTerm(term)
                .setLeaderLastEntry(TermIndexProto.newBuilder().setTerm(log.lastTerm()).setIndex(log.lastIndex())))
                .build());
    }

    // ---------------------------------------------------------------------------------------------

    private HardStateProto hardState() {
        return HardStateProto.newBuilder().setCurrentTerm(term).setVotedFor(votedFor)
                .setCommitIndex(log.committed()).build();
    }

    private Ready.SoftState softState() {
        return new Ready.SoftState(role, term, leader);
    }

    private Proposal notLeader() {
        return new Proposal.NotLeader(leader.isEmpty() ? Optional.empty() : Optional.of(leader));
    }

    /** A request to {@code to}, under the next call id. */
    RaftRpcRequestProto request(String to) {
        return Messages.request(id, to, config.groupId(), ++callIds);
    }

    /** Counts {@code m} and queues it for the next Ready. */
    void send(RaftMessageProto m) {
        counters.sent(m);
        outbox.add(m);
    }

    // ---------------------------------------------------------------------------------------------
    // What the parts beside the core (Replication, Delegation, SnapshotTransfer, ReadIndex) read of it

    Replication replication() {
        return replication;
    }

    Delegation delegation() {
        return delegation;
    }

    SnapshotTransfer snapshots() {
        return snapshots;
    }

    ReadIndex reads() {
        return reads;
    }

    long term() {
        return term;
    }

    RaftPeerRole role() {
        return role;
    }

    String leader() {
        return leader;
    }

    /** As leader, the voter leadership is being handed to ("" for none). */
    String transferTarget() {
        return transferTarget;
    }

    Membership membership() {
        return membership;
    }

    long ticks() {
        return ticks;
    }

    /** The last call id used: a {@link Progress} entering a state records it (see {@link Progress#since}). */
    long lastCallId() {
        return callIds;
    }

    private void resetRandomizedElectionTimeout() {
        randomizedElectionTimeout = config.electionTicks() + random.nextInt(config.electionTicks());
    }
}
