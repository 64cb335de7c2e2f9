package io.verbatim.bench;

import static io.verbatim.bench.DelegationArm.delegateInForce;
import static io.verbatim.bench.DelegationArm.inForce;
import static io.verbatim.bench.DelegationRounds.lags;
import static io.verbatim.bench.DelegationRounds.since;
import static io.verbatim.bench.DelegationRounds.snapshotsSent;

import io.verbatim.bench.DelegationRounds.Lags;
import io.verbatim.metadatalog.raft.RaftStatus;
import io.verbatim.metadatalog.server.RaftServer;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicReference;
import org.jspecify.annotations.Nullable;

/**
 * What a fallback run found; the run: a delegate follower's server closed under load, the leader watched
 * until it revokes that follower's listeners, every listener checked for every committed command.
 */
record DelegationFallback(String arm, String load, String note, String victim, List<String> affected,
        long ticksToRevoke, double millisToRevoke, List<String> reasons, Lags outage, Lags afterRevocation, Lags others,
        long committed, Map<String, Long> appliedAsEntries, Map<String, Long> bySnapshot, long missing,
        boolean countsEqual, String round) {
    /**
     * Drives {@code arm} for {@code length} with {@code inFlight} in flight (one every {@code pace} at most
     * unless zero); after a third of it, closes the first follower's server; watches the leader until it
     * revokes that follower's listeners; then checks that every listener applied every command.
     */
    static DelegationFallback run(DelegationArm arm, int inFlight, Duration pace, Duration length) {
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
        DelegationFallback f = new DelegationFallback(arm.name, load, note, victim, affected,
                revokedTick < 0 ? -1 : revokedTick - ticksAtFailure, millis, reasons, outage, afterRevocation, rest,
                committed, asEntries, bySnapshot, missing, equal && missing == 0,
                r == null ? "(no round)" : r.toString());
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

    private static void joinQuietly(Thread t) {
        try {
            t.join();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
