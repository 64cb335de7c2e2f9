package io.verbatim.bench;

import static io.verbatim.bench.RaftGroup.spread;

import io.verbatim.bench.RaftGroup.Egress;
import io.verbatim.metastore.proto.ListenerDelegationProto;
import io.verbatim.metastore.proto.RaftConfigurationProto;
import io.verbatim.metastore.raft.RaftConfig;
import io.verbatim.metastore.raft.RaftStatus;
import io.verbatim.metastore.server.RaftServer;
import io.verbatim.metastore.storage.MemoryRaftStorage;
import io.verbatim.metastore.transport.NettyRaftTransport;
import io.verbatim.metastore.transport.RaftTransportMetrics;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.ToDoubleFunction;
import java.util.function.UnaryOperator;
import java.util.stream.Collectors;
import org.jspecify.annotations.Nullable;

/**
 * Listener delegation's figures (issue 13, P7), measured on loopback TCP ({@link NettyRaftTransport}, one
 * event-loop thread per member; in-memory storage; {@link RaftConfig#defaults} and
 * {@link RaftServer.Options#defaults()} otherwise: 50 ms ticks, a heartbeat every tick, 10 election ticks),
 * 3 voters + 12 listeners, 200-byte commands. Three groups run side by side in one JVM:
 *
 * <ul>
 *   <li><b>direct</b>: delegation off, the leader feeds every listener (as shipped);</li>
 *   <li><b>cap 5</b>: delegation on at the default {@code maxListenersPerFollower} 5: the two followers feed
 *       five listeners each, the leader the remaining two;</li>
 *   <li><b>cap 6</b>: {@code maxListenersPerFollower} 6: the followers feed all twelve.</li>
 * </ul>
 *
 * The assignment is set once a leader is elected (a configuration change naming the two followers). After a
 * warm-up, {@code rounds} rounds, each driving every group in turn (the order rotates) for
 * {@code secondsPerRound} with one command in flight, then with 32; per round and group:
 *
 * <ul>
 *   <li>the leader's egress: every byte its transport sent (heartbeats, commit notices, everything; frame
 *       headers included) ÷ the entries it committed meanwhile;</li>
 *   <li>commit latency: submit on the leader → applied there, p50 and p99;</li>
 *   <li>listener lag: for each committed command and each listener, the time from the leader applying it to
 *       the listener applying it (one JVM, one {@link System#nanoTime} clock), p50 and p99.</li>
 * </ul>
 *
 * Then the fallback runs, each {@code 3 × secondsPerRound} long: after a third of it, one delegate
 * follower's server is closed (its transport with it) — on the cap 5 and the cap 6 group with 32 in flight
 * (the leader revokes on the delegate's lag, {@code followerLagThreshold} 100 entries, within a few ticks),
 * and on a fresh cap 5 group at a light load, one command every 20 ms (the lag never gets there: the leader
 * revokes when it has not heard the delegate for {@code electionTicks}). Reported: the ticks (the leader's)
 * and milliseconds until the leader revoked that follower's listeners, the lag of those listeners for what
 * was committed between the failure and the revocation and after it, and that every listener applied every
 * committed command (as an entry, or covered by a snapshot it installed: counted apart, with the
 * InstallSnapshot requests every member sent meanwhile).
 *
 * <p>The ratio table (delegated ÷ direct, medians of the rounds; in brackets the min and max of the
 * per-round ratios, rounds paired) is printed and written as JSON. Goals, from the issue: egress ≤ 0.20 of
 * direct, commit latency ≤ 1.1 of direct; a miss is printed as missed. Wall clock throughout, on whatever
 * else the machine runs: the latencies and lags are noisy, the egress much less so.
 *
 * <p>Run: {@code java -Xmx1g -cp bench/target/benchmarks.jar io.verbatim.bench.DelegationBench [rounds]
 * [secondsPerRound] [json]} (defaults 5, 2 and {@code bench/target/p7.json}; about 2 minutes at the
 * defaults); a lone non-numeric argument is the JSON path.
 */
public final class DelegationBench {
    private static final int VOTERS = 3;
    private static final int LISTENERS = 12;
    private static final int IN_FLIGHT = 32;
    private static final double EGRESS_GOAL = 0.20;
    private static final double LATENCY_GOAL = 1.1;
    private static final List<Integer> MODES = List.of(1, IN_FLIGHT);
    /** The light load of the last fallback run: one command every 20 ms. */
    private static final Duration LIGHT_PACE = Duration.ofMillis(20);

    private DelegationBench() {
    }

    /** One group and what was measured on it. */
    static final class Arm {
        final String name;
        /** 0: delegation off. */
        final int cap;
        final RaftGroup group;
        String leader = "";
        /** listener → the follower the admin assigned it to. */
        final Map<String, String> delegations = new TreeMap<>();
        final Map<Integer, List<Sample>> samples = new LinkedHashMap<>();

        Arm(String name, int cap, RaftGroup group) {
            this.name = name;
            this.cap = cap;
            this.group = group;
            MODES.forEach(m -> samples.put(m, new ArrayList<>()));
        }

        List<Sample> samples(int mode) {
            return Objects.requireNonNull(samples.get(mode));
        }

        List<String> delegatedTo(String follower) {
            return delegations.entrySet().stream().filter(e -> e.getValue().equals(follower)).map(Map.Entry::getKey)
                    .toList();
        }
    }

