package io.verbatim.metadatalog.raft.sim;

import com.google.protobuf.ByteString;
import io.verbatim.metadatalog.proto.AppendResult;
import io.verbatim.metadatalog.proto.InstallSnapshotResult;
import io.verbatim.metadatalog.proto.ListenerDelegationProto;
import io.verbatim.metadatalog.proto.LogEntryProto;
import io.verbatim.metadatalog.proto.RaftConfigurationProto;
import io.verbatim.metadatalog.proto.RaftMessageProto;
import io.verbatim.metadatalog.proto.RaftPeerProto;
import io.verbatim.metadatalog.proto.RaftPeerRole;
import io.verbatim.metadatalog.proto.SnapshotMetaProto;
import io.verbatim.metadatalog.raft.Proposal;
import io.verbatim.metadatalog.raft.RaftConfig;
import io.verbatim.metadatalog.raft.RaftNode;
import io.verbatim.metadatalog.raft.RaftStatus;
import io.verbatim.metadatalog.raft.Ready;
import io.verbatim.metadatalog.raft.sim.Linearizability.Kind;
import io.verbatim.metadatalog.raft.sim.Linearizability.Op;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.stream.Collectors;
import java.util.zip.CRC32;

/**
 * One seeded run of a whole group in one thread, in virtual ticks: 3 to 5 voters, 0 to 4 listeners and
 * two spare members that may join; a network that loses, duplicates, delays and reorders messages, with
 * partitions both ways and one way; crashes that lose what was not synced (also between a Ready's writes
 * and its sync) and restarts; membership changes (listeners added, removed, promoted; voters added,
 * removed, demoted), leadership transfers, compactions and snapshot installs; clients running
 * compare-and-set, write and read (read index, also forwarded by followers and listeners) on a register.
 * After every step the Raft properties are checked; at the end the client history must be linearizable,
 * and once faults heal a leader must commit within a bounded number of ticks.
 *
 * <p>Listener delegation: half the seeds run with it on (drawn from a generator of their own, so the
 * other half run exactly as before), with random admin assignments in the bootstrap configuration and in
 * configuration changes (also changes of the assignment alone, and invalid ones that must be refused),
 * and faults aimed at it: a delegate crashed, a delegate cut from the leader but not from its listeners,
 * leadership moved while delegated, a listener isolated while its delegate compacts (a snapshot through
 * the delegate), a delegate's slow path to its listener (its messages arrive after the term moved on), and
 * one snapshot sent to a listener by its delegate and the leader at once. More properties: no member
 * applies an entry no leader committed; a listener's log up to its commit index is a prefix of the
 * committed log; a member refuses a delegated message below its term (NOT_LEADER in its own term, nothing
 * taken). Each member writes its snapshot in bytes of its own (the same state; see {@link #encodeValue}),
 * checked whole at every install, so chunks of two senders spliced into one snapshot fail.
 */
final class RaftSimulation {
    static final int ELECTION_TICKS = 10;
    static final int FAULT_TICKS = 220;
    static final int LIVENESS_TICKS = 150;
    static final int MAX_OPS = 36;
    static final int CLIENTS = 3;
    static final String GROUP = "g";

    private final long seed;
    private final SplittableRandom random;
    /** Delegation's draws, apart from the others: a seed with delegation off runs as it always did. */
    private final SplittableRandom drandom;
    /** The tail of entries a compaction keeps (RaftConfig.logTailEntries), the same for every member. */
    private final long logTail;
    private final boolean delegation;
    private final SimNetwork net;
    private final TreeMap<String, Member> members = new TreeMap<>();
    private final List<String> all = new ArrayList<>();
    private final RaftConfigurationProto initial;
    private final RaftConfig template;
    private long now;
    private long steps;
    /** Faults that finish a few ticks after they start, by tick. */
    private final TreeMap<Long, List<Runnable>> later = new TreeMap<>();
    /** Per receiver, the snapshot (term/index) and sender of the last chunk it was delivered. */
    private final Map<String, String[]> lastChunk = new HashMap<>();
    /** A delegated message below its receiver's term, being stepped: the receiver must refuse it. */
    private RaftMessageProto refusalDue;
    private long clock;
    private String step = "start";

    // checker state
    private final Map<Long, String> leaderOfTerm = new HashMap<>();
    private final Map<Long, LogEntryProto> committedLog = new HashMap<>();
    private final Map<Long, Integer> valueAt = new HashMap<>();
    private final Map<String, Long> termIndexPrev = new HashMap<>();
    private final Map<Long, Long> commitTerm = new HashMap<>();
    private final Map<Long, Long> commitEntryTerm = new HashMap<>();
    /** The term of each index as a leader committed it (recorded before anyone can learn of the commit). */
    private final Map<Long, Long> leaderCommitted = new HashMap<>();
    private long maxCommitted;

    // clients
    private final List<Op> history = new ArrayList<>();
    private final Client[] clients = new Client[CLIENTS];
    private int invoked;
    private int nextValue = 1;
    private long nextRequestId = 1;
    private boolean faults = true;
    private final Map<String, Integer> stats = new TreeMap<>();

    private static final class Member {
        final String id;
        final boolean founder;
        final SimStorage storage = new SimStorage();
        final RaftConfig config;
        RaftNode node;
        int value;
        long applied;
        long syncedCommit;
        long leaderTerm = -1;
        long leaderLastIndex;
        long leaderLastTerm;
        long leaderCheckedTo;
        long prefixCheckedTo;

        Member(String id, boolean founder, RaftConfig config) {
            this.id = id;
            this.founder = founder;
            this.config = config;
        }
    }

    private static final class Client {
        final int id;
        Kind kind;
        int arg;
        int expect;
        long invoke;
        String member;
        long term;
        long index;
        long requestId;
        long readIndex = -1;
        long deadline;
        boolean busy;

        Client(int id) {
            this.id = id;
        }
    }

