package io.verbatim.runtime.controller;

import io.verbatim.metadatalog.server.CommandLostException;
import io.verbatim.metadatalog.server.NotLeaderException;
import io.verbatim.metadatalog.state.OwnershipCommand;
import io.verbatim.metadatalog.state.OwnershipLog;
import io.verbatim.metadatalog.state.OwnershipOutcome;
import io.verbatim.metadatalog.state.OwnershipTable;
import io.verbatim.metadatalog.state.RegisteredMember;
import io.verbatim.metadatalog.state.SegmentKey;
import io.verbatim.metadatalog.state.SegmentOwner;
import io.verbatim.model.Layout;
import io.verbatim.runtime.broker.Lease;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import reactor.core.Disposable;
import reactor.core.Disposables;
import reactor.core.publisher.Flux;
import reactor.core.scheduler.Scheduler;
import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * The controller leader's side of segments' ownership, for a term: it registers the configured broker members
 * the log does not hold, takes the members' reports (a lease for each, their releases, a member leaving), and
 * every interval plans ({@link OwnershipPlanner}) and commits one change, removing the members that drained.
 * One change at a time: a round while the last one is in flight plans nothing. Stopped with the term.
 */
public final class OwnershipLoop implements Disposable {
    private static final Logger LOG = Loggers.getLogger(OwnershipLoop.class);

    private final String cluster;
    private final OwnershipLog log;
    private final LeaseBook book;
    private final OwnershipPlanner planner;
    private final Supplier<SortedMap<String, Layout>> layouts;
    private final Supplier<Map<SegmentKey, Long>> bytesPerSecond;
    private final Scheduler timer;
    private final LongSupplier clock;
    /** How long a change may take to commit before the loop plans again (its outcome is then read from the log). */
    private final Duration patience;
    private final Disposable.Composite running = Disposables.composite();
    private final AtomicBoolean planning = new AtomicBoolean();
    private final Set<SegmentKey> releasing = ConcurrentHashMap.newKeySet();
    private final Set<String> changingMembers = ConcurrentHashMap.newKeySet();
    private volatile List<String> configured = List.of();
    private AtomicLong moves = new AtomicLong();
    private AtomicLong expiries = new AtomicLong();

    /**
     * @param layouts every topic's layout as the leader applied it
     * @param bytesPerSecond each segment's replicated bytes per second, from the members' reports
     * @param timer the leader's clock (monotonic in production)
     */
    public OwnershipLoop(String cluster, OwnershipLog log, Duration lease, OwnershipPlanner.Settings settings,
            Supplier<SortedMap<String, Layout>> layouts, Supplier<Map<SegmentKey, Long>> bytesPerSecond,
            Scheduler timer) {
        this.cluster = cluster;
        this.log = log;
        this.timer = timer;
        this.clock = Lease.clock(timer);
        this.patience = lease;
        this.book = new LeaseBook(lease, nowMs());
        this.planner = new OwnershipPlanner(settings);
        this.layouts = layouts;
        this.bytesPerSecond = bytesPerSecond;
    }

    /** The leader's clock for leases ({@link Lease#clock}): when a report is received. */
    public long nowMs() {
        return clock.getAsLong();
    }

    /** Counts the moves and expiries it commits into these (a replica's, across its terms). */
    public OwnershipLoop counting(AtomicLong movesInto, AtomicLong expiriesInto) {
        this.moves = movesInto;
        this.expiries = expiriesInto;
        return this;
    }

    /**
     * Plans every {@code interval}; each round first registers the {@code configured} members the log lacks
     * (a registration that fails is tried again next round).
     */
    public OwnershipLoop start(List<String> configured, Duration interval) {
        this.configured = List.copyOf(configured);
        running.add(Flux.interval(Duration.ZERO, interval, timer).onBackpressureDrop().subscribe(t -> round(),
                e -> LOG.error("{}: segments' ownership is not planned in this term: {}", cluster, e.toString())));
        return this;
    }

    /**
     * A report of {@code member}, received at this clock's {@code receivedMs} and confirmed by a read barrier:
     * whether it gets a lease. Its releases are committed, and a member leaving is set draining.
     */
    public boolean reported(String member, long receivedMs, List<OwnershipCommand.Release> releases, boolean leaving) {
        boolean lease;
        synchronized (book) {
            lease = book.heard(member, receivedMs);
        }
        OwnershipTable table = log.local();
        List<OwnershipCommand> mine = new ArrayList<>();
        for (OwnershipCommand.Release r : releases) {
            if (r.by().equals(member) && releasing.add(r.segment())) {
                mine.add(r);
            }
        }
        if (!mine.isEmpty()) {
            running.add(log.change(mine).timeout(patience, timer).doFinally(s -> mine.forEach(r -> releasing.remove(
                    ((OwnershipCommand.Release) r).segment()))).subscribe(a -> refused(a, "releases of " + member),
                            e -> LOG.debug("{}: the releases of {} are not committed ({}); its next report repeats them",
                                    cluster, member, e.toString())));
        }
        RegisteredMember.State state = table.member(member).map(RegisteredMember::state).orElse(null);
        if (leaving && state == RegisteredMember.State.ACTIVE) {
            setState(member, RegisteredMember.State.DRAINING);
        } else if (!leaving && state != RegisteredMember.State.ACTIVE) {
            setState(member, RegisteredMember.State.ACTIVE); // not registered yet, or back after it drained
        }
        return lease;
    }

