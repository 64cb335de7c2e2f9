package io.verbatim.runtime.controller;

import io.verbatim.metadatalog.state.OwnershipCommand;
import io.verbatim.metadatalog.state.OwnershipTable;
import io.verbatim.metadatalog.state.SegmentKey;
import io.verbatim.metadatalog.state.SegmentOwner;
import io.verbatim.runtime.broker.Lease;
import io.verbatim.runtime.broker.SegmentOwnership;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.BiPredicate;
import java.util.function.LongSupplier;
import java.util.concurrent.TimeUnit;
import reactor.core.Disposable;
import reactor.core.Disposables;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Scheduler;
import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * What a broker member acts on when a cluster has many broker processes: the segments its replica of the
 * metadata log shows it owns, while its {@link Lease} holds and its replica has applied what the leader had
 * when it granted the lease. Every change (a table applied, a lease granted or lapsed) recomputes the set and
 * signals {@link #changes()} <em>synchronously</em>, so whoever acts on segments stops a lost one before the
 * change returns (or starts handing it over, {@link #handsOver}); only then, and once handed over, does
 * {@link #releasable()} offer the segments a move asked it to give up.
 */
public final class LeasedOwnership implements SegmentOwnership, AutoCloseable {
    private static final Logger LOG = Loggers.getLogger(LeasedOwnership.class);

    private final String member;
    private final Lease lease;
    private final Scheduler timer;
    private final LongSupplier clock;
    private final Sinks.Many<Long> changes = Sinks.many().multicast().directBestEffort();
    private final Sinks.Many<Long> offered = Sinks.many().multicast().directBestEffort();
    private final Disposable.Swap lapse = Disposables.swap();
    private Disposable watch = Disposables.disposed();
    private Disposable handOverWatch = Disposables.disposed();
    private volatile BiPredicate<String, Long> handingOver = (topic, segment) -> false;
    private OwnershipTable table = OwnershipTable.EMPTY;
    private volatile Set<SegmentKey> acting = Set.of();
    /** What {@link #handsOver} answers yes for now (RELEASING by this member, its lease holding). */
    private volatile Set<SegmentKey> handingOverNow = Set.of();
    private volatile List<OwnershipCommand.Release> releasable = List.of();
    private long version;

    /**
     * @param member this broker member's id
     * @param lease its lease, renewed through {@link #granted}
     * @param timer where the lease's lapse is scheduled; its clock is {@link Lease#clock}'s
     */
    public LeasedOwnership(String member, Lease lease, Scheduler timer) {
        this.member = member;
        this.lease = lease;
        this.timer = timer;
        this.clock = Lease.clock(timer);
    }

    /** Follows {@code tables}, this member's replica's ownership table and each after a change. */
    public LeasedOwnership follow(Flux<OwnershipTable> tables) {
        watch = tables.subscribe(this::applied, this::watchFailed);
        return this;
    }

    /** Without the watch this member cannot know what it lost: it acts on nothing from now on (fail closed). */
    private synchronized void watchFailed(Throwable e) {
        LOG.error("{}: the ownership watch failed; acting on nothing: {}", member, e.toString());
        table = OwnershipTable.EMPTY;
        recompute();
    }

    private synchronized void applied(OwnershipTable next) {
        table = next;
        recompute();
    }

    /**
     * The controller leader answered the report sent at {@code sentMs} (this timer's clock) with its applied
     * ownership epoch.
     */
    public synchronized void granted(long sentMs, long leaderEpoch) {
        lease.granted(sentMs, leaderEpoch);
        recompute();
    }

    /** The time on this lease's clock, for a report's send time. */
    public long nowMs() {
        return clock.getAsLong();
    }

    private void recompute() {
        long now = nowMs();
        boolean may = lease.mayAct(now, table.epoch());
        Set<SegmentKey> next = may ? Set.copyOf(table.ownedBy(member)) : Set.of();
        Set<SegmentKey> handing = may ? releasing() : Set.of();
        // a change of either is told: a lapsed lease must stop a hand-over even when nothing else is acted on
        boolean changed = !next.equals(acting) || !handing.equals(handingOverNow);
        acting = next;
        handingOverNow = handing;
        boolean signalled = true;
        if (changed) {
            // the subscribers stop what they lost before this returns; one that could not be told may still act
            signalled = changes.tryEmitNext(++version) == Sinks.EmitResult.OK;
        }
        List<OwnershipCommand.Release> before = releasable;
        releasable = !signalled ? List.of() : table.segments().values().stream()
                .filter(o -> o.phase() == SegmentOwner.Phase.RELEASING && o.owner().equals(member))
                .filter(o -> !handingOver.test(o.segment().topic(), o.segment().segment()))
                .map(o -> new OwnershipCommand.Release(o.segment(), o.epoch(), member)).toList();
        if (!releasable.isEmpty() && (changed || !releasable.equals(before))) {
            offered.tryEmitNext(version);
        }
        Duration left = lease.remaining(now);
        if ((!next.isEmpty() || !handing.isEmpty()) && !left.isZero()) {
            lapse.update(timer.schedule(this::lapseCheck, left.toMillis() + 1, TimeUnit.MILLISECONDS));
        }
    }

    /** The segments a move asks this member to give up, as its replica shows them. */
    private Set<SegmentKey> releasing() {
        Set<SegmentKey> out = new TreeSet<>();
        table.segments().values().stream()
                .filter(o -> o.phase() == SegmentOwner.Phase.RELEASING && o.owner().equals(member))
                .forEach(o -> out.add(o.segment()));
        return out;
    }

    private synchronized void lapseCheck() {
        if ((!acting.isEmpty() || !handingOverNow.isEmpty()) && !lease.holds(nowMs())) {
            LOG.warn("{}: its lease lapsed (no answer from the controller leader); stopped acting on {} segment(s)",
                    member, acting.size());
        }
        recompute();
    }

    @Override
    public boolean owns(String topic, long segment) {
        return acting.contains(new SegmentKey(topic, segment));
    }

    /** The segments this member acts on now, sorted. */
    public Set<SegmentKey> acting() {
        return new TreeSet<>(acting);
    }

    @Override
    public Flux<Long> changes() {
        return changes.asFlux();
    }

    /** A segment a move asks this member to give up, while its lease holds. */
    @Override
    public boolean handsOver(String topic, long segment) {
        return handingOverNow.contains(new SegmentKey(topic, segment)) && lease.holds(nowMs());
    }

    @Override
    public void handOvers(BiPredicate<String, Long> busy, Flux<?> ended) {
        handingOver = busy;
        // not from inside the hand-over's end (it may end as the change that started it is still being told)
        handOverWatch = ended.subscribe(v -> timer.schedule(this::handedOver),
                e -> LOG.error("{}: no longer told when hand-overs end: {}", member, e.toString()));
    }

    private synchronized void handedOver() {
        recompute();
    }

    /** The segments a move asks this member to give up, stopped already: what its next report releases. */
    public List<OwnershipCommand.Release> releasable() {
        return releasable;
    }

    /** Signals each time a change offers segments to release (after their replicators stopped). */
    public Flux<Long> offers() {
        return offered.asFlux();
    }

    /** The ownership as this member's replica last applied it. */
    public synchronized OwnershipTable table() {
        return table;
    }

    /** This member's id. */
    public String member() {
        return member;
    }

    /** Whether this member's replica still shows it owning or releasing a segment. */
    public synchronized boolean holdsAny() {
        return table.segments().values().stream().anyMatch(o -> o.phase() != SegmentOwner.Phase.UNOWNED
                && o.owner().equals(member));
    }

    /** How long the lease still holds. */
    public Duration leaseRemaining() {
        return lease.remaining(nowMs());
    }

    @Override
    public synchronized String toString() {
        return member + " acting on " + acting + " (lease " + lease.remaining(nowMs()).toMillis() + " ms, min epoch "
                + lease.minEpoch() + ") on a table at epoch " + table.epoch() + ": " + table.segments().values();
    }

    @Override
    public void close() {
        watch.dispose();
        handOverWatch.dispose();
        lapse.dispose();
    }
}