    RaftSimulation(long seed) {
        this.seed = seed;
        this.random = new SplittableRandom(seed);
        this.drandom = new SplittableRandom(seed ^ 0xDE1E_6A7E_5EEDL);
        this.delegation = drandom.nextBoolean();
        // max listeners per follower, lag threshold, reassignment ticks, cooldown ticks
        int[] delegationKnobs = {1 + drandom.nextInt(3), 3 + drandom.nextInt(60), 5 + drandom.nextInt(30),
                drandom.nextInt(40)};
        this.net = new SimNetwork(random);
        int voters = 3 + random.nextInt(3);
        int listeners = random.nextInt(5);
        RaftConfigurationProto.Builder conf = RaftConfigurationProto.newBuilder();
        for (int i = 1; i <= voters + listeners + 2; i++) {
            String id = "n" + i;
            all.add(id);
            if (i <= voters) {
                conf.addPeers(peer(id));
            } else if (i <= voters + listeners) {
                conf.addListeners(peer(id));
            }
        }
        if (delegation) {
            addRandomDelegations(conf, conf.getPeersList().stream().map(RaftPeerProto::getId).toList(),
                    conf.getListenersList().stream().map(RaftPeerProto::getId).toList(), delegationKnobs[0]);
        }
        this.initial = conf.build();
        boolean quorumAndPreVote = random.nextInt(4) > 0;
        // drawn in the order a seed has always drawn them
        int heartbeatTicks = 1 + random.nextInt(2);
        long appendBytes = random.nextBoolean() ? 1 : 32 + random.nextInt(300);
        int inflight = 1 + random.nextInt(4);
        int chunkBytes = 8 + random.nextInt(40);
        this.template = RaftConfig.defaults("x", GROUP).withElectionTicks(ELECTION_TICKS)
                .withHeartbeatTicks(heartbeatTicks).withMaxEntriesBytesPerAppend(appendBytes)
                .withMaxInflightAppends(inflight).withCheckQuorum(quorumAndPreVote).withPreVote(quorumAndPreVote)
                .withSnapshotChunkBytes(chunkBytes);
        // The tail a compaction keeps, drawn apart so the rest of a seed's scenario is what it was: none (every
        // member behind a compaction needs the snapshot), a few entries (some do, some are sent entries from
        // the tail), or the default (hardly any snapshot is sent).
        SplittableRandom tailRandom = new SplittableRandom(seed ^ 0x7A11_7A11_7A11L);
        int tailDraw = tailRandom.nextInt(4);
        this.logTail = tailDraw == 0 ? 0 : tailDraw == 3 ? RaftConfig.DEFAULT_LOG_TAIL_ENTRIES : 1 + tailRandom.nextInt(8);
        for (int i = 0; i < all.size(); i++) {
            String id = all.get(i);
            RaftConfig c = RaftConfig.defaults(id, GROUP).withElectionTicks(template.electionTicks())
                    .withHeartbeatTicks(template.heartbeatTicks())
                    .withMaxEntriesBytesPerAppend(template.maxEntriesBytesPerAppend())
                    .withMaxInflightAppends(template.maxInflightAppends()).withCheckQuorum(template.checkQuorum())
                    .withPreVote(template.preVote()).withSnapshotChunkBytes(template.snapshotChunkBytes())
                    .withDelegationEnabled(delegation).withMaxListenersPerFollower(delegationKnobs[0])
                    .withFollowerLagThreshold(delegationKnobs[1]).withReassignmentTicks(delegationKnobs[2])
                    .withRevocationCooldownTicks(delegationKnobs[3]).withLogTailEntries(logTail);
            members.put(id, new Member(id, i < voters + listeners, c));
        }
        double[] losses = {0, 0.01, 0.05, 0.15};
        net.loss = losses[random.nextInt(losses.length)];
        net.duplicate = random.nextInt(3) * 0.03;
        net.maxDelay = random.nextInt(4);
        for (int c = 0; c < CLIENTS; c++) {
            clients[c] = new Client(c);
        }
    }

    private static RaftPeerProto peer(String id) {
        return RaftPeerProto.newBuilder().setId(id).setAddress(id + ":1").build();
    }

    /** Counts of what happened in this run (to see that the faults and features were exercised). */
    Map<String, Integer> stats() {
        stats.put("ops", history.size());
        stats.put("ops.unknown", (int) history.stream().filter(Op::unknown).count());
        stats.put("terms", leaderOfTerm.size());
        stats.put("committed", (int) maxCommitted);
        stats.put("delegation.seeds", delegation ? 1 : 0);
        for (Member m : members.values()) {
            if (m.node != null) {
                stats.merge("delegation.revocations", (int) m.node.counters().revocations(), Integer::sum);
                stats.merge("delegation.restorations", (int) m.node.counters().restorations(), Integer::sum);
            }
        }
        return stats;
    }

    private void count(String what) {
        stats.merge(what, 1, Integer::sum);
    }

    /** What this run is, for a failure message. */
    String describe() {
        return "seed " + seed + ": " + initial.getPeersCount() + " voters, " + initial.getListenersCount()
                + " listeners, heartbeat " + template.heartbeatTicks() + ", inflight " + template.maxInflightAppends()
                + ", append bytes " + template.maxEntriesBytesPerAppend() + ", chunk " + template.snapshotChunkBytes()
                + ", checkQuorum/preVote " + template.checkQuorum() + ", loss " + net.loss + ", dup " + net.duplicate
                + ", delay " + net.maxDelay + ", log tail " + logTail + (delegation ? ", delegation " + initial.getDelegationsList().stream()
                        .map(d -> d.getListener() + ">" + d.getFollower()).toList() + " lag " + members.firstEntry()
                        .getValue().config.followerLagThreshold() + " reassign " + members.firstEntry().getValue()
                        .config.reassignmentTicks() + " cooldown " + members.firstEntry().getValue().config
                        .revocationCooldownTicks() : "");
    }

    /** Assigns each listener, with probability 3/4, to a random voter that has room (at most {@code max}). */
    private void addRandomDelegations(RaftConfigurationProto.Builder conf, List<String> voters, List<String> listeners,
            int max) {
        Map<String, Integer> load = new TreeMap<>();
        for (String l : listeners) {
            if (voters.isEmpty() || drandom.nextInt(4) == 0) {
                continue;
            }
            String f = voters.get(drandom.nextInt(voters.size()));
            if (load.merge(f, 1, Integer::sum) <= max) {
                conf.addDelegations(ListenerDelegationProto.newBuilder().setListener(l).setFollower(f));
            }
        }
    }

    void run() {
        for (Member m : members.values()) {
            start(m);
        }
        for (now = 1; now <= FAULT_TICKS; now++) {
            injectFaults();
            List<Runnable> due = later.remove(now);
            if (due != null) {
                due.forEach(Runnable::run);
            }
            if (delegation) {
                injectDelegationFaults();
            }
            tickAll();
        }
        heal();
        boolean live = false;
        String liveMember = null;
        long liveTerm = 0;
        long liveIndex = 0;
        long healedAt = now;
        for (; now <= FAULT_TICKS + LIVENESS_TICKS; now++) {
            tickAll();
            if (liveMember != null && caughtUp(liveMember, liveTerm, liveIndex)) {
                live = true;
                break;
            }
            if (liveMember != null && members.get(liveMember).node.status().role() != RaftPeerRole.LEADER) {
                liveMember = null;
            }
            if (liveMember == null) {
                for (Member m : members.values()) {
                    if (m.node.status().role() == RaftPeerRole.LEADER) {
                        step = "liveness proposal at " + m.id;
                        if (m.node.propose(ByteString.copyFromUtf8("live")) instanceof Proposal.Accepted a) {
                            liveMember = m.id;
                            liveTerm = a.term();
                            liveIndex = a.index();
                            drive(m);
                        }
                        break;
                    }
                }
            }
        }
        if (!live) {
            throw violation("liveness: no leader committed a proposal applied by every member within "
                    + LIVENESS_TICKS + " ticks after healing at tick " + healedAt + "; " + statusLine());
        }
        finishClients();
        if (!Linearizability.check(history)) {
            throw violation("linearizability: the register's history is not linearizable:\n  "
                    + history.stream().map(Op::toString).collect(Collectors.joining("\n  ")));
        }
    }

