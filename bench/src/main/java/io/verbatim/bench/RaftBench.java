package io.verbatim.bench;

import static io.verbatim.bench.RaftGroup.spread;

import io.verbatim.bench.RaftGroup.Egress;
import io.verbatim.bench.RaftGroup.Round;
import io.verbatim.metadatalog.raft.RaftConfig;
import io.verbatim.metadatalog.server.RaftServer;
import io.verbatim.metadatalog.storage.SegmentedRaftStorage;
import io.verbatim.metadatalog.transport.MemoryNetwork;
import io.verbatim.metadatalog.transport.NettyRaftTransport;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

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
 *       baseline listener delegation must cut to a fifth ({@link DelegationBench} measures that cut, on
 *       TCP). Also what those bytes carry (counted by a wrapper of the leader's transport): the entries,
 *       how many times each entry went to each peer, the appends without entries, the rest; and the
 *       messages dropped anywhere in the group.</li>
 * </ol>
 *
 * Defaults as shipped: {@link RaftConfig#defaults} (10 election ticks, a heartbeat every tick, 8 appends
 * in flight) and {@link RaftServer.Builder}'s defaults (50 ms ticks, a snapshot every 10,000 entries);
 * every member on a thread of its own. {@code -Dverbatim.raftbench.heartbeatTicks=N} sends heartbeats every N
 * ticks instead (at most 9).
 *
 * <p>Run: {@code java -Xmx1g -cp bench/target/benchmarks.jar io.verbatim.bench.RaftBench [rounds]
 * [secondsPerRound]} (defaults 5 and 2; about 70 s in all at the defaults).
 */
final class RaftBench {
    private static final int COMMAND_BYTES = RaftGroup.COMMAND_BYTES;
    private static final int IN_FLIGHT = 32;
    private static final int VOTERS = 3;
    private static final int LISTENERS = 12;
    /** {@code -Dverbatim.raftbench.heartbeatTicks}: the leader's heartbeat period in ticks (default 1, as shipped). */
    private static final int HEARTBEAT_TICKS = Integer.getInteger("verbatim.raftbench.heartbeatTicks", 1);

    private RaftBench() {
    }

    /** The shipped config, heartbeats every {@link #HEARTBEAT_TICKS}. */
    private static RaftConfig tune(RaftConfig config) {
        return config.withHeartbeatTicks(HEARTBEAT_TICKS);
    }

    /** Context for P7: what the leader sends per committed entry without delegation, against the back of an envelope. */
    static final Row.Spec P7_BASELINE = new Row.Spec("P7/baseline", "leader egress per committed entry, 3 voters + 12"
            + " listeners, MemoryNetwork, 32 in flight, no delegation ÷ the expected (V-1+L)·S (context for P7)",
            "measured", "(V-1+L)·S", "B/entry", Goal.none());

    /** {@link #P7_BASELINE}: one group, one egress window of {@code seconds} per round. */
    static Bench baseline(double seconds, PrintStream log) {
        Duration length = Duration.ofMillis((long) (seconds * 1000));
        double expected = (VOTERS - 1 + LISTENERS) * (double) COMMAND_BYTES;
        RaftGroup wide = RaftGroup.memory(VOTERS, LISTENERS, RaftBench::tune);
        try {
            log.printf("  listener group: %d voters + %d listeners, MemoryNetwork, leader %s%n", VOTERS, LISTENERS,
                    wide.awaitLeader().status().memberId());
            wide.awaitListenersCaughtUp();
        } catch (RuntimeException e) {
            wide.close();
            throw e;
        }
        return new Bench() {
            @Override
            public List<Row.Spec> specs() {
                return List.of(P7_BASELINE);
            }

            @Override
            public List<Row.Sample> round(int round) {
                Egress e = wide.egress(IN_FLIGHT, length);
                log.println("  " + e);
                return List.of(new Row.Sample(e.perEntry(), expected, e.leaderChanged() ? "the leader changed" : ""));
            }

            @Override
            public void close() {
                wide.close();
            }
        };
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
        try (RaftGroup disk = RaftGroup.disk(VOTERS, root, RaftBench::tune)) {
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
            RaftGroup.deleteTree(root);
        }

        List<Egress> egressSerial = new ArrayList<>();
        List<Egress> egressPipelined = new ArrayList<>();
        try (RaftGroup wide = RaftGroup.memory(VOTERS, LISTENERS, RaftBench::tune)) {
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

    private static void row(String name, String value) {
        System.out.printf(Locale.ROOT, "| %s | %s |%n", name, value);
    }
}
