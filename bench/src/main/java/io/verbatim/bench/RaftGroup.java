package io.verbatim.bench;

import com.google.protobuf.ByteString;
import io.verbatim.metadatalog.identity.MemberKeys;
import io.verbatim.metadatalog.proto.RaftMessageProto;
import io.verbatim.metadatalog.proto.RaftPeerRole;
import io.verbatim.metadatalog.raft.RaftConfig;
import io.verbatim.metadatalog.server.Group;
import io.verbatim.metadatalog.server.RaftServer;
import io.verbatim.metadatalog.server.StateMachine;
import io.verbatim.metadatalog.storage.RaftStorage;
import io.verbatim.metadatalog.storage.SegmentedRaftStorage;
import io.verbatim.metadatalog.storage.StorageMetrics;
import io.verbatim.metadatalog.transport.MemoryNetwork;
import io.verbatim.metadatalog.transport.MemoryRaftTransport;
import io.verbatim.metadatalog.transport.NettyRaftTransport;
import io.verbatim.metadatalog.transport.RaftMessages;
import io.verbatim.metadatalog.transport.RaftTransport;
import io.verbatim.metadatalog.transport.RaftTransportMetrics;
import io.verbatim.net.SigningKey;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Function;
import java.util.function.ToDoubleFunction;
import java.util.function.ToLongFunction;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;
import reactor.core.publisher.Flux;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * A running metadata log group for the benches ({@link RaftBench}, {@link DelegationBench}): voters
 * {@code v1..} and listeners {@code l1..}, each on a thread of its own, on loopback TCP
 * ({@link NettyRaftTransport}) or a {@link MemoryNetwork}; every transport wrapped to count what it sends
 * ({@link Breakdown}); every member applying to a {@link Counter} that stamps when it applied each index.
 * Wall clock throughout: these are benches, not tests.
 */
final class RaftGroup implements AutoCloseable {
    static final String GROUP = "meta";
    static final int COMMAND_BYTES = 200;

    final Map<String, RaftServer> servers = new LinkedHashMap<>();
    final Map<String, RaftTransportMetrics> metrics = new LinkedHashMap<>();
    final Map<String, RaftStorage> storages = new LinkedHashMap<>();
    final Map<String, Breakdown> breakdowns = new LinkedHashMap<>();
    final Map<String, Counter> machines = new LinkedHashMap<>();
    final List<String> voters = new ArrayList<>();
    final List<String> listeners = new ArrayList<>();
    final List<Scheduler> threads = new ArrayList<>();
    private final SplittableRandom random = new SplittableRandom(42);
    private long sequence;

    private RaftGroup(int voters, int listeners) {
        for (int i = 1; i <= voters; i++) {
            this.voters.add("v" + i);
        }
        for (int i = 1; i <= listeners; i++) {
            this.listeners.add("l" + i);
        }
    }

    /** Every member, voters first. */
    List<String> members() {
        return Stream.concat(voters.stream(), listeners.stream()).toList();
    }

    /**
     * {@code voters} voters and {@code listeners} listeners on loopback TCP, {@code ioThreads} event-loop
     * threads per transport; {@code storage} gives each member its log, {@code tune} its config (from
     * {@link RaftConfig#defaults}).
     */
    static RaftGroup tcp(int voters, int listeners, int ioThreads, Function<String, RaftStorage> storage,
            UnaryOperator<RaftConfig> tune) {
        RaftGroup g = new RaftGroup(voters, listeners);
        Map<String, NettyRaftTransport> transports = new LinkedHashMap<>();
        for (String m : g.members()) {
            // each member its own secret; every member knows the others' verifying keys
            MemberKeys keys = MemberKeys.of(m, key(m));
            for (String v : g.voters) {
                keys = keys.withVoter(v, key(v).verifying());
            }
            for (String l : g.listeners) {
                keys = keys.withListener(l, key(l).verifying());
            }
            transports.put(m, NettyRaftTransport.builder(GROUP, keys).bind("127.0.0.1", 0).ioThreads(ioThreads).start());
        }
        Map<String, String> addresses = new LinkedHashMap<>();
        transports.forEach((m, t) -> addresses.put(m, "127.0.0.1:" + t.port()));
        transports.values().forEach(t -> t.updatePeers(addresses));
        Group initial = Group.of(g.voters, g.listeners);
        for (var e : transports.entrySet()) {
            g.start(e.getKey(), initial, storage.apply(e.getKey()), e.getValue(), e.getValue().metrics(), tune);
        }
        return g;
    }

