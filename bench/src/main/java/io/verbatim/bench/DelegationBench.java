package io.verbatim.bench;

import static io.verbatim.bench.DelegationArm.delegate;
import static io.verbatim.bench.DelegationArm.describe;
import static io.verbatim.bench.DelegationArm.group;
import static io.verbatim.bench.DelegationRounds.sample;

import io.verbatim.bench.DelegationReport.Line;
import io.verbatim.bench.DelegationRounds.Sample;
import io.verbatim.metadatalog.raft.RaftConfig;
import io.verbatim.metadatalog.server.RaftServer;
import io.verbatim.metadatalog.transport.NettyRaftTransport;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;


/**
 * Listener delegation's figures (issue 13, P7), measured on loopback TCP ({@link NettyRaftTransport}, one
 * event-loop thread per member; in-memory storage; {@link RaftConfig#defaults} and
 * {@link RaftServer.Builder}'s defaults otherwise: 50 ms ticks, a heartbeat every tick, 10 election ticks),
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
final class DelegationBench {
    static final int VOTERS = 3;
    static final int LISTENERS = 12;
    static final int IN_FLIGHT = 32;
    static final double EGRESS_GOAL = 0.20;
    static final double LATENCY_GOAL = 1.1;
    static final List<Integer> MODES = List.of(1, IN_FLIGHT);
    /** The light load of the last fallback run: one command every 20 ms. */
    static final Duration LIGHT_PACE = Duration.ofMillis(20);

    private DelegationBench() {
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
        List<DelegationArm> arms = new ArrayList<>();
        try {
            arms.add(new DelegationArm("direct", 0, group(c -> c)));
            arms.add(new DelegationArm("cap 5", 5, group(c -> c.withDelegationEnabled(true))));
            for (DelegationArm arm : arms) {
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
                DelegationArm cap5 = arms.get(1);
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

        List<DelegationArm> arms = new ArrayList<>();
        arms.add(new DelegationArm("direct", 0, group(c -> c)));
        arms.add(new DelegationArm("cap 5", 5, group(c -> c.withDelegationEnabled(true))));
        arms.add(new DelegationArm("cap 6", 6, group(c -> c.withDelegationEnabled(true)
                .withMaxListenersPerFollower(6))));
        List<DelegationFallback> fallbacks = new ArrayList<>();
        List<DelegationArm> extra = new ArrayList<>();
        try {
            for (DelegationArm arm : arms) {
                arm.group.awaitListenersCaughtUp();
                arm.leader = arm.group.awaitLeader().status().memberId();
                if (arm.cap > 0) {
                    delegate(arm);
                }
                System.out.printf("%s: leader %s, %s%n", arm.name, arm.leader, arm.delegations.isEmpty()
                        ? "every listener fed by the leader" : "delegations " + describe(arm));
            }
            for (DelegationArm arm : arms) { // warm-up
                for (int mode : MODES) {
                    arm.group.drive(mode, round);
                }
            }
            for (int i = 0; i < rounds; i++) {
                System.out.printf("round %d%n", i + 1);
                for (int mode : MODES) {
                    for (int k = 0; k < arms.size(); k++) {
                        DelegationArm arm = arms.get((i + k) % arms.size());
                        Sample s = sample(arm, mode, round);
                        arm.samples(mode).add(s);
                        System.out.printf(Locale.ROOT, "  %-6s %2d in flight: %s; latency p50 %.2f p99 %.2f ms;"
                                + " listener lag %s%n", arm.name, mode, s.egress(), s.latencyP50(), s.latencyP99(),
                                s.all());
                    }
                }
            }
            DelegationReport.details(arms);
            arms.get(0).group.close(); // the direct group is done: its heartbeats off the CPU
            for (DelegationArm arm : arms.subList(1, arms.size())) {
                fallbacks.add(DelegationFallback.run(arm, IN_FLIGHT, Duration.ZERO, round.multipliedBy(3)));
                arm.group.close();
            }
            // Light load: the delegate's lag never reaches the threshold before the leader stops hearing it.
            DelegationArm light = new DelegationArm("cap 5", 5, group(c -> c.withDelegationEnabled(true)));
            extra.add(light);
            light.group.awaitListenersCaughtUp();
            light.leader = light.group.awaitLeader().status().memberId();
            delegate(light);
            System.out.printf("%n%s (a fresh group): leader %s, delegations %s%n", light.name, light.leader,
                    describe(light));
            fallbacks.add(DelegationFallback.run(light, 1, LIGHT_PACE, round.multipliedBy(3)));
        } finally {
            arms.forEach(a -> a.group.close());
            extra.forEach(a -> a.group.close());
        }

        List<Line> table = DelegationReport.table(arms, fallbacks);
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
        Files.writeString(json, DelegationReport.json(table, machine, rounds, seconds, elapsed),
                StandardCharsets.UTF_8);
        System.out.printf(Locale.ROOT, "%nwritten to %s; %.0f s in all; load average at the end %.2f%n",
                json.toAbsolutePath(), elapsed, ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage());
        System.exit(0);
    }
}