    /**
     * Lags in milliseconds (p50, p99, max) over {@code count} (listener, command) pairs applied as entries;
     * {@code missing}: pairs not applied at all, {@code bySnapshot}: covered by a snapshot the listener installed.
     */
    record Lags(double p50, double p99, double max, int count, long missing, long bySnapshot) {
        static Lags of(long[] nanos, int n, long missing, long bySnapshot) {
            long[] a = Arrays.copyOf(nanos, n);
            Arrays.sort(a);
            return new Lags(at(a, 0.50), at(a, 0.99), a.length == 0 ? Double.NaN : a[a.length - 1] / 1e6, a.length,
                    missing, bySnapshot);
        }

        private static double at(long[] sorted, double q) {
            return sorted.length == 0 ? Double.NaN : sorted[Math.min(sorted.length - 1, (int) (sorted.length * q))] / 1e6;
        }

        @Override
        public String toString() {
            return String.format(Locale.ROOT, "p50 %.2f ms, p99 %.2f ms, max %.2f ms over %d", p50, p99, max, count)
                    + (missing == 0 ? "" : ", " + missing + " MISSING")
                    + (bySnapshot == 0 ? "" : ", " + bySnapshot + " by snapshot");
        }
    }

    /** One round of one group: the leader's egress and latency, the listeners' lag (all, by source). */
    record Sample(Egress egress, Lags all, Lags delegated, Lags byLeader, Map<String, Long> followerBytesToListeners,
            int delegatedAtStart, int delegatedAtEnd, List<String> revocations) {
        double latencyP50() {
            return egress.round().medianMillis();
        }

        double latencyP99() {
            return egress.round().p99Millis();
        }
    }

    /** P7's egress ratio as the suite measures it: shipped delegation (cap 5) ÷ direct, 32 in flight. */
    static final Row.Spec P7_EGRESS = new Row.Spec("P7/egress", "leader egress per committed entry, 3 voters + 12"
            + " listeners, TCP loopback, 32 in flight: delegated (default cap 5) ÷ direct", "delegated", "direct",
            "B/entry", Goal.atMost(EGRESS_GOAL));
    /** P7's latency ratio: commit latency p50 of the same rounds. */
    static final Row.Spec P7_LATENCY = new Row.Spec("P7/latency", "commit latency p50, same groups and rounds:"
            + " delegated (default cap 5) ÷ direct", "delegated", "direct", "ms", Goal.atMost(LATENCY_GOAL));

    /**
     * P7 for the suite: a direct group and a cap 5 group (the shipped default), each round driving both in
     * turn (the order alternating) for {@code seconds} with 32 in flight. A round in which a delegation was
     * not in force throughout, or the leader changed, is noted (its figures are kept).
     */
    static Bench ratios(double seconds, PrintStream log) {
        Duration length = Duration.ofMillis((long) (seconds * 1000));
        List<Arm> arms = new ArrayList<>();
        try {
            arms.add(new Arm("direct", 0, group(c -> c)));
            arms.add(new Arm("cap 5", 5, group(c -> c.withDelegationEnabled(true))));
            for (Arm arm : arms) {
                arm.group.awaitListenersCaughtUp();
                arm.leader = arm.group.awaitLeader().status().memberId();
                if (arm.cap > 0) {
                    delegate(arm);
                }
                log.printf("  %s: leader %s, %s%n", arm.name, arm.leader, arm.delegations.isEmpty()
                        ? "every listener fed by the leader" : "delegations " + describe(arm));
            }
        } catch (RuntimeException e) {
            arms.forEach(a -> a.group.close());
            throw e;
        }
        return new Bench() {
            @Override
            public List<Row.Spec> specs() {
                return List.of(P7_EGRESS, P7_LATENCY);
            }

            @Override
            public List<Row.Sample> round(int round) {
                Sample[] s = new Sample[2];
                for (int k = 0; k < 2; k++) {
                    int which = Math.floorMod(round + k, 2);
                    s[which] = sample(arms.get(which), IN_FLIGHT, length);
                    log.printf(Locale.ROOT, "  %-6s: %s; latency p50 %.2f ms%n", arms.get(which).name, s[which].egress(),
                            s[which].latencyP50());
                }
                Arm cap5 = arms.get(1);
                List<String> notes = new ArrayList<>();
                if (s[1].delegatedAtStart() < cap5.delegations.size() || s[1].delegatedAtEnd() < cap5.delegations.size()
                        || !s[1].revocations().isEmpty()) {
                    notes.add("cap 5: " + s[1].delegatedAtStart() + " of " + cap5.delegations.size()
                            + " delegations in force at the start, " + s[1].delegatedAtEnd() + " at the end"
                            + (s[1].revocations().isEmpty() ? "" : ", revoked " + s[1].revocations()));
                }
                for (int i = 0; i < 2; i++) {
                    if (s[i].egress().leaderChanged()) {
                        notes.add(arms.get(i).name + ": the leader changed");
                    }
                }
                String note = String.join("; ", notes);
                return List.of(new Row.Sample(s[1].egress().perEntry(), s[0].egress().perEntry(), note),
                        new Row.Sample(s[1].latencyP50(), s[0].latencyP50(), note));
            }

            @Override
            public void close() {
                arms.forEach(a -> a.group.close());
            }
        };
    }