    /** The proposal is applied with its term by the proposer and by every member of its configuration. */
    private boolean caughtUp(String proposer, long term, long index) {
        Member p = members.get(proposer);
        if (p.applied < index) {
            return false;
        }
        if (!committedLog.containsKey(index) || committedLog.get(index).getTerm() != term) {
            return false;
        }
        RaftConfigurationProto conf = p.node.status().configuration();
        List<RaftPeerProto> everyone = new ArrayList<>(conf.getPeersList());
        everyone.addAll(conf.getListenersList());
        for (RaftPeerProto peer : everyone) {
            if (members.get(peer.getId()).applied < index) {
                return false;
            }
        }
        return true;
    }

    private String statusLine() {
        StringBuilder sb = new StringBuilder();
        for (Member m : members.values()) {
            if (m.node == null) {
                sb.append(m.id).append(" down; ");
                continue;
            }
            RaftStatus s = m.node.status();
            sb.append(m.id).append(' ').append(s.role()).append(" t").append(s.term()).append(" c")
                    .append(s.commitIndex()).append(" a").append(s.appliedIndex()).append(" l").append(s.lastIndex()).append("/t").append(m.node.termAt(s.lastIndex()))
                    .append(" conf ").append(s.configuration().getPeersList().stream().map(RaftPeerProto::getId).toList())
                    .append('/').append(s.configuration().getListenersList().stream().map(RaftPeerProto::getId).toList());
            if (s.configuration().getDelegationsCount() > 0) {
                sb.append(" delegations ").append(s.configuration().getDelegationsList().stream()
                        .map(d -> d.getListener() + ">" + d.getFollower()).toList());
            }
            if (!s.feeding().isEmpty()) {
                sb.append(" feeding ").append(s.feeding());
            }
            for (RaftStatus.ListenerSource src : s.listenerSources()) {
                sb.append(" [").append(src.listener()).append(" from ").append(src.source())
                        .append(src.revoked() ? " revoked: " + src.revocationReason() : "")
                        .append(src.revocations() > 0 ? " revocations " + src.revocations() + " last at tick "
                                + src.revokedAtTick() : "").append(']');
            }
            if (s.role() == RaftPeerRole.LEADER) {
                sb.append(" tick ").append(s.ticks()).append(" match ").append(s.peers().stream().map(p -> p.id() + "=" + p.matchIndex() + "/" + p.state()
                        + "/" + p.lastResponseTick()).toList());
            }
            sb.append("; ");
        }
        return sb.toString();
    }

    // ---------------------------------------------------------------------------------------------
    // The loop

    private void tickAll() {
        clientsAct();
        for (Member m : members.values()) {
            if (m.node != null) {
                step = "tick " + m.id;
                m.node.tick();
                drive(m);
            }
        }
        List<SimNetwork.InFlight> due;
        int rounds = 0;
        while (!(due = net.due(now)).isEmpty() && rounds++ < 50) {
            for (SimNetwork.InFlight f : due) {
                Member m = members.get(f.to());
                if (m.node == null) {
                    continue;
                }
                step = "deliver " + f.message().getBodyCase() + " to " + f.to();
                noteChunk(f.to(), f.message());
                if (delegatedBelowTerm(m, f.message())) {
                    stepStaleDelegated(m, f.message());
                } else {
                    m.node.step(f.message());
                    drive(m);
                }
            }
        }
        expireClients();
    }

    /**
     * Counts snapshot chunks of one snapshot (term and last entry) a member is sent by two senders in turn:
     * what a receiver must never splice (their bytes differ, see {@link #encodeValue}).
     */
    private void noteChunk(String to, RaftMessageProto msg) {
        if (!msg.hasInstallSnapshot()) {
            return;
        }
        var c = msg.getInstallSnapshot();
        String snapshot = c.getLeaderTerm() + "/" + c.getSnapshot().getLastIncluded().getIndex();
        String sender = c.getServerRequest().getRequestorId();
        String[] last = lastChunk.put(to, new String[] {snapshot, sender});
        if (last != null && last[0].equals(snapshot) && !last[1].equals(sender)) {
            count("snapshot.chunksFromTwoSenders");
        }
    }

    /** A delegate's append or snapshot chunk (fromFollower) in an older term than {@code m}'s. */
    private static boolean delegatedBelowTerm(Member m, RaftMessageProto msg) {
        boolean delegated = msg.hasAppendEntries() ? msg.getAppendEntries().getFromFollower()
                : msg.hasInstallSnapshot() && msg.getInstallSnapshot().getFromFollower();
        long term = msg.hasAppendEntries() ? msg.getAppendEntries().getLeaderTerm()
                : msg.hasInstallSnapshot() ? msg.getInstallSnapshot().getLeaderTerm() : 0;
        return delegated && term < m.node.status().term();
    }

    /**
     * A member refuses a delegated message below its term, listener or not: it takes nothing from it (no
     * term, leader, role, entry or commit) and answers the sender NOT_LEADER in its own term.
     */
    private void stepStaleDelegated(Member m, RaftMessageProto msg) {
        count("delegated.belowTerm");
        RaftStatus before = m.node.status();
        long lastTerm = m.node.termAt(before.lastIndex());
        m.node.step(msg);
        RaftStatus after = m.node.status();
        if (after.term() != before.term() || !after.leader().equals(before.leader()) || after.role() != before.role()
                || after.lastIndex() != before.lastIndex() || m.node.termAt(after.lastIndex()) != lastTerm
                || after.commitIndex() != before.commitIndex()) {
            throw violation("a member refuses a delegated message below its term: " + m.id + " (" + before.role()
                    + " t" + before.term() + " l" + before.lastIndex() + " c" + before.commitIndex() + ") took "
                    + brief(msg) + " and is " + after.role() + " t" + after.term() + " l" + after.lastIndex() + " c"
                    + after.commitIndex() + " led by '" + after.leader() + "'");
        }
        refusalDue = msg;
        drive(m);
        if (refusalDue != null && m.node != null) {
            throw violation("a member refuses a delegated message below its term: " + m.id + " sent no NOT_LEADER for "
                    + brief(refusalDue));
        }
        refusalDue = null;
    }

    /** Whether {@code reply} from {@code m} answers {@link #refusalDue}: then it must refuse it, in m's term. */
    private void checkRefusal(Member m, RaftMessageProto reply) {
        RaftMessageProto due = refusalDue;
        if (due == null) {
            return;
        }
        var request = due.hasAppendEntries() ? due.getAppendEntries().getServerRequest()
                : due.getInstallSnapshot().getServerRequest();
        var header = reply.hasAppendEntriesReply() ? reply.getAppendEntriesReply().getServerReply()
                : reply.hasInstallSnapshotReply() ? reply.getInstallSnapshotReply().getServerReply() : null;
        if (header == null || !header.getRequestorId().equals(request.getRequestorId())
                || header.getCallId() != request.getCallId()) {
            return;
        }
        boolean refused = reply.hasAppendEntriesReply()
                ? reply.getAppendEntriesReply().getResult() == AppendResult.NOT_LEADER
                        && reply.getAppendEntriesReply().getTerm() == m.node.status().term()
                : reply.getInstallSnapshotReply().getResult()
                        == InstallSnapshotResult.SNAPSHOT_NOT_LEADER
                        && reply.getInstallSnapshotReply().getTerm() == m.node.status().term();
        if (!refused) {
            throw violation("a member refuses a delegated message below its term: " + m.id + " answered "
                    + brief(due) + " with " + reply);
        }
        refusalDue = null;
    }

