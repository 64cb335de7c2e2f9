package io.verbatim.bench;

import com.google.protobuf.ByteString;
import io.verbatim.metastore.proto.RaftConfigurationProto;
import io.verbatim.metastore.proto.RaftPeerProto;
import io.verbatim.metastore.proto.RaftPeerRole;
import io.verbatim.metastore.raft.RaftConfig;
import io.verbatim.metastore.server.RaftServer;
import io.verbatim.metastore.server.StateMachine;
import io.verbatim.metastore.storage.MemoryRaftStorage;
import io.verbatim.metastore.storage.RaftStorage;
import io.verbatim.metastore.storage.SegmentedRaftStorage;
import io.verbatim.metastore.storage.StorageMetrics;
import io.verbatim.metastore.storage.StorageOptions;
import io.verbatim.metastore.transport.MemoryNetwork;
import io.verbatim.metastore.transport.MemoryRaftTransport;
import io.verbatim.metastore.transport.NettyRaftTransport;
import io.verbatim.metastore.transport.RaftTransportMetrics;
import io.verbatim.net.Token;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
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
import java.util.SplittableRandom;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * The metadata log's figures, all printed, none asserted (a rate depends on the machine):
 *
 * <ol>
 *   <li>commits per second and commit latency (submit on the leader until applied there; median, p99) of
 *       three voters on loopback ({@link NettyRaftTransport}) with the disk log ({@link SegmentedRaftStorage},
 *       real fsync, in temporary directories deleted at the end), 200-byte commands, (a) one at a time and
 *       (b) 32 in flight; a warm-up, then {@code rounds} timed rounds, min/median/max over them;</li>
 *   <li>the leader's egress bytes per committed entry with 3 voters and 12 listeners ({@link MemoryNetwork},
 *       which counts a message's bytes as the TCP transport frames them; in-memory storage): the bytes the
 *       leader sent to every peer in a timed window (heartbeats included) ÷ the entries committed in it,
 *       split into voters and listeners, next to the back-of-envelope {@code (V-1+L)·S} and the ratio: the
 *       baseline listener delegation must cut to a fifth. Also what those bytes carry (counted by a
 *       wrapper of the leader's transport): the entries, how many times each entry went to each peer, the
 *       appends without entries, the rest; and the messages dropped anywhere in the group.</li>
 * </ol>
 *
 * Defaults as shipped: {@link RaftConfig#defaults} (10 election ticks, a heartbeat every tick, 8 appends
 * in flight) and {@link RaftServer.Options#defaults()} (50 ms ticks, a snapshot every 10,000 entries);
 * every member on a thread of its own. {@code -Dverbatim.raftbench.heartbeatTicks=N} sends heartbeats every N
 * ticks instead (at most 9).
 *
 * <p>Run: {@code java -Xmx1g -cp bench/target/benchmarks.jar io.verbatim.bench.RaftBench [rounds]
 * [secondsPerRound]} (defaults 5 and 2; about 70 s in all at the defaults).
 */
public final class RaftBench {
    private static final String GROUP = "meta";
    private static final int COMMAND_BYTES = 200;
    private static final int IN_FLIGHT = 32;
    private static final int VOTERS = 3;
    private static final int LISTENERS = 12;
    /** {@code -Dverbatim.raftbench.heartbeatTicks}: the leader's heartbeat period in ticks (default 1, as shipped). */
    private static final int HEARTBEAT_TICKS = Integer.getInteger("verbatim.raftbench.heartbeatTicks", 1);

    private RaftBench() {
    }

    public static void main(String[] args) throws Exception {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 5;
        double seconds = args.length > 1 ? Double.parseDouble(args[1]) : 2.0;
        Duration round = Duration.ofMillis((long) (seconds * 1000));
        System.out.printf(Locale.ROOT, "machine: %d cores, Java %s (%s), %s %s, load average %.2f at start%n",
                Runtime.getRuntime().availableProcessors(), System.getProperty("java.version"),
                System.getProperty("java.vm.name"), System.getProperty("os.name"), System.getProperty("os.arch"),
                ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage());
        System.out.printf(Locale.ROOT, "commands of %d bytes; %d rounds of %.1f s after a warm-up; a heartbeat every %d"
                + " tick(s) of 50 ms%n%n", COMMAND_BYTES, rounds, seconds, HEARTBEAT_TICKS);

        List<Round> serial = new ArrayList<>();
        List<Round> pipelined = new ArrayList<>();
        Path root = Files.createTempDirectory("verbatim-raftbench");
        try (Group disk = Group.netty(root)) {
            System.out.println("disk group: 3 voters, loopback TCP, leader " + disk.awaitLeader().status().memberId());
            disk.drive(1, round); // warm-up
            disk.drive(IN_FLIGHT, round);
            for (int i = 0; i < rounds; i++) {
                serial.add(disk.drive(1, round));
                pipelined.add(disk.drive(IN_FLIGHT, round));
                System.out.printf(Locale.ROOT, "  round %d: one at a time %s; %d in flight %s%n", i + 1,
                        serial.get(i), IN_FLIGHT, pipelined.get(i));
            }
            System.out.println("  the fsyncs: " + disk.syncs());
        } finally {
            deleteTree(root);
        }

        List<Egress> egressSerial = new ArrayList<>();
        List<Egress> egressPipelined = new ArrayList<>();
        try (Group wide = Group.memory()) {
            System.out.printf("%nlistener group: %d voters + %d listeners, MemoryNetwork, leader %s%n", VOTERS,
                    LISTENERS, wide.awaitLeader().status().memberId());
            wide.awaitListenersCaughtUp();
            wide.drive(IN_FLIGHT, round); // warm-up
            for (int i = 0; i < rounds; i++) {
                egressSerial.add(wide.egress(1, round));
                egressPipelined.add(wide.egress(IN_FLIGHT, round));
                System.out.printf(Locale.ROOT, "  round %d: one at a time %s; %d in flight %s%n", i + 1,
                        egressSerial.get(i), IN_FLIGHT, egressPipelined.get(i));
            }
        }

        double expected = (VOTERS - 1 + LISTENERS) * (double) COMMAND_BYTES;
        System.out.println();
        System.out.printf(Locale.ROOT, "| metadata log (%d cores, Java %s), min / median / max of %d rounds | value |%n",
                Runtime.getRuntime().availableProcessors(), System.getProperty("java.version"), rounds);
        System.out.println("| --- | --- |");
        row("3 voters, TCP loopback, disk log (fsync): commits/s one at a time",
                spread(serial, Round::perSecond, "%.0f"));
        row("  commit latency one at a time, median", spread(serial, Round::medianMillis, "%.2f") + " ms");
        row("  commit latency one at a time, p99", spread(serial, Round::p99Millis, "%.2f") + " ms");
        row("3 voters, TCP loopback, disk log (fsync): commits/s, " + IN_FLIGHT + " in flight",
                spread(pipelined, Round::perSecond, "%.0f"));
        row("  commit latency " + IN_FLIGHT + " in flight, median", spread(pipelined, Round::medianMillis, "%.2f")
                + " ms");
        row("  commit latency " + IN_FLIGHT + " in flight, p99", spread(pipelined, Round::p99Millis, "%.2f") + " ms");
        for (var mode : List.of(Map.entry(IN_FLIGHT + " in flight", egressPipelined),
                Map.entry("one at a time", egressSerial))) {
            List<Egress> e = mode.getValue();
            row("3 voters + 12 listeners, MemoryNetwork: leader egress bytes per committed entry, " + mode.getKey(),
                    spread(e, Egress::perEntry, "%.0f"));
            row("  to the 2 voters", spread(e, Egress::perEntryToVoters, "%.0f"));
            row("  to the 12 listeners", spread(e, Egress::perEntryToListeners, "%.0f"));
            row("  measured / expected (V-1+L)·S = " + (VOTERS - 1 + LISTENERS) + " × " + COMMAND_BYTES + " = "
                    + String.format(Locale.ROOT, "%.0f", expected), spread(e, x -> x.perEntry() / expected, "%.2f"));
            row("  of which the entries themselves (LogEntryProto bytes, all peers)",
                    spread(e, x -> x.part(b -> b.entryBytes), "%.0f"));
            row("  entries sent per committed entry and peer (1 = each sent once)",
                    spread(e, x -> x.part(b -> b.entriesSent) / (VOTERS - 1 + LISTENERS), "%.2f"));
            row("  messages dropped anywhere in the group (queue full, inbound overflow...)",
                    spread(e, x -> x.breakdown().dropped, "%.0f"));
            row("  of which the appends' commitInfos", spread(e, x -> x.part(b -> b.commitInfoBytes), "%.0f"));
            row("  of which appends without entries (heartbeats, commit notices)",
                    spread(e, x -> x.part(b -> b.emptyAppendBytes), "%.0f"));
            row("  of which the rest (append headers, frame headers, other messages)",
                    spread(e, x -> x.perEntry() - x.part(b -> b.entryBytes + b.commitInfoBytes + b.emptyAppendBytes),
                            "%.0f"));
            row("  commits/s meanwhile", spread(e, Egress::perSecond, "%.0f"));
        }
        System.out.printf(Locale.ROOT, "%nload average at the end: %.2f%n",
                ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage());
        System.exit(0);
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

    /** The leader's bytes to voters and to listeners over a window, and the entries committed in it. */
    record Egress(long toVoters, long toListeners, long entries, long messages, double seconds, Round round,
            Breakdown breakdown) {
        double part(java.util.function.ToLongFunction<Breakdown> f) {
            return f.applyAsLong(breakdown) / (double) entries;
        }

        double perEntry() {
            return (toVoters + toListeners) / (double) entries;
        }

        double perEntryToVoters() {
            return toVoters / (double) entries;
        }

        double perEntryToListeners() {
            return toListeners / (double) entries;
        }

        double perSecond() {
            return entries / seconds;
        }

        @Override
        public String toString() {
            return String.format(Locale.ROOT, "%d entries, %d messages, %.0f B/entry (voters %.0f, listeners %.0f)",
                    entries, messages, perEntry(), perEntryToVoters(), perEntryToListeners())
                    + (round.errors() == 0 ? "" : ", " + round.errors() + " errors");
        }
    }

    /** A counter: applies every command by counting it, answers its index, snapshots the count. */
    static final class Counter implements StateMachine {
        private long applied;

        @Override
        public Object apply(long index, ByteString command) {
            applied++;
            return index;
        }

        @Override
        public ByteString snapshot() {
            return ByteString.copyFrom(ByteBuffer.allocate(8).putLong(0, applied));
        }

        @Override
        public void restore(ByteString snapshot) {
            applied = snapshot.asReadOnlyByteBuffer().getLong(0);
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

        synchronized void count(io.verbatim.metastore.proto.RaftMessageProto m) {
            int size = m.getSerializedSize();
            total += size;
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
    }

    /** A transport that counts what it sends into a {@link Breakdown}. */
    record Counting(io.verbatim.metastore.transport.RaftTransport inner, Breakdown breakdown)
            implements io.verbatim.metastore.transport.RaftTransport {
        @Override
        public void send(io.verbatim.metastore.proto.RaftMessageProto message) {
            breakdown.count(message);
            inner.send(message);
        }

        @Override
        public reactor.core.publisher.Flux<io.verbatim.metastore.proto.RaftMessageProto> inbound() {
            return inner.inbound();
        }

        @Override
        public void close() {
            inner.close();
        }
    }

    /** A running group: its servers, their threads and transports' metrics. */
    static final class Group implements AutoCloseable {
        final Map<String, RaftServer> servers = new LinkedHashMap<>();
        final Map<String, RaftTransportMetrics> metrics = new LinkedHashMap<>();
        final Map<String, RaftStorage> storages = new LinkedHashMap<>();
        final Map<String, Breakdown> breakdowns = new LinkedHashMap<>();
        final List<String> voters = new ArrayList<>();
        final List<String> listeners = new ArrayList<>();
        final List<Scheduler> threads = new ArrayList<>();
        private final SplittableRandom random = new SplittableRandom(42);
        private long sequence;

        static RaftConfigurationProto configuration(List<String> voters, List<String> listeners) {
            RaftConfigurationProto.Builder b = RaftConfigurationProto.newBuilder();
            voters.forEach(v -> b.addPeers(RaftPeerProto.newBuilder().setId(v)));
            listeners.forEach(l -> b.addListeners(RaftPeerProto.newBuilder().setId(l)));
            return b.build();
        }

        /** Three voters on loopback TCP, each with a disk log in a directory of its own under {@code root}. */
        static Group netty(Path root) throws IOException {
            Group g = new Group();
            Map<String, NettyRaftTransport> transports = new LinkedHashMap<>();
            for (int i = 1; i <= VOTERS; i++) {
                String m = "v" + i;
                g.voters.add(m);
                transports.put(m, NettyRaftTransport.builder(m, GROUP, Token.clear("raft-bench-secret"))
                        .bind("127.0.0.1", 0).start());
            }
            Map<String, String> addresses = new LinkedHashMap<>();
            transports.forEach((m, t) -> addresses.put(m, "127.0.0.1:" + t.port()));
            transports.values().forEach(t -> t.updatePeers(addresses));
            RaftConfigurationProto initial = configuration(g.voters, List.of());
            for (var e : transports.entrySet()) {
                Path dir = Files.createDirectories(root.resolve(e.getKey()));
                g.start(e.getKey(), initial, SegmentedRaftStorage.open(dir, StorageOptions.defaults()), e.getValue(),
                        e.getValue().metrics());
            }
            return g;
        }

        /** Three voters and twelve listeners on a {@link MemoryNetwork}, in-memory storage. */
        static Group memory() {
            Group g = new Group();
            MemoryNetwork network = new MemoryNetwork(GROUP, Schedulers.parallel(), new SplittableRandom(7));
            for (int i = 1; i <= VOTERS; i++) {
                g.voters.add("v" + i);
            }
            for (int i = 1; i <= LISTENERS; i++) {
                g.listeners.add("l" + i);
            }
            RaftConfigurationProto initial = configuration(g.voters, g.listeners);
            for (String m : Stream.concat(g.voters.stream(), g.listeners.stream()).toList()) {
                MemoryRaftTransport t = network.join(m);
                Breakdown b = new Breakdown();
                g.breakdowns.put(m, b);
                g.start(m, initial, new MemoryRaftStorage(), new Counting(t, b), t.metrics());
            }
            return g;
        }

        private void start(String member, RaftConfigurationProto initial, RaftStorage storage,
                io.verbatim.metastore.transport.RaftTransport transport, RaftTransportMetrics transportMetrics) {
            Scheduler thread = Schedulers.newSingle("raft-" + member);
            threads.add(thread);
            storages.put(member, storage);
            metrics.put(member, transportMetrics);
            RaftConfig config = RaftConfig.defaults(member, GROUP).withHeartbeatTicks(HEARTBEAT_TICKS);
            servers.put(member, RaftServer.start(config, initial, storage, transport,
                    new Counter(), RaftServer.Options.defaults(), thread, member.hashCode()));
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

        /** Until every member has applied what the leader has committed (at most 30 s). */
        void awaitListenersCaughtUp() {
            RaftServer leader = awaitLeader();
            leader.submit(command()).block(Duration.ofSeconds(30));
            long target = leader.status().commitIndex();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (servers.values().stream().anyMatch(s -> s.status().appliedIndex() < target)) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("members still behind index " + target + " after 30 s");
                }
                sleep(10);
            }
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
            Semaphore window = new Semaphore(inFlight);
            long[] nanos = new long[1 << 22];
            AtomicInteger done = new AtomicInteger();
            AtomicInteger errors = new AtomicInteger();
            RaftServer leader = awaitLeader();
            long t0 = System.nanoTime();
            long end = t0 + length.toNanos();
            while (System.nanoTime() < end) {
                window.acquireUninterruptibly();
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
            RaftTransportMetrics m = java.util.Objects.requireNonNull(metrics.get(leader.status().memberId()),
                    "no transport metrics for the leader");
            long voters0 = sent(m, voters);
            long listeners0 = sent(m, listeners);
            long messages0 = messages(m);
            long commit0 = leader.status().commitIndex();
            long term0 = leader.status().term();
            Breakdown b = java.util.Objects.requireNonNull(breakdowns.get(leader.status().memberId()),
                    "no breakdown for the leader");
            Breakdown b0 = b.copy();
            long dropped0 = metrics.values().stream().mapToLong(RaftTransportMetrics::dropped).sum();
            Round round = drive(inFlight, length);
            Breakdown window = b.copy().minus(b0);
            window.dropped = metrics.values().stream().mapToLong(RaftTransportMetrics::dropped).sum() - dropped0;
            long voters1 = sent(m, voters);
            long listeners1 = sent(m, listeners);
            long messages1 = messages(m);
            long commit1 = leader.status().commitIndex();
            if (leader.status().role() != RaftPeerRole.LEADER || leader.status().term() != term0) {
                System.out.println("  (the leader changed during the window: its figures cover only its own term)");
            }
            return new Egress(voters1 - voters0, listeners1 - listeners0, commit1 - commit0, messages1 - messages0,
                    round.seconds(), round, window);
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
    }

    private static <T> String spread(List<T> rounds, java.util.function.ToDoubleFunction<T> value, String format) {
        double[] v = rounds.stream().mapToDouble(value).sorted().toArray();
        return String.format(Locale.ROOT, format + " / " + format + " / " + format, v[0], v[v.length / 2],
                v[v.length - 1]);
    }

    private static void row(String name, String value) {
        System.out.printf(Locale.ROOT, "| %s | %s |%n", name, value);
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    private static void deleteTree(Path root) {
        try (Stream<Path> paths = Files.walk(root)) {
            for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("could not delete " + root, e);
        }
    }
}