    public static void main(String[] args) throws Exception {
        List<String> numbers = new ArrayList<>();
        String out = "bench/target/p7.json";
        for (String a : args) {
            if (a.matches("[0-9.]+")) {
                numbers.add(a);
            } else {
                out = a;
            }
        }
        int rounds = numbers.size() > 0 ? Integer.parseInt(numbers.get(0)) : 5;
        double seconds = numbers.size() > 1 ? Double.parseDouble(numbers.get(1)) : 2.0;
        Duration round = Duration.ofMillis((long) (seconds * 1000));
        long started = System.nanoTime();
        String machine = String.format(Locale.ROOT, "%d cores, Java %s (%s), %s %s",
                Runtime.getRuntime().availableProcessors(), System.getProperty("java.version"),
                System.getProperty("java.vm.name"), System.getProperty("os.name"), System.getProperty("os.arch"));
        System.out.printf(Locale.ROOT, "machine: %s, load average %.2f at start%n", machine,
                ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage());
        System.out.printf(Locale.ROOT, "%d voters + %d listeners on loopback TCP, in-memory storage, commands of %d bytes;"
                + " %d rounds of %.1f s per group and load after a warm-up%n%n", VOTERS, LISTENERS,
                RaftGroup.COMMAND_BYTES, rounds, seconds);

        List<Arm> arms = new ArrayList<>();
        arms.add(new Arm("direct", 0, group(c -> c)));
        arms.add(new Arm("cap 5", 5, group(c -> c.withDelegationEnabled(true))));
        arms.add(new Arm("cap 6", 6, group(c -> c.withDelegation(true, 6, RaftConfig.DEFAULT_FOLLOWER_LAG_THRESHOLD,
                RaftConfig.DEFAULT_REASSIGNMENT_TICKS, RaftConfig.DEFAULT_REVOCATION_COOLDOWN_TICKS))));
        List<Fallback> fallbacks = new ArrayList<>();
        List<Arm> extra = new ArrayList<>();
        try {
            for (Arm arm : arms) {
                arm.group.awaitListenersCaughtUp();
                arm.leader = arm.group.awaitLeader().status().memberId();
                if (arm.cap > 0) {
                    delegate(arm);
                }
                System.out.printf("%s: leader %s, %s%n", arm.name, arm.leader, arm.delegations.isEmpty()
                        ? "every listener fed by the leader" : "delegations " + describe(arm));
            }
            for (Arm arm : arms) { // warm-up
                for (int mode : MODES) {
                    arm.group.drive(mode, round);
                }
            }
            for (int i = 0; i < rounds; i++) {
                System.out.printf("round %d%n", i + 1);
                for (int mode : MODES) {
                    for (int k = 0; k < arms.size(); k++) {
                        Arm arm = arms.get((i + k) % arms.size());
                        Sample s = sample(arm, mode, round);
                        arm.samples(mode).add(s);
                        System.out.printf(Locale.ROOT, "  %-6s %2d in flight: %s; latency p50 %.2f p99 %.2f ms;"
                                + " listener lag %s%n", arm.name, mode, s.egress(), s.latencyP50(), s.latencyP99(),
                                s.all());
                    }
                }
            }
            details(arms);
            arms.get(0).group.close(); // the direct group is done: its heartbeats off the CPU
            for (Arm arm : arms.subList(1, arms.size())) {
                fallbacks.add(fallback(arm, IN_FLIGHT, Duration.ZERO, round.multipliedBy(3)));
                arm.group.close();
            }
            // Light load: the delegate's lag never reaches the threshold before the leader stops hearing it.
            Arm light = new Arm("cap 5", 5, group(c -> c.withDelegationEnabled(true)));
            extra.add(light);
            light.group.awaitListenersCaughtUp();
            light.leader = light.group.awaitLeader().status().memberId();
            delegate(light);
            System.out.printf("%n%s (a fresh group): leader %s, delegations %s%n", light.name, light.leader,
                    describe(light));
            fallbacks.add(fallback(light, 1, LIGHT_PACE, round.multipliedBy(3)));
        } finally {
            arms.forEach(a -> a.group.close());
            extra.forEach(a -> a.group.close());
        }

        List<Line> table = table(arms, fallbacks);
        System.out.println();
        System.out.printf(Locale.ROOT, "| P7, %d voters + %d listeners, TCP loopback (%s), %d rounds of %.1f s | numerator |"
                + " denominator | ratio [per-round min–max] | goal | |%n", VOTERS, LISTENERS, machine, rounds, seconds);
        System.out.println("| --- | --- | --- | --- | --- | --- |");
        for (Line r : table) {
            System.out.println(r.markdown());
        }
        double elapsed = (System.nanoTime() - started) / 1e9;
        Path json = Path.of(out);
        if (json.getParent() != null) {
            Files.createDirectories(json.getParent());
        }
        Files.writeString(json, json(table, machine, rounds, seconds, elapsed), StandardCharsets.UTF_8);
        System.out.printf(Locale.ROOT, "%nwritten to %s; %.0f s in all; load average at the end %.2f%n",
                json.toAbsolutePath(), elapsed, ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage());
        System.exit(0);
    }

    private static RaftGroup group(UnaryOperator<RaftConfig> tune) {
        return RaftGroup.tcp(VOTERS, LISTENERS, 1, m -> new MemoryRaftStorage(), tune, RaftServer.Options.defaults());
    }