    private static String brief(RaftMessageProto m) {
        if (m.hasAppendEntries()) {
            var a = m.getAppendEntries();
            return "a delegated append from " + a.getServerRequest().getRequestorId() + " of term " + a.getLeaderTerm()
                    + " (" + a.getEntriesCount() + " entries after " + a.getPreviousLog().getIndex() + ")";
        }
        var c = m.getInstallSnapshot();
        return "a delegated snapshot chunk from " + c.getServerRequest().getRequestorId() + " of term "
                + c.getLeaderTerm() + " at " + c.getSnapshot().getLastIncluded().getIndex();
    }

    /** The driver: persist, sync, send, apply, advance — with a crash possible between write and sync. */
    private void drive(Member m) {
        while (m.node != null && m.node.hasReady()) {
            Ready r = m.node.ready();
            if (r.snapshot().isPresent()) {
                installSnapshot(m, r.snapshot().get());
            }
            if (!r.entries().isEmpty()) {
                m.storage.append(r.entries());
                checkLogMatching(m, r.entries());
            }
            r.hardState().ifPresent(m.storage::saveHardState);
            // a leader's commit is a commit once a quorum holds the entry, synced here or not
            r.hardState().ifPresent(hs -> noteLeaderCommit(m, hs.getCommitIndex(), hs.getCurrentTerm()));
            if (r.mustSync() && faults && random.nextInt(400) == 0) {
                crash(m);
                return;
            }
            m.storage.sync();
            r.hardState().ifPresent(hs -> onSyncedCommit(m, hs.getCommitIndex(), hs.getCurrentTerm()));
            for (RaftMessageProto msg : r.messages()) {
                checkRefusal(m, msg);
                checkVote(m, msg);
                checkDelegated(m, msg);
                net.send(now, m.id, to(msg), msg);
            }
            for (LogEntryProto e : r.committedEntries()) {
                apply(m, e);
            }
            for (Ready.ReadState rs : r.readStates()) {
                onReadState(m, rs);
            }
            m.node.advance(r);
            steps++;
            checkMember(m);
        }
        if (m.node != null) {
            answerReads(m);
        }
    }

    private static String to(RaftMessageProto m) {
        return switch (m.getBodyCase()) {
            case APPENDENTRIES -> m.getAppendEntries().getServerRequest().getReplyId();
            case REQUESTVOTE -> m.getRequestVote().getServerRequest().getReplyId();
            case INSTALLSNAPSHOT -> m.getInstallSnapshot().getServerRequest().getReplyId();
            case STARTLEADERELECTION -> m.getStartLeaderElection().getServerRequest().getReplyId();
            case READINDEX -> m.getReadIndex().getServerRequest().getReplyId();
            case APPENDENTRIESREPLY -> m.getAppendEntriesReply().getServerReply().getRequestorId();
            case REQUESTVOTEREPLY -> m.getRequestVoteReply().getServerReply().getRequestorId();
            case INSTALLSNAPSHOTREPLY -> m.getInstallSnapshotReply().getServerReply().getRequestorId();
            case READINDEXREPLY -> m.getReadIndexReply().getServerReply().getRequestorId();
            case BODY_NOT_SET -> throw new IllegalStateException("a message with no body");
        };
    }

    private void start(Member m) {
        var recovered = m.storage.recover();
        m.node = RaftNode.start(m.config, recovered, m.storage.snapshotData(),
                m.founder ? initial : RaftConfigurationProto.getDefaultInstance(), new SplittableRandom(random.nextLong()));
        m.value = recovered.snapshot().isPresent() ? decodeValue(m.id, m.storage.snapshotData().get()) : 0;
        m.applied = recovered.snapshot().map(s -> s.getLastIncluded().getIndex()).orElse(0L);
        m.syncedCommit = recovered.hardState().getCommitIndex();
        m.leaderTerm = -1;
        m.prefixCheckedTo = 0;
    }

    private void crash(Member m) {
        count("crash");
        m.storage.crash(random);
        m.node = null;
        for (Client c : clients) {
            if (c.busy && c.member.equals(m.id)) {
                giveUp(c);
            }
        }
    }

    // ---------------------------------------------------------------------------------------------
    // Faults and operators

    private void injectFaults() {
        int roll = random.nextInt(1000);
        List<String> up = members.values().stream().filter(m -> m.node != null).map(m -> m.id).toList();
        List<String> down = members.values().stream().filter(m -> m.node == null).map(m -> m.id).toList();
        if (roll < 12 && down.size() < 2) {
            step = "crash";
            crash(members.get(up.get(random.nextInt(up.size()))));
        } else if (roll < 60 && !down.isEmpty()) {
            Member m = members.get(down.get(random.nextInt(down.size())));
            step = "restart " + m.id;
            start(m);
            drive(m);
        } else if (roll < 72) {
            partition();
        } else if (roll < 100) {
            step = "heal partitions";
            net.heal();
        } else if (roll < 125) {
            changeMembership();
        } else if (roll < 135) {
            transfer();
        } else if (roll < 175) {
            compact(members.get(all.get(random.nextInt(all.size()))));
        }
    }

    private void partition() {
        List<String> shuffled = new ArrayList<>(all);
        for (int i = shuffled.size() - 1; i > 0; i--) {
            int j = random.nextInt(i + 1);
            String t = shuffled.get(i);
            shuffled.set(i, shuffled.get(j));
            shuffled.set(j, t);
        }
        Optional<Member> leader = leader();
        switch (random.nextInt(4)) {
            case 3 -> {
                String target = leader.map(m -> m.id).orElse(shuffled.get(0));
                step = "isolate the leader " + target;
                net.isolate(target, all);
            }
            case 0 -> {
                step = "isolate " + shuffled.get(0);
                net.isolate(shuffled.get(0), all);
            }
            case 1 -> {
                List<String> side = shuffled.subList(0, 1 + random.nextInt(all.size() / 2));
                step = "split " + side;
                net.split(new ArrayList<>(side), all);
            }
            default -> {
                step = "cut one way " + shuffled.get(0) + ">" + shuffled.get(1);
                net.cutOneWay(shuffled.get(0), shuffled.get(1));
                if (random.nextBoolean()) {
                    net.cutOneWay(shuffled.get(0), shuffled.get(2));
                }
            }
        }
    }

    private Optional<Member> leader() {
        Member best = null;
        for (Member m : members.values()) {
            if (m.node != null && m.node.status().role() == RaftPeerRole.LEADER
                    && (best == null || m.node.status().term() > best.node.status().term())) {
                best = m;
            }
        }
        return Optional.ofNullable(best);
    }

