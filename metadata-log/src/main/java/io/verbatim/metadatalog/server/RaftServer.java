package io.verbatim.metadatalog.server;

import com.google.protobuf.ByteString;
import io.verbatim.metadatalog.proto.LogEntryProto;
import io.verbatim.metadatalog.proto.RaftConfigurationProto;
import io.verbatim.metadatalog.proto.RaftMessageProto;
import io.verbatim.metadatalog.proto.SnapshotMetaProto;
import io.verbatim.metadatalog.raft.Proposal;
import io.verbatim.metadatalog.raft.RaftConfig;
import io.verbatim.metadatalog.raft.RaftNode;
import io.verbatim.metadatalog.raft.RaftStatus;
import io.verbatim.metadatalog.raft.Ready;
import io.verbatim.metadatalog.storage.RaftStorage;
import io.verbatim.metadatalog.transport.RaftTransport;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.PriorityQueue;
import java.util.SplittableRandom;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.UnaryOperator;
import org.jspecify.annotations.Nullable;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.MonoSink;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Scheduler;
import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * One member of a metadata log group, running: the pure {@link RaftNode} driven on one worker of an
 * injected scheduler (ticks, inbound messages, proposals and reads all run there, one at a time), its
 * {@link RaftStorage} written and synced before any message of a Ready leaves, its {@link RaftTransport},
 * and the {@link StateMachine} it applies committed entries to.
 *
 * <p>Start one with {@link #builder}. The storage does blocking file I/O on that worker: give a server a
 * scheduler of its own (e.g. {@code Schedulers.newSingle}), or a virtual-time scheduler in tests.
 */
public final class RaftServer implements ReplicatedLog, AutoCloseable {
    private static final Logger LOG = Loggers.getLogger(RaftServer.class);
    private final RaftNode node;
    private final RaftStorage storage;
    private final RaftTransport transport;
    private final StateMachine machine;
    private final Options options;
    private final Scheduler.Worker worker;
    /** By index: more than one when a proposal's entry was replaced and the index reused in a later term. */
    private final Map<Long, List<Pending>> proposals = new HashMap<>();
    private final PriorityQueue<Read> confirmedReads = new PriorityQueue<>((a, b) -> Long.compare(a.index, b.index));
    private final Map<Long, MonoSink<Void>> askedReads = new HashMap<>();
    private final ArrayDeque<Disposable> resources = new ArrayDeque<>();
    private final Sinks.Many<RaftStatus> statuses = Sinks.many().replay().latest();
    private final AtomicBoolean closed = new AtomicBoolean();
    private volatile RaftStatus status;
    /** {@link #status} as {@link MemberStatus}, made on the first read of each status. */
    private volatile Viewed viewed;
    private long appliedIndex;
    private long snapshotIndex;
    /** Read ids start at random, so a delayed answer to a past incarnation's read never answers a new one. */
    private long nextReadId = ThreadLocalRandom.current().nextLong(1L << 62);

    private record Viewed(RaftStatus of, MemberStatus view) {
    }

    private record Pending(long term, MonoSink<Object> sink) {
    }

    private record Read(long index, MonoSink<Void> sink) {
    }

    /**
     * How a server runs its member (set through the {@link Builder}).
     *
     * @param tick the period of {@link RaftNode#tick}; the core's timeouts are counted in these
     * @param snapshotEvery entries applied between two snapshots
     * @param readTimeout how long a read barrier waits for the leader's confirmation
     */
    private record Options(Duration tick, long snapshotEvery, Duration readTimeout) {
    }

    private RaftServer(RaftConfig config, RaftConfigurationProto initial, RaftStorage storage, RaftTransport transport,
            StateMachine machine, Options options, Scheduler scheduler, long seed) {
        this.storage = storage;
        this.transport = transport;
        this.machine = machine;
        this.options = options;
        this.worker = scheduler.createWorker();
        RaftStorage.Recovered recovered = storage.recover();
        recovered.snapshot().ifPresent(meta -> {
            machine.restore(storage.snapshotData().orElseThrow(() -> new IllegalStateException(
                    "the storage has a snapshot's meta at " + meta.getLastIncluded().getIndex() + " but no data")));
            appliedIndex = meta.getLastIncluded().getIndex();
            snapshotIndex = appliedIndex;
        });
        this.node = RaftNode.start(withTransportLimit(config, transport), recovered, storage.snapshotData(), initial,
                new SplittableRandom(seed));
        this.status = node.status();
        this.viewed = new Viewed(status, MemberStatus.of(status));
    }

    /**
     * {@code config} with the transport's largest message as its limit: a proposal that could never be sent
     * is refused at once. Batches and snapshot chunks must fit too, with room for the rest of their message.
     *
     * @throws IllegalArgumentException naming both, when an append's entries or a snapshot chunk could
     *     pass half the transport's largest message
     */
    static RaftConfig withTransportLimit(RaftConfig config, RaftTransport transport) {
        int limit = Math.min(config.maxMessageBytes(), transport.maxMessageBytes());
        if (config.maxEntriesBytesPerAppend() > limit / 2 || config.snapshotChunkBytes() > limit / 2) {
            throw new IllegalArgumentException("member " + config.memberId() + ": maxEntriesBytesPerAppend "
                    + config.maxEntriesBytesPerAppend() + " and snapshotChunkBytes " + config.snapshotChunkBytes()
                    + " must be at most half the transport's largest message, " + limit + " bytes (its frame limit)");
        }
        return config.withMaxMessageBytes(limit);
    }

    /**
     * Starts building member {@code config.memberId()}: name its group, storage, transport, state machine and
     * scheduler, then {@link Builder#start}.
     */
    public static Builder builder(RaftConfig config) {
        return new Builder(config);
    }

    /**
     * What a member needs to start, by name. Required: {@link #group} (the group's first configuration),
     * {@link #storage}, {@link #transport}, {@link #machine} and {@link #scheduler}. Defaults: a 50 ms
     * {@link #tick}, a snapshot every 10,000 applied entries ({@link #snapshotEvery}), reads that wait 5 s
     * for the leader ({@link #readTimeout}), election timeouts drawn from an unseeded random ({@link #seed}).
     */
    public static final class Builder {
        private final RaftConfig config;
        private @Nullable RaftConfigurationProto initial;
        private @Nullable RaftStorage storage;
        private @Nullable RaftTransport transport;
        private @Nullable StateMachine machine;
        private @Nullable Scheduler scheduler;
        private Duration tick = Duration.ofMillis(50);
        private long snapshotEvery = 10_000;
        private Duration readTimeout = Duration.ofSeconds(5);
        private long seed = ThreadLocalRandom.current().nextLong();

        private Builder(RaftConfig config) {
            this.config = Objects.requireNonNull(config, "config");
        }

        /**
         * The group's first configuration, the same on every member that starts the group; a member that has a
         * log or a snapshot takes its configuration from there. A member that joins a running group starts from
         * an empty one ({@code Group.of(List.of(), List.of())}) and learns the group from the leader.
         */
        public Builder group(Group initial) {
            this.initial = initial.toProto();
            return this;
        }

        /**
         * Where the member keeps its log, its hard state and its snapshot ({@link RaftStorage#open},
         * {@link RaftStorage#inMemory}); the server closes it when it stops.
         */
        public Builder storage(RaftStorage storage) {
            this.storage = Objects.requireNonNull(storage, "storage");
            return this;
        }

        /**
         * How it reaches the other members; the server closes it when it stops. Its largest message bounds the
         * member's ({@link RaftConfig#maxMessageBytes}).
         */
        public Builder transport(RaftTransport transport) {
            this.transport = Objects.requireNonNull(transport, "transport");
            return this;
        }

        /** What committed entries are applied to (its snapshot restored into it at start). */
        public Builder machine(StateMachine machine) {
            this.machine = Objects.requireNonNull(machine, "machine");
            return this;
        }

        /**
         * Where the member runs, one event at a time: the storage does blocking file I/O there, so give it a
         * scheduler of its own (e.g. {@code Schedulers.newSingle}), or a virtual-time scheduler in tests.
         */
        public Builder scheduler(Scheduler scheduler) {
            this.scheduler = Objects.requireNonNull(scheduler, "scheduler");
            return this;
        }

        /** The period of {@link RaftNode#tick}: the core's timeouts are counted in these. */
        public Builder tick(Duration tick) {
            if (tick.isNegative() || tick.isZero()) {
                throw new IllegalArgumentException("tick must be positive, was " + tick);
            }
            this.tick = tick;
            return this;
        }

        /**
         * Entries applied between two snapshots (the log keeps at most about this many, plus the tail a
         * compaction keeps in memory, {@link RaftConfig#logTailEntries}).
         */
        public Builder snapshotEvery(long entries) {
            if (entries < 1) {
                throw new IllegalArgumentException("snapshotEvery must be at least 1, was " + entries);
            }
            this.snapshotEvery = entries;
            return this;
        }

        /**
         * How long a read barrier waits for the leader's confirmation (a leader change drops it unanswered)
         * before it fails.
         */
        public Builder readTimeout(Duration timeout) {
            if (timeout.isNegative() || timeout.isZero()) {
                throw new IllegalArgumentException("readTimeout must be positive, was " + timeout);
            }
            this.readTimeout = timeout;
            return this;
        }

        /** The seed of the member's election timeouts (seed it to repeat a run). */
        public Builder seed(long seed) {
            this.seed = seed;
            return this;
        }

        /**
         * Recovers the member from its storage (its snapshot restored into the state machine) and starts it:
         * ticking, and stepping what the transport delivers.
         *
         * @throws IllegalStateException naming what was not given
         * @throws IllegalArgumentException when the member's appends or snapshot chunks could pass half the
         *     transport's largest message
         */
        public RaftServer start() {
            return RaftServer.start(config, require(initial, "group"), require(storage, "storage"),
                    require(transport, "transport"), require(machine, "machine"), require(scheduler, "scheduler"),
                    new Options(tick, snapshotEvery, readTimeout), seed);
        }

        private <T> T require(@Nullable T value, String what) {
            if (value == null) {
                throw new IllegalStateException("member " + config.memberId() + ": " + what + "(...) was not given");
            }
            return value;
        }
    }

    private static RaftServer start(RaftConfig config, RaftConfigurationProto initial, RaftStorage storage,
            RaftTransport transport, StateMachine machine, Scheduler scheduler, Options options, long seed) {
        RaftServer server = new RaftServer(config, initial, storage, transport, machine, options, scheduler, seed);
        TickGate ticks = new TickGate(options.tick().toNanos());
        server.resources.add(server.worker.schedulePeriodically(() -> {
            if (ticks.admit(scheduler.now(TimeUnit.NANOSECONDS))) {
                server.run(server.node::tick);
            }
        }, options.tick().toNanos(), options.tick().toNanos(), TimeUnit.NANOSECONDS));
        server.resources.add(transport.inbound().subscribe(m -> server.worker.schedule(() -> server.step(m))));
        return server;
    }

    private void step(RaftMessageProto message) {
        run(() -> {
            try {
                node.step(message);
            } catch (RuntimeException e) {
                // A message the core refuses outright (malformed) is dropped; it must not stop the member.
                LOG.warn("metadata log member {} dropped a {} it could not step: {}", status.memberId(),
                        message.getBodyCase(), e.toString());
            }
        });
    }

    /** Runs {@code event} on the core, then handles every Ready it produced. */
    private void run(Runnable event) {
        if (closed.get()) {
            return;
        }
        try {
            event.run();
            while (node.hasReady()) {
                Ready ready = node.ready();
                handle(ready);
                node.advance(ready);
            }
            maybeSnapshot();
        } catch (RuntimeException e) {
            // A storage or state machine failure: the member cannot go on safely (a Ready half handled must
            // not be retried); it stops, and says why.
            LOG.error("metadata log member {} stops: {}", status.memberId(), e.toString(), e);
            stop().subscribe(v -> { }, s -> { });
            return;
        }
        RaftStatus now = node.status();
        if (!now.equals(status)) {
            status = now;
            statuses.tryEmitNext(now);
        }
    }

    /** {@link #run}, or an error for {@code sink} once the server stopped (so no call waits forever). */
    private void runOrRefuse(MonoSink<?> sink, Runnable event) {
        if (closed.get()) {
            sink.error(new IllegalStateException(status.memberId() + " stopped"));
            return;
        }
        run(event);
    }

    private void handle(Ready ready) {
        ready.snapshot().ifPresent(s -> {
            storage.saveSnapshot(s.meta(), s.data());
            machine.restore(s.data());
            long index = s.meta().getLastIncluded().getIndex();
            proposals.entrySet().removeIf(e -> {
                if (e.getKey() <= index) {
                    e.getValue().forEach(p -> p.sink().error(new CommandOutcomeUnknownException("the command at index "
                            + e.getKey() + " was overtaken by a snapshot from the leader: it may or may not have "
                            + "taken effect; read before trying again")));
                    return true;
                }
                return false;
            });
            appliedIndex = Math.max(appliedIndex, index);
            snapshotIndex = Math.max(snapshotIndex, index);
        });
        if (!ready.entries().isEmpty()) {
            storage.append(ready.entries());
        }
        ready.hardState().ifPresent(storage::saveHardState);
        if (ready.mustSync()) {
            storage.sync();
        }
        for (RaftMessageProto m : ready.messages()) {
            transport.send(m);
        }
        for (LogEntryProto entry : ready.committedEntries()) {
            apply(entry);
        }
        for (Ready.ReadState r : ready.readStates()) {
            MonoSink<Void> sink = askedReads.remove(r.requestId());
            if (sink != null) {
                confirmedReads.add(new Read(r.index(), sink));
            }
        }
        answerReads();
    }

    private void apply(LogEntryProto entry) {
        long index = entry.getIndex();
        if (index <= appliedIndex) {
            return;
        }
        Object outcome = entry.hasStateMachineLogEntry()
                ? machine.apply(index, entry.getStateMachineLogEntry().getLogData()) : null;
        appliedIndex = index;
        List<Pending> pending = proposals.remove(index);
        if (pending == null) {
            return;
        }
        for (Pending p : pending) {
            if (p.term() == entry.getTerm()) {
                p.sink().success(outcome); // null (a configuration, a no-op): completes empty
            } else {
                p.sink().error(new CommandLostException("the command proposed at index " + index + " in term "
                        + p.term() + " was lost with its leader (term " + entry.getTerm() + " wrote that index)"));
            }
        }
    }

    private void answerReads() {
        while (!confirmedReads.isEmpty() && confirmedReads.peek().index() <= appliedIndex) {
            confirmedReads.poll().sink().success();
        }
    }

    private void maybeSnapshot() {
        if (appliedIndex - snapshotIndex < options.snapshotEvery()) {
            return;
        }
        ByteString data = machine.snapshot();
        SnapshotMetaProto meta = node.compact(appliedIndex, data);
        storage.saveSnapshot(meta, data);
        snapshotIndex = appliedIndex;
    }

    @Override
    public Mono<Object> submit(ByteString command) {
        return Mono.create(sink -> worker.schedule(() -> runOrRefuse(sink, () -> {
            Proposal p = node.propose(command);
            if (p instanceof Proposal.Accepted a) {
                proposals.computeIfAbsent(a.index(), i -> new ArrayList<>(1)).add(new Pending(a.term(), sink));
            } else if (p instanceof Proposal.NotLeader n) {
                sink.error(new NotLeaderException(status.memberId(), n.leaderHint()));
            } else if (p instanceof Proposal.TooLarge t) {
                sink.error(new CommandTooLargeException(t.reason()));
            } else {
                sink.error(new IllegalStateException(((Proposal.Refused) p).reason()));
            }
        })));
    }

    @Override
    public Mono<Void> readBarrier() {
        return Mono.create(sink -> worker.schedule(() -> runOrRefuse(sink, () -> {
            long id = nextReadId++;
            if (node.readIndex(id)) {
                askedReads.put(id, sink);
                worker.schedule(() -> {
                    MonoSink<Void> unanswered = askedReads.remove(id);
                    if (unanswered != null) {
                        unanswered.error(new ReadTimeoutException(status.memberId() + " had no answer from "
                                + leader().map(l -> "the leader " + l).orElse("a leader") + " to a read within "
                                + options.readTimeout().toMillis() + " ms"));
                    }
                }, options.readTimeout().toNanos(), TimeUnit.NANOSECONDS);
            } else {
                sink.error(new NotLeaderException(status.memberId(), Optional.empty()));
            }
        })));
    }

    /** Proposes a new configuration (voters and listeners); completes once applied here. */
    Mono<Void> setConfiguration(RaftConfigurationProto next) {
        return updateConfiguration(current -> next);
    }

    /**
     * Proposes {@code change} applied to the member's latest configuration, read on its worker where the
     * proposal is made: nothing proposed in between is overwritten (a read of {@link #status()} on another
     * thread, changed and proposed, could revert a change committed meanwhile). Completes once applied here;
     * fails with what {@code change} throws, without proposing anything.
     */
    Mono<Void> updateConfiguration(UnaryOperator<RaftConfigurationProto> change) {
        return Mono.<Object>create(sink -> worker.schedule(() -> runOrRefuse(sink, () -> {
            RaftConfigurationProto next;
            try {
                next = change.apply(node.status().configuration());
            } catch (RuntimeException e) {
                sink.error(e);
                return;
            }
            Proposal p = node.setConfiguration(next);
            if (p instanceof Proposal.Accepted a) {
                proposals.computeIfAbsent(a.index(), i -> new ArrayList<>(1)).add(new Pending(a.term(), sink));
            } else if (p instanceof Proposal.NotLeader n) {
                sink.error(new NotLeaderException(status.memberId(), n.leaderHint()));
            } else if (p instanceof Proposal.TooLarge t) {
                sink.error(new CommandTooLargeException(t.reason()));
            } else {
                sink.error(new IllegalArgumentException(((Proposal.Refused) p).reason()));
            }
        }))).then();
    }

    /**
     * Proposes {@code change} applied to the member's latest group, as {@link #updateConfiguration} does:
     * the voters and listeners as they are unless {@code change} names others, the delegations {@code
     * change}'s.
     */
    public Mono<Void> updateGroup(UnaryOperator<Group> change) {
        return updateConfiguration(conf -> change.apply(Group.of(conf)).onto(conf));
    }

    /** Asks the leader (this member) to hand leadership to {@code target}. */
    public Mono<Void> transferLeadership(String target) {
        return Mono.create(sink -> worker.schedule(() -> runOrRefuse(sink, () -> {
            Proposal p = node.transferLeadership(target);
            if (p instanceof Proposal.Accepted) {
                sink.success();
            } else if (p instanceof Proposal.NotLeader n) {
                sink.error(new NotLeaderException(status.memberId(), n.leaderHint()));
            } else {
                sink.error(new IllegalArgumentException(((Proposal.Refused) p).reason()));
            }
        })));
    }

    /** The member's state as of its last event. */
    public RaftStatus status() {
        return status;
    }

    /** The member's state, then every change of it (role, term, leader, commit, progress). */
    public Flux<RaftStatus> statuses() {
        return statuses.asFlux();
    }

    /** The member's state as of its last event, in plain values. */
    public MemberStatus memberStatus() {
        return view(status);
    }

    /** The member's state in plain values, then every change of it. */
    public Flux<MemberStatus> memberStatuses() {
        return statuses().map(this::view);
    }

    /** {@code s} in plain values: made once per status, however many read it. */
    private MemberStatus view(RaftStatus s) {
        Viewed last = viewed;
        if (last.of() != s) {
            last = new Viewed(s, MemberStatus.of(s));
            viewed = last;
        }
        return last.view();
    }

    /** The leader this member knows of, if any. */
    public Optional<String> leader() {
        return status.leader().isEmpty() ? Optional.empty() : Optional.of(status.leader());
    }

    /**
     * Stops ticking and stepping, fails what is pending, closes the transport and the storage; completes
     * when done (on the server's worker, so never while a Ready is half handled).
     */
    public Mono<Void> stop() {
        return Mono.create(sink -> {
            if (!closed.compareAndSet(false, true)) {
                sink.success();
                return;
            }
            worker.schedule(() -> {
                try {
                    resources.forEach(Disposable::dispose);
                    IllegalStateException stopped = new IllegalStateException(status.memberId() + " stopped");
                    proposals.values().forEach(l -> l.forEach(p -> p.sink().error(stopped)));
                    askedReads.values().forEach(r -> r.error(stopped));
                    confirmedReads.forEach(r -> r.sink().error(stopped));
                    proposals.clear();
                    askedReads.clear();
                    confirmedReads.clear();
                    transport.close();
                    storage.close();
                    statuses.tryEmitComplete();
                    sink.success();
                } catch (RuntimeException e) {
                    sink.error(e);
                } finally {
                    worker.dispose();
                }
            });
        });
    }

    /** {@link #stop}, waited for (at most 10 s): for a server on a real scheduler. */
    @Override
    public void close() {
        stop().block(Duration.ofSeconds(10));
    }
}