    /** Whether {@code member}'s lease holds now, as this leader counts it. */
    public boolean live(String member) {
        synchronized (book) {
            return book.live(member, nowMs());
        }
    }

    /** The epoch of the ownership this leader has applied: what a lease's holder must have applied to act. */
    public long epoch() {
        return log.local().epoch();
    }

    private void setState(String member, RegisteredMember.State state) {
        if (!changingMembers.add(member)) {
            return;
        }
        RegisteredMember current = log.local().member(member).orElse(RegisteredMember.configured(member, state));
        running.add(log.register(current.withState(state)).doFinally(s -> changingMembers.remove(member))
                .subscribe(a -> LOG.info("{}: broker member {} is {}", cluster, member, state),
                        e -> LOG.warn("{}: broker member {} not set {}: {}", cluster, member, state, e.toString())));
    }

    private void round() {
        try {
            plan();
        } catch (RuntimeException e) {
            planning.set(false);
            LOG.error("{}: planning segments' ownership failed; trying again next round: {}", cluster, e.toString(), e);
        }
    }

    private void plan() {
        OwnershipTable table = log.local();
        for (String m : configured) {
            if (table.member(m).isEmpty()) {
                setState(m, RegisteredMember.State.ACTIVE);
            }
        }
        for (RegisteredMember m : table.members().values()) {
            if (m.state() == RegisteredMember.State.DRAINING && !holds(table, m.id())) {
                setState(m.id(), RegisteredMember.State.REMOVED);
            }
        }
        if (!planning.compareAndSet(false, true)) {
            return;
        }
        long now = nowMs();
        List<String> registered = table.members().values().stream()
                .filter(m -> m.state() != RegisteredMember.State.REMOVED).map(RegisteredMember::id).toList();
        Set<String> lapsed;
        Set<String> live = new TreeSet<>();
        synchronized (book) {
            // an expiry that took effect (the member holds nothing now) lets its next report have a lease again
            book.expiring().stream().filter(m -> !holds(table, m)).forEach(book::settled);
            lapsed = new TreeSet<>(book.lapsed(registered, now));
            registered.stream().filter(m -> book.live(m, now)).forEach(live::add);
            // from here on, until its expiry took effect, a lapsed member that holds segments gets no lease: a
            // report answered meanwhile would let it act on what the expiry gives away
            lapsed.stream().filter(m -> holds(table, m)).forEach(book::expiring);
        }
        List<OwnershipCommand> commands = planner.plan(new OwnershipPlanner.Inputs(table, layouts.get(), live, lapsed,
                bytesPerSecond.get(), now));
        List<String> expiring = commands.stream().filter(c -> c instanceof OwnershipCommand.Expire)
                .map(c -> ((OwnershipCommand.Expire) c).member()).toList();
        synchronized (book) {
            lapsed.stream().filter(m -> !expiring.contains(m) && holds(table, m)).forEach(book::settled);
        }
        if (commands.isEmpty()) {
            planning.set(false);
            return;
        }
        expiring.forEach(m -> LOG.warn("{}: broker member {} sent no report for a lease; its segments go to others",
                cluster, m));
        running.add(log.change(commands).timeout(patience, timer).doFinally(s -> planning.set(false)).subscribe(
                a -> {
                    refused(a, "the ownership plan");
                    moves.addAndGet(commands.stream().filter(c -> c instanceof OwnershipCommand.Move).count());
                    expiries.addAndGet(expiring.size());
                    settle(expiring); // applied: the expiries took effect
                },
                e -> {
                    if (e instanceof CommandLostException || e instanceof NotLeaderException) {
                        settle(expiring); // not committed: nothing was given away
                    } // else its fate is unknown: the members stay expiring until the table shows the expiry
                    LOG.debug("{}: the ownership plan was not committed ({}); planning again", cluster, e.toString());
                }));
    }

    private void settle(List<String> members) {
        synchronized (book) {
            members.forEach(book::settled);
        }
    }

    private static boolean holds(OwnershipTable table, String member) {
        return table.segments().values().stream().anyMatch(o -> o.phase() != SegmentOwner.Phase.UNOWNED
                && (o.owner().equals(member) || o.to().equals(member)));
    }

    private void refused(OwnershipOutcome.Applied applied, String what) {
        if (!applied.refused().isEmpty()) {
            LOG.debug("{}: {} partly refused (planned again): {}", cluster, what, applied.refused());
        }
    }

    @Override
    public void dispose() {
        running.dispose();
    }

    @Override
    public boolean isDisposed() {
        return running.isDisposed();
    }
}
