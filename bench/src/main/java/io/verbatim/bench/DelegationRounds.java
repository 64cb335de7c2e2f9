package io.verbatim.bench;

import static io.verbatim.bench.DelegationArm.followerBytesToListeners;
import static io.verbatim.bench.DelegationArm.inForce;
import static io.verbatim.bench.DelegationArm.revocations;

import io.verbatim.bench.RaftGroup.Egress;
import io.verbatim.metadatalog.raft.RaftStatus;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * One measured round on a {@link DelegationArm}: the leader's egress and commit latency, then each
 * listener's lag (leader applied → listener applied) for what the round committed; and the InstallSnapshot
 * requests sent meanwhile.
 */
final class DelegationRounds {
    private DelegationRounds() {
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

    /** An egress round on {@code arm}, then the listeners' lag for what it committed. */
    static Sample sample(DelegationArm arm, int inFlight, Duration length) {
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

    /**
     * For each command in {@code (from, to]} the leader applied and each of {@code listeners}: when the
     * listener applied it less when the leader did.
     */
    static Lags lags(RaftGroup g, RaftGroup.Counter leader, List<String> listeners, long from, long to) {
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

    /** Per member, the InstallSnapshot requests it sent so far, by addressee. */
    static Map<String, Map<String, Long>> snapshotsSent(RaftGroup g) {
        Map<String, Map<String, Long>> out = new TreeMap<>();
        g.breakdowns.forEach((m, b) -> out.put(m, b.snapshotsTo()));
        return out;
    }

    /** The requests sent between two {@link #snapshotsSent} readings, as "from→to n", or "none". */
    static String since(Map<String, Map<String, Long>> before, Map<String, Map<String, Long>> after) {
        List<String> out = new ArrayList<>();
        after.forEach((from, tos) -> tos.forEach((to, n) -> {
            long d = n - before.getOrDefault(from, Map.of()).getOrDefault(to, 0L);
            if (d > 0) {
                out.add(from + "→" + to + " " + d);
            }
        }));
        return out.isEmpty() ? "none" : String.join(", ", out);
    }
}