    private void changeMembership() {
        Optional<Member> l = leader();
        if (l.isEmpty()) {
            return;
        }
        Member leader = l.get();
        RaftConfigurationProto cur = leader.node.status().configuration();
        List<String> voters = new ArrayList<>(cur.getPeersList().stream().map(RaftPeerProto::getId).toList());
        List<String> listeners = new ArrayList<>(cur.getListenersList().stream().map(RaftPeerProto::getId).toList());
        List<String> outside = all.stream().filter(id -> !voters.contains(id) && !listeners.contains(id)).toList();
        int kind = random.nextInt(8);
        boolean mustRefuse = false;
        switch (kind) {
            case 0 -> { // add a listener
                if (outside.isEmpty()) {
                    return;
                }
                listeners.add(outside.get(random.nextInt(outside.size())));
            }
            case 1 -> { // remove a listener
                if (listeners.isEmpty()) {
                    return;
                }
                listeners.remove(random.nextInt(listeners.size()));
            }
            case 2 -> { // promote a listener
                if (listeners.isEmpty() || voters.size() >= 5) {
                    return;
                }
                voters.add(listeners.remove(random.nextInt(listeners.size())));
            }
            case 3 -> { // demote a voter
                if (voters.size() <= 2) {
                    return;
                }
                listeners.add(voters.remove(random.nextInt(voters.size())));
            }
            case 4 -> { // remove a voter
                if (voters.size() <= 2) {
                    return;
                }
                voters.remove(random.nextInt(voters.size()));
            }
            case 5 -> { // add a voter directly
                if (outside.isEmpty() || voters.size() >= 5) {
                    return;
                }
                voters.add(outside.get(random.nextInt(outside.size())));
            }
            case 6 -> { // two voter changes at once: must be refused
                if (outside.size() < 2) {
                    return;
                }
                voters.add(outside.get(0));
                voters.add(outside.get(1));
                mustRefuse = true;
            }
            default -> { // listeners swapped wholesale, voters unchanged
                listeners.clear();
                for (String id : outside) {
                    if (random.nextBoolean()) {
                        listeners.add(id);
                    }
                }
            }
        }
        RaftConfigurationProto.Builder next = RaftConfigurationProto.newBuilder();
        voters.forEach(v -> next.addPeers(peer(v)));
        listeners.forEach(v -> next.addListeners(peer(v)));
        if (delegation) {
            addRandomDelegations(next, voters, listeners, leader.config.maxListenersPerFollower());
        }
        step = "setConfiguration at " + leader.id + " voters " + voters + " listeners " + listeners
                + " delegations " + next.getDelegationsList().stream().map(d -> d.getListener() + ">" + d.getFollower()).toList();
        Proposal p = leader.node.setConfiguration(next.build());
        count("conf." + p.getClass().getSimpleName());
        if (mustRefuse && !(p instanceof Proposal.Refused)) {
            throw violation("one voter change at a time: two voters added was not refused: " + p);
        }
        drive(leader);
    }

    /** The admin changes only the assignment (sometimes to an invalid one, which must be refused). */
    private void reassign() {
        Optional<Member> l = leader();
        if (l.isEmpty()) {
            return;
        }
        Member leader = l.get();
        RaftConfigurationProto cur = leader.node.status().configuration();
        List<String> voters = cur.getPeersList().stream().map(RaftPeerProto::getId).toList();
        List<String> listeners = cur.getListenersList().stream().map(RaftPeerProto::getId).toList();
        RaftConfigurationProto.Builder next = cur.toBuilder().clearDelegations();
        addRandomDelegations(next, voters, listeners, leader.config.maxListenersPerFollower());
        boolean invalid = drandom.nextInt(5) == 0 && !listeners.isEmpty();
        if (invalid) {
            String l1 = listeners.get(drandom.nextInt(listeners.size()));
            next.addDelegations(ListenerDelegationProto.newBuilder().setListener(l1)
                    .setFollower(drandom.nextBoolean() ? l1 : "nobody"));
        }
        step = "reassign at " + leader.id + " " + next.getDelegationsList().stream()
                .map(d -> d.getListener() + ">" + d.getFollower()).toList();
        Proposal p = leader.node.setConfiguration(next.build());
        count("reassign." + p.getClass().getSimpleName());
        if (invalid && !(p instanceof Proposal.Refused)) {
            throw violation("an invalid assignment was not refused: " + p);
        }
        drive(leader);
    }

    /** The delegates the newest leader's configuration names, up or not. */
    private List<String> delegates() {
        Optional<Member> l = leader();
        if (l.isEmpty()) {
            return List.of();
        }
        return l.get().node.status().configuration().getDelegationsList().stream()
                .map(ListenerDelegationProto::getFollower).distinct().sorted().toList();
    }

    /** Faults aimed at delegation, drawn from its own generator. */
    private void injectDelegationFaults() {
        int roll = drandom.nextInt(1000);
        List<String> delegates = delegates();
        long down = members.values().stream().filter(m -> m.node == null).count();
        if (roll < 8 && !delegates.isEmpty() && down < 2) {
            Member d = members.get(delegates.get(drandom.nextInt(delegates.size())));
            if (d.node != null) {
                step = "crash the delegate " + d.id;
                crash(d);
            }
        } else if (roll < 20 && !delegates.isEmpty() && leader().isPresent()) {
            String d = delegates.get(drandom.nextInt(delegates.size()));
            String l = leader().get().id;
            if (!d.equals(l)) {
                step = "cut the delegate " + d + " from the leader " + l + " (not from its listeners)";
                net.cutOneWay(d, l);
                net.cutOneWay(l, d);
                count("fault.delegateCut");
            }
        } else if (roll < 30) {
            reassign();
        } else if (roll < 36 && !delegates.isEmpty()) {
            transfer();
        } else if (roll < 44 && leader().isPresent()) {
            // a listener far behind: cut off while its delegate moves on and compacts
            RaftConfigurationProto cur = leader().get().node.status().configuration();
            if (cur.getDelegationsCount() > 0) {
                ListenerDelegationProto d = cur.getDelegations(drandom.nextInt(cur.getDelegationsCount()));
                step = "isolate the delegated listener " + d.getListener();
                net.isolate(d.getListener(), all);
                count("fault.listenerIsolated");
            }
        } else if (roll < 60 && !delegates.isEmpty()) {
            compact(members.get(delegates.get(drandom.nextInt(delegates.size()))));
        } else if (roll < 70 && leader().isPresent()) {
            // a delegate's slow path to its listener: its messages arrive after the term moved on (with a
            // transfer at once, half the time), and must be refused there
            RaftConfigurationProto cur = leader().get().node.status().configuration();
            if (cur.getDelegationsCount() > 0) {
                ListenerDelegationProto d = cur.getDelegations(drandom.nextInt(cur.getDelegationsCount()));
                int ticks = 5 + drandom.nextInt(2 * ELECTION_TICKS);
                step = "slow " + d.getFollower() + ">" + d.getListener() + " by " + ticks + " ticks";
                net.slowOneWay(d.getFollower(), d.getListener(), ticks);
                count("fault.delegateSlowed");
                switch (drandom.nextInt(3)) {
                    case 0 -> transfer();
                    // the listener falls behind the delegate's and the leader's snapshot at one index: when the
                    // leader revokes the slow delegation, both may be sending it chunks
                    case 1 -> compactTogether(leader().get(), members.get(d.getFollower()));
                    default -> {
                    }
                }
            }
        } else if (roll < 78 && !delegates.isEmpty() && leader().isPresent()) {
            compactTogether(leader().get(), members.get(delegates.get(drandom.nextInt(delegates.size()))));
        } else if (roll < 86 && leader().isPresent()) {
            snapshotRace(leader().get());
        }
    }