    private static SigningKey key(String member) {
        return SigningKey.fromSecret("raft-bench-secret-of-" + member);
    }

    /** Voters on loopback TCP, each with a disk log in a directory of its own under {@code root}. */
    static RaftGroup disk(int voters, Path root, UnaryOperator<RaftConfig> tune) {
        return tcp(voters, 0, 2, m -> {
            try {
                return RaftStorage.open(Files.createDirectories(root.resolve(m)));
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }, tune);
    }

    /** Voters and listeners on a {@link MemoryNetwork}, in-memory storage. */
    static RaftGroup memory(int voters, int listeners, UnaryOperator<RaftConfig> tune) {
        RaftGroup g = new RaftGroup(voters, listeners);
        MemoryNetwork network = new MemoryNetwork(GROUP, Schedulers.parallel(), new SplittableRandom(7));
        Group initial = Group.of(g.voters, g.listeners);
        for (String m : g.members()) {
            MemoryRaftTransport t = network.join(m);
            g.start(m, initial, RaftStorage.inMemory(), t, t.metrics(), tune);
        }
        return g;
    }

    private void start(String member, Group initial, RaftStorage storage, RaftTransport transport,
            RaftTransportMetrics transportMetrics, UnaryOperator<RaftConfig> tune) {
        Scheduler thread = Schedulers.newSingle("raft-" + member);
        threads.add(thread);
        storages.put(member, storage);
        metrics.put(member, transportMetrics);
        Breakdown b = new Breakdown();
        breakdowns.put(member, b);
        Counter machine = new Counter();
        machines.put(member, machine);
        RaftConfig config = tune.apply(RaftConfig.defaults(member, GROUP));
        servers.put(member, RaftServer.builder(config).group(initial).storage(storage)
                .transport(new Counting(transport, b)).machine(machine).scheduler(thread).seed(member.hashCode()).start());
    }

    RaftServer server(String member) {
        return Objects.requireNonNull(servers.get(member), member);
    }

    Counter machine(String member) {
        return Objects.requireNonNull(machines.get(member), member);
    }

    RaftTransportMetrics transportMetrics(String member) {
        return Objects.requireNonNull(metrics.get(member), member);
    }

    /** The leader of the highest term, waited for (at most 30 s). */
    RaftServer awaitLeader() {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (System.nanoTime() < deadline) {
            var leader = servers.values().stream().filter(s -> s.status().role() == RaftPeerRole.LEADER)
                    .max(Comparator.comparingLong(s -> s.status().term()));
            if (leader.isPresent()) {
                return leader.get();
            }
            sleep(10);
        }
        throw new IllegalStateException("no leader within 30 s");
    }

    /** Commits one command, then waits until every member has applied what the leader committed (at most 30 s). */
    void awaitListenersCaughtUp() {
        RaftServer leader = awaitLeader();
        leader.submit(command()).block(Duration.ofSeconds(30));
        awaitApplied(leader.status().commitIndex(), servers.keySet().stream().toList(), Duration.ofSeconds(30));
    }

    /** Until each of {@code members} has applied {@code target}; false if not within {@code timeout}. */
    boolean awaitApplied(long target, List<String> members, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (members.stream().anyMatch(m -> server(m).status().appliedIndex() < target)) {
            if (System.nanoTime() > deadline) {
                return false;
            }
            sleep(5);
        }
        return true;
    }

    ByteString command() {
        byte[] bytes = new byte[COMMAND_BYTES];
        random.nextBytes(bytes);
        ByteBuffer.wrap(bytes).putLong(0, sequence++);
        return ByteString.copyFrom(bytes);
    }

    /**
     * Submits commands to the leader for {@code length}, at most {@code inFlight} unanswered, then waits
     * for those still out. A command that fails (the leader changed) counts as an error, and the next goes
     * to whoever leads then.
     */
    Round drive(int inFlight, Duration length) {
        return drive(inFlight, length, Duration.ZERO);
    }

    /** {@link #drive(int, Duration)}, submitting at most one command every {@code pace}. */
    Round drive(int inFlight, Duration length, Duration pace) {
        Semaphore window = new Semaphore(inFlight);
        long[] nanos = new long[1 << 20];
        AtomicInteger done = new AtomicInteger();
        AtomicInteger errors = new AtomicInteger();
        RaftServer leader = awaitLeader();
        long t0 = System.nanoTime();
        long end = t0 + length.toNanos();
        long next = t0;
        while (System.nanoTime() < end) {
            window.acquireUninterruptibly();
            if (!pace.isZero()) {
                long wait = next - System.nanoTime();
                if (wait > 0) {
                    LockSupport.parkNanos(wait);
                }
                next = Math.max(next, System.nanoTime()) + pace.toNanos();
            }
            if (errors.get() > 0 && leader.status().role() != RaftPeerRole.LEADER) {
                leader = awaitLeader();
            }
            ByteString command = command();
            long s = System.nanoTime();
            leader.submit(command).subscribe(index -> {
                int slot = done.getAndIncrement();
                if (slot < nanos.length) {
                    nanos[slot] = System.nanoTime() - s;
                }
                window.release();
            }, error -> {
                errors.incrementAndGet();
                window.release();
            });
        }
        try {
            if (!window.tryAcquire(inFlight, 30, TimeUnit.SECONDS)) {
                throw new IllegalStateException((inFlight - window.availablePermits())
                        + " commands unanswered 30 s after the round");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
        double seconds = (System.nanoTime() - t0) / 1e9;
        long[] latencies = Arrays.copyOf(nanos, Math.min(done.get(), nanos.length));
        Arrays.sort(latencies);
        return new Round(done.get(), errors.get(), seconds, latencies);
    }

    /** A {@link #drive} round, with the leader's bytes sent and the entries it committed meanwhile. */
    Egress egress(int inFlight, Duration length) {
        RaftServer leader = awaitLeader();
        RaftTransportMetrics m = transportMetrics(leader.status().memberId());
        long voters0 = sent(m, voters);
        long listeners0 = sent(m, listeners);
        long messages0 = messages(m);
        long commit0 = leader.status().commitIndex();
        long term0 = leader.status().term();
        Breakdown b = Objects.requireNonNull(breakdowns.get(leader.status().memberId()), "no breakdown for the leader");
        Breakdown b0 = b.copy();
        long dropped0 = metrics.values().stream().mapToLong(RaftTransportMetrics::dropped).sum();
        Round round = drive(inFlight, length);
        Breakdown window = b.copy().minus(b0);
        window.dropped = metrics.values().stream().mapToLong(RaftTransportMetrics::dropped).sum() - dropped0;
        long voters1 = sent(m, voters);
        long listeners1 = sent(m, listeners);
        long messages1 = messages(m);
        long commit1 = leader.status().commitIndex();
        boolean changed = leader.status().role() != RaftPeerRole.LEADER || leader.status().term() != term0;
        if (changed) {
            System.out.println("  (the leader changed during the window: its figures cover only its own term)");
        }
        return new Egress(voters1 - voters0, listeners1 - listeners0, commit0, commit1, messages1 - messages0,
                round.seconds(), round, window, changed);
    }

    private static long sent(RaftTransportMetrics m, List<String> peers) {
        return peers.stream().filter(p -> !p.equals(m.member())).mapToLong(m::bytesSent).sum();
    }

    private static long messages(RaftTransportMetrics m) {
        return m.peers().stream().mapToLong(m::messagesSent).sum();
    }

    /** The disk syncs each member did, from the storage metrics. */
    String syncs() {
        StringBuilder out = new StringBuilder();
        storages.forEach((m, s) -> {
            if (s instanceof SegmentedRaftStorage disk) {
                StorageMetrics x = disk.metrics();
                out.append(out.length() == 0 ? "" : "; ").append(String.format(Locale.ROOT,
                        "%s %d syncs, %.2f ms mean, %d fsyncs", m, x.syncs(),
                        x.syncs() == 0 ? 0.0 : x.syncNanos() / 1e6 / x.syncs(), x.fsyncs()));
            }
        });
        return out.toString();
    }

    @Override
    public void close() {
        servers.values().forEach(RaftServer::close);
        threads.forEach(Scheduler::dispose);
    }

    /** One timed round: commands committed, errors, the wall time and every command's latency (sorted). */
    record Round(int commits, int errors, double seconds, long[] nanos) {
        double perSecond() {
            return commits / seconds;
        }

        double medianMillis() {
            return nanos.length == 0 ? Double.NaN : nanos[nanos.length / 2] / 1e6;
        }

        double p99Millis() {
            return nanos.length == 0 ? Double.NaN : nanos[Math.min(nanos.length - 1, (int) (nanos.length * 0.99))] / 1e6;
        }

        @Override
        public String toString() {
            return String.format(Locale.ROOT, "%d commits in %.2f s = %.0f/s, median %.2f ms, p99 %.2f ms%s", commits,
                    seconds, perSecond(), medianMillis(), p99Millis(), errors == 0 ? "" : ", " + errors + " errors");
        }
    }

    /**
     * The leader's bytes to voters and to listeners over a window, the commit index at its start and end
     * (the entries committed in it: their difference), and whether the leader changed meanwhile.
     */
    record Egress(long toVoters, long toListeners, long commit0, long commit1, long messages, double seconds,
            Round round, Breakdown breakdown, boolean leaderChanged) {
        long entries() {
            return commit1 - commit0;
        }

        double part(ToLongFunction<Breakdown> f) {
            return f.applyAsLong(breakdown) / (double) entries();
        }

        double perEntry() {
            return (toVoters + toListeners) / (double) entries();
        }

        double perEntryToVoters() {
            return toVoters / (double) entries();
        }

        double perEntryToListeners() {
            return toListeners / (double) entries();
        }

        double perSecond() {
            return entries() / seconds;
        }

        @Override
        public String toString() {
            return String.format(Locale.ROOT, "%d entries, %d messages, %.0f B/entry (voters %.0f, listeners %.0f)",
                    entries(), messages, perEntry(), perEntryToVoters(), perEntryToListeners())
                    + (round.errors() == 0 ? "" : ", " + round.errors() + " errors");
        }
    }

    /**
     * A counter: applies every command by counting it, answers its index, snapshots the count and the last
     * index applied. It stamps ({@link System#nanoTime}) when it applied each index, for the lag between
     * members of one JVM; a restored snapshot covers every index up to the one it names.
     */
    static final class Counter implements StateMachine {
        private long applied;
        private long lastIndex;
        private long[] stamps = new long[1 << 16];
        private long restoredTo;
        private int restores;

        @Override
        public synchronized Object apply(long index, ByteString command) {
            applied++;
            lastIndex = index;
            if (index >= stamps.length) {
                stamps = Arrays.copyOf(stamps, (int) Math.max(stamps.length * 2L, index + 1));
            }
            stamps[(int) index] = System.nanoTime();
            return index;
        }

        @Override
        public synchronized ByteString snapshot() {
            return ByteString.copyFrom(ByteBuffer.allocate(16).putLong(0, applied).putLong(8, lastIndex));
        }

        @Override
        public synchronized void restore(ByteString snapshot) {
            ByteBuffer b = snapshot.asReadOnlyByteBuffer();
            applied = b.getLong(0);
            lastIndex = b.remaining() >= 16 ? b.getLong(8) : 0;
            restoredTo = Math.max(restoredTo, lastIndex);
            restores++;
        }

        /** When this member applied {@code index} (nanoTime), 0 if it did not (or not as an entry). */
        synchronized long appliedAt(long index) {
            return index < stamps.length ? stamps[(int) index] : 0;
        }

        /** Commands applied, those a restored snapshot covers included. */
        synchronized long applied() {
            return applied;
        }

        /** The highest index a snapshot restored here covers (0 if none). */
        synchronized long restoredTo() {
            return restoredTo;
        }

        synchronized int restores() {
            return restores;
        }
    }

    /**
     * The leader's sent messages by what they carry, in protobuf bytes (the transport adds a small frame
     * header to each): the entries in appends, the appends' commitInfos, the appends without entries
     * (heartbeats, commit notices), and the rest (append headers, every other message).
     */
    static final class Breakdown {
        long entryBytes;
        long commitInfoBytes;
        long emptyAppendBytes;
        long emptyAppends;
        long entriesSent;
        long total;
        long dropped;
        /** InstallSnapshot requests sent, by addressee (a snapshot's chunks, each counted). */
        private final Map<String, Long> snapshotsTo = new TreeMap<>();

        synchronized void count(RaftMessageProto m) {
            int size = m.getSerializedSize();
            total += size;
            if (m.hasInstallSnapshot()) {
                snapshotsTo.merge(RaftMessages.to(m), 1L, Long::sum);
            }
            if (m.hasAppendEntries()) {
                var a = m.getAppendEntries();
                if (a.getEntriesCount() == 0) {
                    emptyAppends++;
                    emptyAppendBytes += size;
                    return;
                }
                entriesSent += a.getEntriesCount();
                for (var e : a.getEntriesList()) {
                    entryBytes += e.getSerializedSize();
                }
                for (var c : a.getCommitInfosList()) {
                    commitInfoBytes += c.getSerializedSize();
                }
            }
        }

        synchronized Breakdown copy() {
            Breakdown b = new Breakdown();
            b.entryBytes = entryBytes;
            b.commitInfoBytes = commitInfoBytes;
            b.emptyAppendBytes = emptyAppendBytes;
            b.emptyAppends = emptyAppends;
            b.entriesSent = entriesSent;
            b.total = total;
            return b;
        }

        Breakdown minus(Breakdown o) {
            Breakdown b = new Breakdown();
            b.entryBytes = entryBytes - o.entryBytes;
            b.commitInfoBytes = commitInfoBytes - o.commitInfoBytes;
            b.emptyAppendBytes = emptyAppendBytes - o.emptyAppendBytes;
            b.emptyAppends = emptyAppends - o.emptyAppends;
            b.entriesSent = entriesSent - o.entriesSent;
            b.total = total - o.total;
            return b;
        }

        long rest() {
            return total - entryBytes - commitInfoBytes - emptyAppendBytes;
        }

        /** The InstallSnapshot requests sent so far, by addressee. */
        synchronized Map<String, Long> snapshotsTo() {
            return Map.copyOf(snapshotsTo);
        }
    }

    /** A transport that counts what it sends into a {@link Breakdown}. */
    record Counting(RaftTransport inner, Breakdown breakdown) implements RaftTransport {
        @Override
        public void send(RaftMessageProto message) {
            breakdown.count(message);
            inner.send(message);
        }

        @Override
        public Flux<RaftMessageProto> inbound() {
            return inner.inbound();
        }

        @Override
        public void close() {
            inner.close();
        }
    }

    /** {@code min / median / max} of {@code value} over {@code rounds}, each in {@code format}. */
    static <T> String spread(List<T> rounds, ToDoubleFunction<T> value, String format) {
        double[] v = rounds.stream().mapToDouble(value).sorted().toArray();
        return String.format(Locale.ROOT, format + " / " + format + " / " + format, v[0], v[v.length / 2],
                v[v.length - 1]);
    }

    static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    static void deleteTree(Path root) {
        try (Stream<Path> paths = Files.walk(root)) {
            for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("could not delete " + root, e);
        }
    }
}