    /**
     * Assigns listeners to the two followers, {@code cap} each in order (l1.. to the first, the next to the
     * second; the rest stay with the leader), and waits until the leader and both followers act on it.
     */
    private static void delegate(Arm arm) {
        RaftServer leader = arm.group.server(arm.leader);
        List<String> followers = arm.group.voters.stream().filter(v -> !v.equals(arm.leader)).sorted().toList();
        RaftConfigurationProto.Builder conf = RaftGroup.configuration(arm.group.voters, arm.group.listeners).toBuilder();
        for (int i = 0; i < arm.group.listeners.size(); i++) {
            int f = i / arm.cap;
            if (f < followers.size()) {
                String l = arm.group.listeners.get(i);
                arm.delegations.put(l, followers.get(f));
                conf.addDelegations(ListenerDelegationProto.newBuilder().setListener(l).setFollower(followers.get(f)));
            }
        }
        leader.setConfiguration(conf.build()).block(Duration.ofSeconds(10));
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (!actingOn(arm)) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException(arm.name + ": the delegations are not in force after 10 s: leader "
                        + leader.status().listenerSources() + "; followers " + followers.stream()
                        .map(f -> f + " feeds " + arm.group.server(f).status().feeding()).toList());
            }
            RaftGroup.sleep(10);
        }
    }

    /** Whether the leader's sources and the followers' feeding lists are the assignment. */
    private static boolean actingOn(Arm arm) {
        RaftStatus leader = arm.group.server(arm.leader).status();
        for (RaftStatus.ListenerSource s : leader.listenerSources()) {
            if (!s.source().equals(arm.delegations.getOrDefault(s.listener(), arm.leader))) {
                return false;
            }
        }
        for (String f : arm.group.voters) {
            if (!f.equals(arm.leader) && !List.copyOf(arm.group.server(f).status().feeding()).stream().sorted().toList()
                    .equals(arm.delegatedTo(f).stream().sorted().toList())) {
                return false;
            }
        }
        return leader.listenerSources().size() == LISTENERS;
    }

    private static String describe(Arm arm) {
        Map<String, List<String>> by = new TreeMap<>();
        arm.group.listeners.forEach(l -> by.computeIfAbsent(arm.delegations.getOrDefault(l, arm.leader + " (leader)"),
                k -> new ArrayList<>()).add(l));
        return by.entrySet().stream().map(e -> e.getKey() + " feeds " + e.getValue()).collect(Collectors.joining("; "));
    }

    /** An egress round on {@code arm}, then the listeners' lag for what it committed. */
    private static Sample sample(Arm arm, int inFlight, Duration length) {
        RaftGroup g = arm.group;
        Map<String, Long> before = followerBytesToListeners(arm);
        Map<String, Map<String, Long>> snapshots0 = snapshotsSent(g);
        Map<String, Long> revocations0 = revocations(arm);
        int delegatedAtStart = inForce(arm).size();
        Egress e = g.egress(inFlight, length);
        int delegatedAtEnd = inForce(arm).size();
        if (!g.awaitApplied(e.commit1(), g.listeners, Duration.ofSeconds(30))) {
            System.out.println("  (" + arm.name + ": listeners still behind " + e.commit1() + " after 30 s)");
        }
        String snapshots = since(snapshots0, snapshotsSent(g));
        if (!snapshots.equals("none")) {
            System.out.println("  (" + arm.name + ": InstallSnapshot requests sent in the round: " + snapshots + ")");
        }
        Map<String, Long> after = followerBytesToListeners(arm);
        after.replaceAll((f, b) -> b - before.getOrDefault(f, 0L));
        RaftGroup.Counter leader = g.machine(arm.leader);
        List<String> delegated = g.listeners.stream().filter(arm.delegations::containsKey).toList();
        List<String> direct = g.listeners.stream().filter(l -> !arm.delegations.containsKey(l)).toList();
        List<String> revoked = new ArrayList<>();
        for (RaftStatus.ListenerSource x : g.server(arm.leader).status().listenerSources()) {
            if (x.revocations() > revocations0.getOrDefault(x.listener(), 0L)) {
                revoked.add(x.listener() + " at tick " + x.revokedAtTick() + ": " + x.revocationReason());
            }
        }
        if (!revoked.isEmpty() || delegatedAtStart < arm.delegations.size()) {
            System.out.println("  (" + arm.name + ": " + delegatedAtStart + " of " + arm.delegations.size()
                    + " delegations in force at the start of the round, " + delegatedAtEnd + " at its end"
                    + (revoked.isEmpty() ? "" : "; revoked in it: " + revoked) + ")");
        }
        return new Sample(e, lags(g, leader, g.listeners, e.commit0(), e.commit1()),
                lags(g, leader, delegated, e.commit0(), e.commit1()), lags(g, leader, direct, e.commit0(), e.commit1()),
                after, delegatedAtStart, delegatedAtEnd, revoked);
    }

    /** The leader's revocations so far, by listener. */
    private static Map<String, Long> revocations(Arm arm) {
        Map<String, Long> out = new TreeMap<>();
        arm.group.server(arm.leader).status().listenerSources().forEach(x -> out.put(x.listener(), x.revocations()));
        return out;
    }

    /** The listeners a follower feeds now, as the leader sees it (assigned and not revoked). */
    private static List<String> inForce(Arm arm) {
        return arm.group.server(arm.leader).status().listenerSources().stream()
                .filter(x -> !x.assignedFollower().isEmpty() && !x.revoked() && x.source().equals(x.assignedFollower()))
                .map(RaftStatus.ListenerSource::listener).toList();
    }

    /** A follower all of whose listeners it feeds now (the first in order), waited for; null if none in time. */
    private static @Nullable String delegateInForce(Arm arm, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            List<String> now = inForce(arm);
            for (String f : arm.delegations.values().stream().distinct().sorted().toList()) {
                if (now.containsAll(arm.delegatedTo(f))) {
                    return f;
                }
            }
            if (System.nanoTime() >= deadline) {
                return null;
            }
            RaftGroup.sleep(50);
        }
    }

    /** What each follower sent to the listeners, in bytes. */
    private static Map<String, Long> followerBytesToListeners(Arm arm) {
        Map<String, Long> out = new TreeMap<>();
        for (String v : arm.group.voters) {
            if (!v.equals(arm.leader)) {
                RaftTransportMetrics m = arm.group.transportMetrics(v);
                out.put(v, arm.group.listeners.stream().mapToLong(m::bytesSent).sum());
            }
        }
        return out;
    }

    /**
     * For each command in {@code (from, to]} the leader applied and each of {@code listeners}: when the
     * listener applied it less when the leader did.
     */
    private static Lags lags(RaftGroup g, RaftGroup.Counter leader, List<String> listeners, long from, long to) {
        long[] values = new long[1024];
        int n = 0;
        long missing = 0;
        long bySnapshot = 0;
        for (long i = from + 1; i <= to; i++) {
            long at = leader.appliedAt(i);
            if (at == 0) {
                continue; // not a command (the leader's no-op, a configuration)
            }
            for (String l : listeners) {
                RaftGroup.Counter c = g.machine(l);
                long there = c.appliedAt(i);
                if (there != 0) {
                    if (n == values.length) {
                        values = Arrays.copyOf(values, n * 2);
                    }
                    values[n++] = there - at;
                } else if (i <= c.restoredTo()) {
                    bySnapshot++;
                } else {
                    missing++;
                }
            }
        }
        return Lags.of(values, n, missing, bySnapshot);
    }

    /** What a fallback run found. */
    record Fallback(String arm, String load, String note, String victim, List<String> affected, long ticksToRevoke, double millisToRevoke,
            List<String> reasons, Lags outage, Lags afterRevocation, Lags others, long committed,
            Map<String, Long> appliedAsEntries, Map<String, Long> bySnapshot, long missing, boolean countsEqual,
            String round) {
    }

    /**
     * Drives {@code arm} for {@code length} with {@code inFlight} in flight (one every {@code pace} at most
     * unless zero); after a third of it, closes the first follower's server; watches the leader until it
     * revokes that follower's listeners; then checks that every listener applied every command.
     */
    private static Fallback fallback(Arm arm, int inFlight, Duration pace, Duration length) {
        String load = pace.isZero() ? inFlight + " in flight"
                : String.format(Locale.ROOT, "%d in flight, at most %.0f/s", inFlight, 1e9 / pace.toNanos());
        RaftGroup g = arm.group;
        RaftServer leader = g.server(arm.leader);
        // a follower the leader has not revoked (a revocation lasts revocationCooldownTicks, 15 s by default)
        if (delegateInForce(arm, Duration.ofSeconds(25)) == null) {
            System.out.println("  (" + arm.name + ": no follower has all its delegations in force after 25 s: only "
                    + inForce(arm) + ")");
        }
        g.awaitApplied(leader.status().commitIndex(), g.members(), Duration.ofSeconds(30));
        long c0 = leader.status().commitIndex();
        Map<String, Map<String, Long>> snapshots0 = snapshotsSent(g);
        AtomicReference<RaftGroup.@Nullable Round> driven = new AtomicReference<>();
        Thread driver = new Thread(() -> driven.set(g.drive(inFlight, length, pace)), "fallback-driver");
        driver.start();
        RaftGroup.sleep(length.toMillis() / 3);
        // the victim: the first follower still feeding all its listeners now (a healthy one may have been
        // revoked meanwhile, on a stall); none: the run is marked invalid
        String chosen = delegateInForce(arm, Duration.ZERO);
        String victim = chosen != null ? chosen : arm.delegations.values().stream().sorted().findFirst().orElseThrow();
        List<String> affected = arm.delegatedTo(victim);
        List<String> others = g.listeners.stream().filter(l -> !affected.contains(l)).toList();
        long ticksAtFailure = leader.status().ticks();
        long commitAtFailure = leader.status().commitIndex();
        String note = chosen != null ? "" : "INVALID: no delegate fed all its listeners at the failure";
        if (chosen == null) {
            System.out.println("  (" + arm.name + ": " + note + "; revoked: " + leader.status().listenerSources()
                    .stream().filter(RaftStatus.ListenerSource::revoked)
                    .map(x -> x.listener() + " at tick " + x.revokedAtTick() + ": " + x.revocationReason()).toList()
                    + ")");
        }
        List<String> earlier = leader.status().listenerSources().stream().filter(RaftStatus.ListenerSource::revoked)
                .map(x -> x.listener() + " at tick " + x.revokedAtTick() + ": " + x.revocationReason()).toList();
        if (chosen != null && !earlier.isEmpty()) {
            System.out.println("  (" + arm.name + ": before the failure the leader had revoked " + earlier + ")");
        }
        long failedAt = System.nanoTime();
        g.server(victim).close();
        long revokedTick = -1;
        long commitAtRevocation = -1;
        double millis = Double.NaN;
        List<String> reasons = List.of();
        while (driver.isAlive() || revokedTick < 0) {
            RaftStatus s = leader.status();
            List<RaftStatus.ListenerSource> mine = s.listenerSources().stream()
                    .filter(x -> affected.contains(x.listener())).toList();
            if (revokedTick < 0 && mine.size() == affected.size() && mine.stream()
                    .allMatch(x -> x.revoked() && x.source().equals(arm.leader))) {
                millis = (System.nanoTime() - failedAt) / 1e6;
                revokedTick = mine.stream().mapToLong(RaftStatus.ListenerSource::revokedAtTick).max().orElse(-1);
                commitAtRevocation = s.commitIndex();
                reasons = mine.stream().map(RaftStatus.ListenerSource::revocationReason).distinct().toList();
            }
            if (!driver.isAlive() && revokedTick < 0 && (System.nanoTime() - failedAt) > Duration.ofSeconds(30).toNanos()) {
                break; // never revoked
            }
            RaftGroup.sleep(2);
        }
        joinQuietly(driver);
        long c1 = leader.status().commitIndex();
        List<String> live = g.members().stream().filter(m -> !m.equals(victim)).toList();
        if (!g.awaitApplied(c1, live, Duration.ofSeconds(30))) {
            System.out.println("  (" + arm.name + ": members still behind " + c1 + " 30 s after the fallback run)");
        }
        RaftGroup.Counter lc = g.machine(arm.leader);
        long revokeAt = commitAtRevocation < 0 ? c1 : commitAtRevocation;
        Lags outage = lags(g, lc, affected, commitAtFailure, revokeAt);
        Lags afterRevocation = lags(g, lc, affected, revokeAt, c1);
        Lags rest = lags(g, lc, others, commitAtFailure, c1);
        long committed = 0;
        for (long i = c0 + 1; i <= c1; i++) {
            if (lc.appliedAt(i) != 0) {
                committed++;
            }
        }
        Map<String, Long> asEntries = new TreeMap<>();
        Map<String, Long> bySnapshot = new TreeMap<>();
        long missing = 0;
        for (String l : g.listeners) {
            RaftGroup.Counter c = g.machine(l);
            long entries = 0;
            long snap = 0;
            for (long i = c0 + 1; i <= c1; i++) {
                if (lc.appliedAt(i) == 0) {
                    continue;
                }
                if (c.appliedAt(i) != 0) {
                    entries++;
                } else if (i <= c.restoredTo()) {
                    snap++;
                } else {
                    missing++;
                }
            }
            asEntries.put(l, entries);
            bySnapshot.put(l, snap);
        }
        long leaderApplied = lc.applied();
        boolean equal = live.stream().allMatch(m -> g.machine(m).applied() == leaderApplied);
        RaftGroup.Round r = driven.get();
        Fallback f = new Fallback(arm.name, load, note, victim, affected, revokedTick < 0 ? -1 : revokedTick - ticksAtFailure,
                millis, reasons, outage, afterRevocation, rest, committed, asEntries, bySnapshot, missing,
                equal && missing == 0, r == null ? "(no round)" : r.toString());
        System.out.printf(Locale.ROOT, "%nfallback on %s, %s: %s closed at leader tick %d (commit %d); %s%n", arm.name,
                load, victim, ticksAtFailure, commitAtFailure, revokedTick < 0 ? "NEVER REVOKED"
                        : String.format(Locale.ROOT, "its listeners %s revoked at tick %d, %d ticks / %.0f ms later "
                                + "(commit %d): %s", affected, revokedTick, f.ticksToRevoke(), millis,
                                commitAtRevocation, reasons));
        System.out.println("  driven meanwhile: " + f.round());
        System.out.println("  lag of " + affected + ", committed between the failure and the revocation: " + outage);
        System.out.println("  lag of " + affected + ", committed after the revocation: " + afterRevocation);
        System.out.println("  lag of the other listeners " + others + " from the failure on: " + rest);
        System.out.printf(Locale.ROOT, "  %d commands committed in the run; applied as entries by each listener %s;"
                + " covered by a snapshot %s; missing %d; applied counts of every live member equal the leader's"
                + " (%d): %s%n", committed, asEntries, bySnapshot, missing, leaderApplied, equal);
        System.out.println("  InstallSnapshot requests sent during the run (sender → addressee: requests): "
                + since(snapshots0, snapshotsSent(g)) + "; snapshots the listeners restored since the group started: " + g.listeners.stream()
                .filter(l -> g.machine(l).restores() > 0).map(l -> l + " " + g.machine(l).restores() + " (up to "
                        + g.machine(l).restoredTo() + ")").toList());
        return f;
    }

    /** Per member, the InstallSnapshot requests it sent so far, by addressee. */
    private static Map<String, Map<String, Long>> snapshotsSent(RaftGroup g) {
        Map<String, Map<String, Long>> out = new TreeMap<>();
        g.breakdowns.forEach((m, b) -> out.put(m, b.snapshotsTo()));
        return out;
    }

    /** The requests sent between two {@link #snapshotsSent} readings, as "from→to n", or "none". */
    private static String since(Map<String, Map<String, Long>> before, Map<String, Map<String, Long>> after) {
        List<String> out = new ArrayList<>();
        after.forEach((from, tos) -> tos.forEach((to, n) -> {
            long d = n - before.getOrDefault(from, Map.of()).getOrDefault(to, 0L);
            if (d > 0) {
                out.add(from + "→" + to + " " + d);
            }
        }));
        return out.isEmpty() ? "none" : String.join(", ", out);
    }

    private static void joinQuietly(Thread t) {
        try {
            t.join();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** Per group and load: where the leader's bytes went, and the followers' share. */
    private static void details(List<Arm> arms) {
        System.out.printf("%n| group, load: min / median / max of the rounds | leader B/entry | to voters | to listeners"
                + " | of which entries | empty appends | followers → listeners B/entry | commits/s | lag p50 ms "
                + "(delegated / by leader) | lag p99 ms (delegated / by leader) |%n");
        System.out.println("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |");
        for (int mode : MODES) {
            for (Arm arm : arms) {
                List<Sample> s = arm.samples(mode);
                String lag50 = lagSpread(arm, s, Lags::p50);
                String lag99 = lagSpread(arm, s, Lags::p99);
                System.out.printf("| %s, %d in flight | %s | %s | %s | %s | %s | %s | %s | %s | %s |%n", arm.name, mode,
                        spread(s, x -> x.egress().perEntry(), "%.0f"),
                        spread(s, x -> x.egress().perEntryToVoters(), "%.0f"),
                        spread(s, x -> x.egress().perEntryToListeners(), "%.0f"),
                        spread(s, x -> x.egress().part(b -> b.entryBytes), "%.0f"),
                        spread(s, x -> x.egress().part(b -> b.emptyAppendBytes), "%.0f"),
                        spread(s, x -> x.followerBytesToListeners().values().stream().mapToLong(Long::longValue).sum()
                                / (double) x.egress().entries(), "%.0f"),
                        spread(s, x -> x.egress().perSecond(), "%.0f"), lag50, lag99);
            }
        }
    }

    /** "delegated a / b / c; by leader d / e / f", each part only if some listener is fed that way. */
    private static String lagSpread(Arm arm, List<Sample> s, ToDoubleFunction<Lags> f) {
        List<String> parts = new ArrayList<>();
        if (!arm.delegations.isEmpty()) {
            parts.add("delegated " + spread(s, x -> f.applyAsDouble(x.delegated()), "%.2f"));
        }
        if (arm.delegations.size() < LISTENERS) {
            parts.add("by leader " + spread(s, x -> f.applyAsDouble(x.byLeader()), "%.2f"));
        }
        return String.join("; ", parts);
    }

    /** One line of the ratio table. */
    record Line(String measure, String unit, double numerator, double denominator, double ratio, double ratioMin,
            double ratioMax, String goal, @Nullable Boolean met) {
        String verdict() {
            return met == null ? "—" : met ? "met" : "missed";
        }

        String markdown() {
            String num = Double.isNaN(numerator) ? "—" : fmt(numerator) + " " + unit;
            String den = Double.isNaN(denominator) ? "—" : fmt(denominator) + " " + unit;
            String ratios = Double.isNaN(ratio) ? "—" : String.format(Locale.ROOT, "%.3f", ratio)
                    + (Double.isNaN(ratioMin) ? "" : String.format(Locale.ROOT, " [%.3f–%.3f]", ratioMin, ratioMax));
            return "| " + measure + " | " + num.strip() + " | " + den.strip() + " | " + ratios + " | " + goal + " | "
                    + verdict() + " |";
        }

        private static String fmt(double v) {
            return Math.abs(v) >= 100 || v == Math.rint(v) ? String.format(Locale.ROOT, "%.0f", v)
                    : String.format(Locale.ROOT, "%.2f", v);
        }
    }

    private static double median(List<Sample> s, ToDoubleFunction<Sample> f) {
        double[] v = s.stream().mapToDouble(f).sorted().toArray();
        return v[v.length / 2];
    }

    /** A delegated ÷ direct row: medians of the rounds, and the spread of the per-round ratios. */
    private static Line ratio(String measure, String unit, List<Sample> num, List<Sample> den, ToDoubleFunction<Sample> f,
            double goal, boolean hasGoal) {
        double n = median(num, f);
        double d = median(den, f);
        double[] per = new double[Math.min(num.size(), den.size())];
        for (int i = 0; i < per.length; i++) {
            per[i] = f.applyAsDouble(num.get(i)) / f.applyAsDouble(den.get(i));
        }
        Arrays.sort(per);
        double r = n / d;
        return new Line(measure, unit, n, d, r, per[0], per[per.length - 1],
                hasGoal ? String.format(Locale.ROOT, "≤ %.2f", goal) : "—", hasGoal ? r <= goal : null);
    }

    private static Line value(String measure, String unit, double v, String goal, @Nullable Boolean met) {
        return new Line(measure, unit, v, Double.NaN, Double.NaN, Double.NaN, Double.NaN, goal, met);
    }

    private static List<Line> table(List<Arm> arms, List<Fallback> fallbacks) {
        Arm direct = arms.get(0);
        List<Line> rows = new ArrayList<>();
        for (int mode : List.of(IN_FLIGHT, 1)) {
            String load = mode + " in flight";
            for (Arm arm : arms.subList(1, arms.size())) {
                List<Sample> num = arm.samples(mode);
                List<Sample> den = direct.samples(mode);
                // the rounds in which the leader fed no delegated listener itself: each delegation in force
                // at the start and the end, none revoked in between (a revocation lasts 15 s: a round with one
                // measures mostly direct feeding); paired with direct's rounds of the same number
                List<Sample> cleanNum = new ArrayList<>();
                List<Sample> cleanDen = new ArrayList<>();
                for (int i = 0; i < Math.min(num.size(), den.size()); i++) {
                    Sample x = num.get(i);
                    if (x.delegatedAtStart() == arm.delegations.size() && x.delegatedAtEnd() == arm.delegations.size()
                            && x.revocations().isEmpty()) {
                        cleanNum.add(x);
                        cleanDen.add(den.get(i));
                    }
                }
                boolean anyClean = !cleanNum.isEmpty();
                List<Sample> n = anyClean ? cleanNum : num;
                List<Sample> d = anyClean ? cleanDen : den;
                String rounds = anyClean ? " (" + cleanNum.size() + " of " + num.size() + " rounds: every delegation in"
                        + " force)" : " (all " + num.size() + " rounds: none had every delegation in force)";
                String all = " (all " + num.size() + " rounds)";
                String vs = arm.name + " ÷ direct, " + load;
                rows.add(ratio("leader egress B per committed entry, " + vs + rounds, "B", n, d,
                        x -> x.egress().perEntry(), EGRESS_GOAL, true));
                if (anyClean && cleanNum.size() < num.size()) {
                    rows.add(ratio("leader egress B per committed entry, " + vs + all, "B", num, den,
                            x -> x.egress().perEntry(), EGRESS_GOAL, true));
                }
                rows.add(ratio("commit latency p50, " + vs + rounds, "ms", n, d, Sample::latencyP50, LATENCY_GOAL, true));
                rows.add(ratio("commit latency p99, " + vs + rounds, "ms", n, d, Sample::latencyP99, LATENCY_GOAL, true));
                rows.add(ratio("listener lag p50 (leader applied → listener applied), " + vs + rounds, "ms", n, d,
                        x -> x.all().p50(), 0, false));
                rows.add(ratio("listener lag p99, " + vs + rounds, "ms", n, d, x -> x.all().p99(), 0, false));
            }
        }
        for (Arm arm : arms.subList(1, arms.size())) {
            List<Sample> all = arm.samples.values().stream().flatMap(List::stream).toList();
            long revoked = all.stream().mapToLong(x -> x.revocations().size()).sum();
            long short_ = all.stream().filter(x -> x.delegatedAtStart() < arm.delegations.size()).count();
            rows.add(value("revocations by the leader in the " + all.size() + " measured rounds of " + arm.name
                    + " (no member failed; " + short_ + " rounds began with a delegation revoked)", "", revoked, "= 0",
                    revoked == 0));
        }
        for (Fallback f : fallbacks) {
            String who = "fallback, " + f.arm() + ", " + f.load() + ", " + f.victim() + " closed"
                    + (f.note().isEmpty() ? "" : " (" + f.note() + ")") + ": ";
            String why = f.reasons().isEmpty() ? "never revoked" : f.reasons().stream().allMatch(r -> r.contains("lags"))
                    ? "revoked on the delegate's lag" : f.reasons().stream().allMatch(r -> r.contains("not heard"))
                    ? "revoked as the delegate was not heard" : "revoked: " + String.join("; ", f.reasons());
            rows.add(value(who + "ticks from the failure to the revocation of " + f.affected() + " (" + why + ")",
                    "ticks", f.ticksToRevoke(), "—", null));
            rows.add(value(who + "… in ms", "ms", f.millisToRevoke(), "—", null));
            rows.add(value(who + "lag p50 of its listeners, committed failure → revocation", "ms", f.outage().p50(), "—",
                    null));
            rows.add(value(who + "lag p99 of its listeners, committed failure → revocation", "ms", f.outage().p99(), "—",
                    null));
            rows.add(value(who + "lag max of its listeners, committed failure → revocation", "ms", f.outage().max(), "—",
                    null));
            rows.add(value(who + "lag p99 of its listeners, committed after the revocation", "ms",
                    f.afterRevocation().p99(), "—", null));
            long minApplied = f.appliedAsEntries().entrySet().stream()
                    .mapToLong(e -> e.getValue() + f.bySnapshot().getOrDefault(e.getKey(), 0L)).min().orElse(0);
            rows.add(new Line(who + "commands applied by the listener that applied fewest (entries + snapshot)"
                    + " ÷ committed", "", minApplied, f.committed(), minApplied / (double) f.committed(), Double.NaN,
                    Double.NaN, "= 1", f.countsEqual() && minApplied == f.committed()));
        }
        return rows;
    }

    private static String json(List<Line> rows, String machine, int rounds, double seconds, double elapsed) {
        StringBuilder b = new StringBuilder();
        b.append("{\n  \"bench\": \"DelegationBench\",\n  \"issue\": \"13 P7\",\n");
        b.append("  \"machine\": ").append(quote(machine)).append(",\n");
        b.append(String.format(Locale.ROOT, "  \"voters\": %d,\n  \"listeners\": %d,\n  \"transport\": \"tcp-loopback\",\n"
                + "  \"rounds\": %d,\n  \"secondsPerRound\": %.2f,\n  \"elapsedSeconds\": %.1f,\n", VOTERS, LISTENERS,
                rounds, seconds, elapsed));
        b.append("  \"rows\": [\n");
        for (int i = 0; i < rows.size(); i++) {
            Line r = rows.get(i);
            b.append("    {\"measure\": ").append(quote(r.measure())).append(", \"unit\": ").append(quote(r.unit()))
                    .append(", \"numerator\": ").append(number(r.numerator()))
                    .append(", \"denominator\": ").append(number(r.denominator()))
                    .append(", \"ratio\": ").append(number(r.ratio()))
                    .append(", \"ratioMin\": ").append(number(r.ratioMin()))
                    .append(", \"ratioMax\": ").append(number(r.ratioMax()))
                    .append(", \"goal\": ").append(quote(r.goal()))
                    .append(", \"verdict\": ").append(quote(r.verdict())).append('}')
                    .append(i + 1 < rows.size() ? ",\n" : "\n");
        }
        b.append("  ]\n}\n");
        return b.toString();
    }

    private static String number(double v) {
        return Double.isNaN(v) || Double.isInfinite(v) ? "null" : String.format(Locale.ROOT, "%.4f", v);
    }

    private static String quote(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            switch (c) {
                case '"' -> b.append("\\\"");
                case '\\' -> b.append("\\\\");
                case '\n' -> b.append("\\n");
                default -> {
                    if (c < 0x20) {
                        b.append(String.format(Locale.ROOT, "\\u%04x", (int) c));
                    } else {
                        b.append(c);
                    }
                }
            }
        }
        return b.append('"').toString();
    }
}