    /**
     * One snapshot sent to a listener by two senders at once: the listener falls behind (isolated a few
     * ticks, while the leader appends entries past the compaction's tail); then the leader and its delegate
     * compact at one index as the listener comes back, on a slow path from the delegate, and the leader hears
     * the delegate no more while its own messages reach the delegate more than an election timeout late. The
     * leader revokes the delegation and sends its snapshot, while the delegate, told late, sends its own. The
     * two are the same state in different bytes: a receiver that spliced their chunks would install a
     * snapshot of neither.
     */
    private void snapshotRace(Member leader) {
        List<ListenerDelegationProto> ds = leader.node.status().configuration().getDelegationsList().stream()
                .filter(x -> !x.getFollower().equals(leader.id)).toList();
        if (ds.isEmpty()) {
            return;
        }
        ListenerDelegationProto d = ds.get(drandom.nextInt(ds.size()));
        step = "snapshot race: isolate " + d.getListener();
        net.isolate(d.getListener(), all);
        count("fault.snapshotRace");
        int slow = 3 + drandom.nextInt(4);
        int heard = ELECTION_TICKS + 5 + drandom.nextInt(ELECTION_TICKS);
        // past the tail a compaction keeps (not with the default tail: a thousand entries), so it needs the snapshot
        for (long i = 0; i < logTail + 2 && logTail < 100 && leader.node != null; i++) {
            if (leader.node.propose(ByteString.copyFromUtf8("pad")) instanceof Proposal.Accepted) {
                drive(leader);
            }
        }
        later.computeIfAbsent(now + 5 + drandom.nextInt(6), t -> new ArrayList<>()).add(() -> {
            Member delegate = members.get(d.getFollower());
            if (leader.node == null || delegate.node == null || leader.node.status().role() != RaftPeerRole.LEADER) {
                return;
            }
            step = "snapshot race: " + leader.id + " and " + delegate.id + " compact, " + d.getListener() + " back, "
                    + leader.id + " hears " + delegate.id + " no more and reaches it " + heard + " ticks late";
            if (compactTogether(leader, delegate)) {
                count(members.get(d.getListener()).applied < leader.storage.snapshotIndex()
                        ? "fault.snapshotRace.behind" : "fault.snapshotRace.caughtUp");
            }
            net.reconnect(d.getListener());
            net.cutOneWay(delegate.id, leader.id);
            net.slowOneWay(leader.id, delegate.id, heard);
            net.slowOneWay(delegate.id, d.getListener(), slow);
        });
    }

    /**
     * The leader and a delegate compact at one index (the lower of their applied indexes): two snapshots of
     * one index in different bytes, which a listener may be sent chunk by chunk by both at once.
     */
    private boolean compactTogether(Member leader, Member delegate) {
        if (delegate.node == null || delegate == leader) {
            return false;
        }
        long index = Math.min(leader.applied, delegate.applied);
        for (Member m : List.of(leader, delegate)) {
            if (index <= m.storage.snapshotIndex() || index <= m.node.status().firstIndex()
                    || !valueAt.containsKey(index)) {
                return false;
            }
        }
        step = "compact " + leader.id + " and " + delegate.id + " at " + index;
        for (Member m : List.of(leader, delegate)) {
            ByteString data = encodeValue(m.id, index, valueAt.get(index));
            m.storage.saveSnapshot(m.node.compact(index, data), data);
        }
        count("compact.together");
        return true;
    }

    private void transfer() {
        Optional<Member> l = leader();
        if (l.isEmpty()) {
            return;
        }
        Member leader = l.get();
        RaftConfigurationProto cur = leader.node.status().configuration();
        List<String> candidates = new ArrayList<>(cur.getPeersList().stream().map(RaftPeerProto::getId).toList());
        candidates.addAll(cur.getListenersList().stream().map(RaftPeerProto::getId).toList());
        String target = candidates.get(random.nextInt(candidates.size()));
        step = "transfer leadership from " + leader.id + " to " + target;
        Proposal p = leader.node.transferLeadership(target);
        count("transfer." + p.getClass().getSimpleName());
        boolean listener = cur.getListenersList().stream().anyMatch(x -> x.getId().equals(target));
        if (listener && !(p instanceof Proposal.Refused)) {
            throw violation("transfer to a listener was not refused: " + p);
        }
        drive(leader);
    }

    private void compact(Member m) {
        if (m.node == null || m.applied <= m.node.status().firstIndex()) {
            return;
        }
        step = "compact " + m.id + " at " + m.applied;
        ByteString data = encodeValue(m.id, m.applied, m.value);
        SnapshotMetaProto meta = m.node.compact(m.applied, data);
        m.storage.saveSnapshot(meta, data);
        count("compact");
    }

    private void heal() {
        faults = false;
        step = "heal everything";
        net.heal();
        net.loss = 0;
        net.duplicate = 0;
        net.maxDelay = Math.min(net.maxDelay, 1);
        for (Member m : members.values()) {
            if (m.node == null) {
                start(m);
                drive(m);
            }
        }
    }

    // ---------------------------------------------------------------------------------------------
    // The state machine: a register of ints

    /**
     * The register's state as {@code member} writes its snapshot at {@code index}: the value, the writer, a
     * padding whose length depends on both, and a checksum of the rest. Two members' snapshots at one index
     * hold the same state in different bytes (and lengths, so most span a different number of chunks):
     * chunks of two senders spliced into one fail the checksum.
     */
    static ByteString encodeValue(String member, long index, int v) {
        String body = "v=" + v + ";by=" + member + ";pad=" + "#".repeat(padding(member, index)) + ";";
        return ByteString.copyFromUtf8(body + "crc=" + crc(body));
    }

    private static int padding(String member, long index) {
        return 8 + Math.floorMod(member.hashCode() * 31 + Long.hashCode(index), 41);
    }

    private static long crc(String body) {
        CRC32 crc = new CRC32();
        crc.update(body.getBytes(StandardCharsets.UTF_8));
        return crc.getValue();
    }

    /** The value a snapshot holds; a violation if its bytes are not one member's whole snapshot. */
    private int decodeValue(String receiver, ByteString b) {
        String text = b.toStringUtf8();
        int at = text.lastIndexOf("crc=");
        String body = at < 0 ? text : text.substring(0, at);
        if (at < 0 || !body.startsWith("v=") || !text.substring(at + 4).equals(Long.toString(crc(body)))) {
            throw violation("snapshot integrity: " + receiver + " holds a snapshot that is no member's whole snapshot "
                    + "(chunks of two senders spliced?): '" + text + "'");
        }
        return Integer.parseInt(body.substring(2, body.indexOf(';')));
    }

    private void installSnapshot(Member m, Ready.Snapshot s) {
        count("snapshot.installed");
        m.storage.saveSnapshot(s.meta(), s.data());
        long index = s.meta().getLastIncluded().getIndex();
        if (index < m.applied) {
            throw violation("snapshot install at " + index + " below applied " + m.applied + " on " + m.id);
        }
        int value = decodeValue(m.id, s.data());
        Integer known = valueAt.get(index);
        if (known != null && known != value) {
            throw violation("state machine safety: " + m.id + " installs value " + value + " at " + index
                    + " but the state there was " + known);
        }
        LogEntryProto c = committedLog.get(index);
        if (c != null && c.getTerm() != s.meta().getLastIncluded().getTerm()) {
            throw violation("state machine safety: snapshot at " + index + " of term " + s.meta().getLastIncluded().getTerm()
                    + " but the committed entry there has term " + c.getTerm());
        }
        m.value = value;
        m.applied = index;
        for (Client cl : clients) {
            if (cl.busy && cl.member.equals(m.id) && cl.kind != Kind.READ && cl.index <= index) {
                giveUp(cl);
            }
        }
    }

    private void apply(Member m, LogEntryProto e) {
        if (e.getIndex() != m.applied + 1) {
            throw violation("apply order: " + m.id + " applies " + e.getIndex() + " after " + m.applied);
        }
        Long committedTerm = leaderCommitted.get(e.getIndex());
        if (committedTerm == null || committedTerm != e.getTerm()) {
            throw violation("applies only what is committed: " + m.id + " (" + m.node.status().role() + ") applies "
                    + brief(e) + " but a leader committed " + (committedTerm == null ? "nothing" : "term " + committedTerm)
                    + " there");
        }
        LogEntryProto c = committedLog.putIfAbsent(e.getIndex(), e);
        if (c != null && !c.equals(e)) {
            throw violation("state machine safety: " + m.id + " applies " + brief(e) + " at " + e.getIndex()
                    + " where another member applied " + brief(c));
        }
        m.applied = e.getIndex();
        Client owner = null;
        for (Client cl : clients) {
            if (cl.busy && cl.kind != Kind.READ && cl.member.equals(m.id) && cl.index == e.getIndex()) {
                owner = cl;
            }
        }
        boolean mine = owner != null && owner.term == e.getTerm();
        if (e.hasStateMachineLogEntry()) {
            String[] op = e.getStateMachineLogEntry().getLogData().toStringUtf8().split(":");
            if (op[0].equals("w")) {
                m.value = Integer.parseInt(op[1]);
                if (mine) {
                    respond(owner, true, 0);
                }
            } else if (op[0].equals("cas")) {
                boolean ok = m.value == Integer.parseInt(op[1]);
                if (ok) {
                    m.value = Integer.parseInt(op[2]);
                }
                if (mine) {
                    respond(owner, ok, 0);
                }
            }
        }
        if (owner != null && !mine) {
            owner.busy = false; // another entry holds that index: the operation never took effect
        }
        Integer known = valueAt.putIfAbsent(e.getIndex(), m.value);
        if (known != null && known != m.value) {
            throw violation("state machine safety: " + m.id + " has value " + m.value + " after " + e.getIndex()
                    + ", another member had " + known);
        }
    }

    private static String brief(LogEntryProto e) {
        String body = e.hasStateMachineLogEntry() ? e.getStateMachineLogEntry().getLogData().toStringUtf8()
                : e.hasConfigurationEntry() ? "conf" : "noop";
        return "(" + e.getTerm() + "," + e.getIndex() + " " + body + ")";
    }

    // ---------------------------------------------------------------------------------------------
    // Clients

    private void clientsAct() {
        if (!faults) {
            return;
        }
        for (Client c : clients) {
            if (c.busy || invoked >= MAX_OPS || random.nextInt(8) != 0) {
                continue;
            }
            Member m = pickTarget();
            if (m == null) {
                continue;
            }
            int kind = random.nextInt(3);
            c.member = m.id;
            c.deadline = now + 4L * ELECTION_TICKS;
            c.readIndex = -1;
            if (kind == 0) {
                c.kind = Kind.READ;
                c.requestId = nextRequestId++;
                step = "client " + c.id + " reads at " + m.id;
                c.invoke = ++clock;
                if (m.node.readIndex(c.requestId)) {
                    c.busy = true;
                    invoked++;
                }
            } else {
                c.kind = kind == 1 ? Kind.WRITE : Kind.CAS;
                c.arg = nextValue++;
                c.expect = c.kind == Kind.CAS ? Math.max(0, c.arg - 1 - random.nextInt(3)) : 0;
                String data = c.kind == Kind.WRITE ? "w:" + c.arg : "cas:" + c.expect + ":" + c.arg;
                step = "client " + c.id + " " + data + " at " + m.id;
                c.invoke = ++clock;
                if (m.node.propose(ByteString.copyFromUtf8(data)) instanceof Proposal.Accepted a) {
                    c.term = a.term();
                    c.index = a.index();
                    c.busy = true;
                    invoked++;
                }
            }
            drive(m);
        }
    }

    /**
     * The newest leader, or any member that believes it leads (a client with a stale leader cached, the
     * case that breaks reads served without confirming leadership), or any member (reads then go through a
     * follower or listener).
     */
    private Member pickTarget() {
        List<Member> up = members.values().stream().filter(m -> m.node != null).toList();
        List<Member> leaders = up.stream().filter(m -> m.node.status().role() == RaftPeerRole.LEADER).toList();
        Optional<Member> l = leader();
        int pick = random.nextInt(3);
        if (pick == 0 && l.isPresent()) {
            return l.get();
        }
        if (pick == 1 && !leaders.isEmpty()) {
            return leaders.get(random.nextInt(leaders.size()));
        }
        return up.isEmpty() ? null : up.get(random.nextInt(up.size()));
    }

    private void onReadState(Member m, Ready.ReadState rs) {
        for (Client c : clients) {
            if (c.busy && c.kind == Kind.READ && c.member.equals(m.id) && c.requestId == rs.requestId()) {
                c.readIndex = rs.index();
            }
        }
    }

    private void answerReads(Member m) {
        for (Client c : clients) {
            if (c.busy && c.kind == Kind.READ && c.member.equals(m.id) && c.readIndex >= 0 && m.applied >= c.readIndex) {
                respond(c, true, m.value);
            }
        }
    }

    private void respond(Client c, boolean ok, int value) {
        history.add(new Op(c.id, c.kind, c.arg, c.expect, c.invoke, ++clock, ok, value));
        c.busy = false;
    }

    /** No answer will come: a write's outcome is unknown, a read is simply dropped. */
    private void giveUp(Client c) {
        if (c.kind != Kind.READ) {
            history.add(new Op(c.id, c.kind, c.arg, c.expect, c.invoke, Long.MAX_VALUE, false, 0));
        }
        c.busy = false;
    }

    private void expireClients() {
        for (Client c : clients) {
            if (c.busy && now >= c.deadline) {
                giveUp(c);
            }
        }
    }

    private void finishClients() {
        for (Client c : clients) {
            if (c.busy) {
                giveUp(c);
            }
        }
    }

    // ---------------------------------------------------------------------------------------------
    // Invariants

    private AssertionError violation(String property) {
        return new AssertionError("seed " + seed + " tick " + now + " step " + steps + " (" + step + "): " + property);
    }

    /** Log matching: an entry (index, term) is the same everywhere, and so is the term before it. */
    private void checkLogMatching(Member m, List<LogEntryProto> entries) {
        for (LogEntryProto e : entries) {
            long prevTerm = m.node.termAt(e.getIndex() - 1);
            String key = e.getIndex() + "/" + e.getTerm();
            long fingerprint = prevTerm * 1_000_003L + e.hashCode();
            Long seen = termIndexPrev.putIfAbsent(key, fingerprint);
            if (seen != null && seen != fingerprint) {
                throw violation("log matching: " + m.id + " holds a different entry or predecessor at " + key);
            }
        }
    }

    /** Commit as the driver made it durable: the term it was learned in bounds the term it was committed in. */
    private void onSyncedCommit(Member m, long commit, long term) {
        for (long i = m.syncedCommit + 1; i <= commit; i++) {
            long t = m.node.termAt(i);
            if (t >= 0) {
                Long other = commitEntryTerm.putIfAbsent(i, t);
                if (other != null && other != t) {
                    throw violation("state machine safety: " + m.id + " committed term " + t + " at " + i
                            + ", another member committed term " + other);
                }
            }
            commitTerm.merge(i, term, Math::min);
        }
        m.syncedCommit = Math.max(m.syncedCommit, commit);
        maxCommitted = Math.max(maxCommitted, commit);
    }

    /** A leader's commit, recorded once synced and before it is sent anywhere. */
    private void noteLeaderCommit(Member m, long commit, long term) {
        if (m.node.status().role() != RaftPeerRole.LEADER && !m.id.equals(leaderOfTerm.get(term))) {
            return;
        }
        for (long i = commit; i > 0 && !leaderCommitted.containsKey(i); i--) {
            long t = m.node.termAt(i);
            if (t < 0) {
                break;
            }
            leaderCommitted.put(i, t);
        }
    }

    /** A delegate's message carries only entries it knows committed, and names its leader. */
    private void checkDelegated(Member m, RaftMessageProto msg) {
        if (msg.hasAppendEntries() && msg.getAppendEntries().getFromFollower()) {
            var a = msg.getAppendEntries();
            count(a.getEntriesCount() > 0 ? "delegated.appends" : "delegated.probes");
            for (LogEntryProto e : a.getEntriesList()) {
                Long t = leaderCommitted.get(e.getIndex());
                if (t == null || t != e.getTerm()) {
                    throw violation("a delegate sends only committed entries: " + m.id + " sends " + brief(e)
                            + " to " + to(msg) + "; a leader committed " + (t == null ? "nothing" : "term " + t) + " there");
                }
            }
            if (a.getLeaderId().isEmpty() || a.getLeaderId().equals(m.id)) {
                throw violation("a delegated append names no leader: " + msg);
            }
        }
        if (msg.hasInstallSnapshot() && msg.getInstallSnapshot().getFromFollower()) {
            count("delegated.snapshotChunks");
        }
    }

    private void checkVote(Member m, RaftMessageProto msg) {
        if (msg.hasRequestVoteReply() && msg.getRequestVoteReply().getServerReply().getSuccess()
                && m.node.status().configuration().getListenersList().stream().anyMatch(p -> p.getId().equals(m.id))) {
            throw violation("listener " + m.id + " granted a vote");
        }
    }

    private void checkMember(Member m) {
        RaftStatus s = m.node.status();
        boolean listener = s.configuration().getListenersList().stream().anyMatch(p -> p.getId().equals(m.id));
        boolean voter = s.configuration().getPeersList().stream().anyMatch(p -> p.getId().equals(m.id));
        if (listener) {
            for (long i = Math.max(m.prefixCheckedTo + 1, s.firstIndex()); i <= s.commitIndex(); i++) {
                Long t = leaderCommitted.get(i);
                if (t == null || t != m.node.termAt(i)) {
                    throw violation("listener prefix: " + m.id + " commits " + s.commitIndex() + " but holds term "
                            + m.node.termAt(i) + " at " + i + " where a leader committed "
                            + (t == null ? "nothing" : "term " + t));
                }
            }
            m.prefixCheckedTo = Math.max(m.prefixCheckedTo, s.commitIndex());
        }
        if (listener && (s.role() == RaftPeerRole.CANDIDATE || s.role() == RaftPeerRole.FOLLOWER)) {
            throw violation("listener " + m.id + " is " + s.role());
        }
        if (s.role() == RaftPeerRole.CANDIDATE && !voter) {
            throw violation("non-voter " + m.id + " campaigns");
        }
        if (s.role() != RaftPeerRole.LEADER) {
            m.leaderTerm = -1;
            return;
        }
        String other = leaderOfTerm.putIfAbsent(s.term(), m.id);
        if (other != null && !other.equals(m.id)) {
            throw violation("election safety: " + other + " and " + m.id + " both lead term " + s.term());
        }
        if (m.leaderTerm != s.term()) {
            if (!voter) {
                throw violation("non-voter " + m.id + " became leader of term " + s.term());
            }
            m.leaderTerm = s.term();
            m.leaderCheckedTo = 0;
        } else {
            long t = m.node.termAt(m.leaderLastIndex);
            if (s.lastIndex() < m.leaderLastIndex || (t != m.leaderLastTerm && m.leaderLastIndex >= s.firstIndex())) {
                throw violation("leader append-only: " + m.id + " had (" + m.leaderLastTerm + "," + m.leaderLastIndex
                        + ") and now has term " + t + " there, last " + s.lastIndex());
            }
        }
        m.leaderLastIndex = s.lastIndex();
        m.leaderLastTerm = m.node.termAt(s.lastIndex());
        for (long i = m.leaderCheckedTo + 1; i <= maxCommitted; i++) {
            Long ct = commitTerm.get(i);
            Long et = commitEntryTerm.get(i);
            if (ct != null && et != null && ct <= s.term() && i >= s.firstIndex() && m.node.termAt(i) != et) {
                throw violation("leader completeness: " + m.id + " leads term " + s.term() + " without the entry ("
                        + et + "," + i + ") committed by term " + ct + "; it has term " + m.node.termAt(i));
            }
        }
        m.leaderCheckedTo = maxCommitted;
    }
}
