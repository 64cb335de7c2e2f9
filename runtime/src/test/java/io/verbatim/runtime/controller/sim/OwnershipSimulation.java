package io.verbatim.runtime.controller.sim;

import com.google.protobuf.ByteString;
import io.verbatim.metadatalog.proto.Assign;
import io.verbatim.metadatalog.proto.BrokerMember;
import io.verbatim.metadatalog.proto.CompareAndSetLayout;
import io.verbatim.metadatalog.proto.CreateTopic;
import io.verbatim.metadatalog.proto.LayoutCommand;
import io.verbatim.metadatalog.proto.MemberChange;
import io.verbatim.metadatalog.proto.MemberState;
import io.verbatim.metadatalog.proto.Move;
import io.verbatim.metadatalog.proto.OwnershipChange;
import io.verbatim.metadatalog.proto.Release;
import io.verbatim.metadatalog.proto.SegmentRef;
import io.verbatim.metadatalog.state.LayoutRegister;
import io.verbatim.metadatalog.state.OwnershipCommand;
import io.verbatim.metadatalog.state.OwnershipTable;
import io.verbatim.metadatalog.state.RegisteredMember;
import io.verbatim.metadatalog.state.SegmentKey;
import io.verbatim.metadatalog.state.SegmentOwner;
import io.verbatim.model.Layout;
import io.verbatim.model.LayoutCodec;
import io.verbatim.model.Mutation;
import io.verbatim.model.Outcome;
import io.verbatim.model.Segment;
import io.verbatim.runtime.broker.Lease;
import io.verbatim.runtime.controller.LeaseBook;
import io.verbatim.runtime.controller.OwnershipPlanner;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.Random;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Consumer;

/**
 * One seeded run of segments' ownership under faults, with the real register ({@link LayoutRegister}, on
 * every replica), planner ({@link OwnershipPlanner}), leader's book ({@link LeaseBook}) and members' leases
 * ({@link Lease}); the metadata log is modelled (commits after a delay, replicas applying a prefix with lag, a
 * leader change committing or losing what was in flight), and so are the members: 2 to 6 broker processes with
 * drifting clocks that report every second, are killed and restarted, paused up to three leases, cut off from
 * the leader (their replica still fed by a follower) or from everything, join, and drain on SIGTERM; topics
 * split and prune meanwhile. Checked at every tick of 100 ms:
 * <ol>
 * <li>at most one member acts on a segment at any instant;</li>
 * <li>no member is expired within a lease of a takeover, nor within a lease of a report its leader answered;</li>
 * <li>balancing moves stay within the planner's bound per interval;</li>
 * <li>once the faults end, every segment is acted on within a lease plus 5 s, and from then on is never
 *     without an acting owner for longer than a move takes (3 s).</li>
 * </ol>
 */
final class OwnershipSimulation {
    static final long TICK = 100;
    static final Duration LEASE = Duration.ofSeconds(10);
    static final long L = LEASE.toMillis();
    static final long SETTLE = L + 5_000;
    static final long MOVE_GRACE = 3_000;
    static final OwnershipPlanner.Settings PLANNING = new OwnershipPlanner.Settings(4, Duration.ofSeconds(10),
            Duration.ofSeconds(20), 0.25);

    private final long seed;
    private final Random r;
    private long now;
    private final PriorityQueue<Event> events = new PriorityQueue<>();
    private long sequence;
    private final List<String> log = new ArrayList<>();

    // the committed log and the state everyone converges on
    private final List<ByteString> committed = new ArrayList<>();
    private final List<Long> committedAt = new ArrayList<>();
    private final LayoutRegister authority = new LayoutRegister();

    // the controller leader (absent during an election)
    private int term;
    private Leader leader;
    private final List<Proposal> inFlight = new ArrayList<>();
    private final Set<String> topics = new TreeSet<>();
    private final Set<String> layoutChanging = new HashSet<>();

    private final Map<String, Broker> brokers = new TreeMap<>();
    private int nextBrokerId;
    private long faultsUntil;
    private long quietFrom;
    private final Map<SegmentKey, Long> unactedSince = new HashMap<>();
    private final Map<SegmentKey, Long> load = new HashMap<>();
    private final Map<String, Integer> stats = new TreeMap<>();

    OwnershipSimulation(long seed) {
        this.seed = seed;
        this.r = new Random(seed);
    }

    private record Event(long at, long seq, Runnable action) implements Comparable<Event> {
        @Override
        public int compareTo(Event o) {
            return at != o.at ? Long.compare(at, o.at) : Long.compare(seq, o.seq);
        }
    }

    private void at(long time, Runnable action) {
        events.add(new Event(Math.max(time, now), sequence++, action));
    }

    private record Proposal(int term, long commitAt, ByteString command, Consumer<Object> onCommit, Runnable onLost) {
    }

    private final class Leader {
        final int term;
        final long takeover;
        final LeaseBook book;
        final OwnershipPlanner planner = new OwnershipPlanner(PLANNING);
        final Map<String, Long> granted = new HashMap<>();
        final Set<String> pendingMembers = new HashSet<>();
        final Set<SegmentKey> pendingReleases = new HashSet<>();
        final Deque<Long> balanceMoves = new ArrayDeque<>();
        boolean planning;

        Leader(int term, long takeover) {
            this.term = term;
            this.takeover = takeover;
            this.book = new LeaseBook(LEASE, takeover);
        }
    }

    private final class Broker {
        final String id;
        final double drift = 0.95 + r.nextDouble() * 0.1;
        final long offset = r.nextInt(1_000_000);
        final long applyLag = r.nextInt(400);
        int incarnation;
        boolean running;
        boolean leaving;
        boolean exited;
        long pausedUntil;
        long cutFromLeaderUntil;
        long cutFromAllUntil;
        LayoutRegister replica;
        int applied;
        Lease lease;
        final Set<SegmentKey> acting = new TreeSet<>();
        final Set<SegmentKey> releasingSeen = new HashSet<>();

        Broker(String id) {
            this.id = id;
        }

        long local() {
            return offset + (long) (now * drift);
        }

        boolean paused() {
            return now < pausedUntil;
        }

        boolean reachesLeader() {
            return now >= cutFromLeaderUntil && now >= cutFromAllUntil;
        }

        boolean fed() {
            return now >= cutFromAllUntil;
        }

        void start() {
            incarnation++;
            running = true;
            replica = new LayoutRegister();
            applied = 0;
            lease = new Lease(LEASE);
            acting.clear();
            releasingSeen.clear();
            long first = now + r.nextInt(1000);
            int inc = incarnation;
            at(first, () -> reportLoop(this, inc));
        }
    }

    void run() {
        int initial = 2 + r.nextInt(5);
        for (int i = 0; i < initial; i++) {
            Broker b = newBroker();
            b.start();
        }
        int topicCount = 1 + r.nextInt(3);
        for (int t = 0; t < topicCount; t++) {
            String topic = "persistent://public/default/t" + t;
            topics.add(topic);
            commitNow(LayoutCommand.newBuilder().setTopic(topic).setCreate(CreateTopic.newBuilder()
                    .setInitial(LayoutCodec.toProto(Layout.initial(1 + r.nextInt(4), 1, 0)))).build().toByteString());
        }
        for (Broker b : brokers.values()) {
            commitNow(member(b.id, MemberState.ACTIVE));
        }
        elect(0);
        faultsUntil = 30_000 + r.nextInt(60_000);
        scheduleFaults(faultsUntil);
        at(0, this::layoutLoop);
        at(0, this::loadLoop);
        for (now = 0; now <= Math.max(quietFrom, faultsUntil) + SETTLE + 30_000; now += TICK) {
            while (!events.isEmpty() && events.peek().at() <= now) {
                events.poll().action().run();
            }
            commitDue();
            for (Broker b : brokers.values()) {
                applyReplica(b);
            }
            check();
        }
    }

    private Broker newBroker() {
        String id = "b" + (++nextBrokerId);
        Broker b = new Broker(id);
        brokers.put(id, b);
        return b;
    }

    // ---- the log

    private void commitNow(ByteString command) {
        committed.add(command);
        committedAt.add(now);
        authority.apply(committed.size(), command);
    }

    private void propose(ByteString command, Consumer<Object> onCommit, Runnable onLost) {
        if (leader == null) {
            onLost.run();
            return;
        }
        inFlight.add(new Proposal(leader.term, now + 50 + r.nextInt(250), command, onCommit, onLost));
    }

    private void commitDue() {
        while (!inFlight.isEmpty() && inFlight.get(0).commitAt() <= now) {
            Proposal p = inFlight.remove(0);
            commitNow(p.command());
            p.onCommit().accept(authority.ownership());
        }
    }

    private void applyReplica(Broker b) {
        if (!b.running || b.paused() || !b.fed()) {
            return;
        }
        while (b.applied < committed.size() && committedAt.get(b.applied) <= now - b.applyLag) {
            b.replica.apply(b.applied + 1, committed.get(b.applied));
            b.applied++;
        }
        OwnershipTable table = b.replica.ownership();
        if (table.member(b.id).map(m -> m.state() == RegisteredMember.State.REMOVED).orElse(false) && b.leaving) {
            b.running = false;
            b.exited = true;
            trace("%s drained and exited", b.id);
            if (now < faultsUntil && r.nextBoolean()) {
                long back = now + 1000 + r.nextInt(10_000);
                extendQuiet(back);
                at(back, () -> {
                    b.exited = false;
                    b.leaving = false;
                    b.start();
                    trace("%s starts again after it drained", b.id);
                    count("restarts after a drain");
                });
            }
            return;
        }
        boolean newlyReleasing = false;
        for (SegmentOwner o : table.segments().values()) {
            if (o.phase() == SegmentOwner.Phase.RELEASING && o.owner().equals(b.id)
                    && b.releasingSeen.add(o.segment())) {
                newlyReleasing = true;
            }
        }
        if (newlyReleasing) {
            int inc = b.incarnation;
            at(now, () -> report(b, inc));
        }
    }

    // ---- leadership

    private void elect(long delay) {
        int t = ++term;
        at(now + delay, () -> {
            if (term != t) {
                return;
            }
            leader = new Leader(t, now);
            trace("leader of term %d takes over", t);
            at(now, () -> leaderLoop(t));
        });
    }

    private void leaderChange() {
        if (leader == null) {
            return;
        }
        trace("leader of term %d deposed", leader.term);
        count("leader changes");
        leader = null;
        int keep = r.nextInt(inFlight.size() + 1);
        List<Proposal> lost = new ArrayList<>(inFlight.subList(keep, inFlight.size()));
        List<Proposal> kept = new ArrayList<>(inFlight.subList(0, keep));
        inFlight.clear();
        for (Proposal p : kept) {
            commitNow(p.command());
            p.onCommit().accept(authority.ownership());
        }
        lost.forEach(p -> p.onLost().run());
        elect(500 + r.nextInt(2500));
    }

    private void leaderLoop(int t) {
        if (leader == null || leader.term != t) {
            return;
        }
        Leader l = leader;
        OwnershipTable table = authority.ownership();
        for (RegisteredMember m : table.members().values()) {
            boolean holds = table.segments().values().stream().anyMatch(o -> o.phase() != SegmentOwner.Phase.UNOWNED
                    && (o.owner().equals(m.id()) || o.to().equals(m.id())));
            if (m.state() == RegisteredMember.State.DRAINING && !holds && l.pendingMembers.add(m.id())) {
                propose(member(m.id(), MemberState.REMOVED), o -> l.pendingMembers.remove(m.id()),
                        () -> l.pendingMembers.remove(m.id()));
            }
        }
        if (!l.planning) {
            plan(l, table);
        }
        at(now + 1000, () -> leaderLoop(t));
    }

    private void plan(Leader l, OwnershipTable table) {
        List<String> registered = table.members().values().stream()
                .filter(m -> m.state() != RegisteredMember.State.REMOVED).map(RegisteredMember::id).toList();
        // as OwnershipLoop: an expiry that took effect settles; a lapsed holder gets no lease from here on
        l.book.expiring().stream().filter(m -> !holds(table, m)).forEach(l.book::settled);
        Set<String> lapsed = new TreeSet<>(l.book.lapsed(registered, now));
        Set<String> live = new TreeSet<>();
        registered.stream().filter(m -> l.book.live(m, now)).forEach(live::add);
        lapsed.stream().filter(m -> holds(table, m)).forEach(l.book::expiring);
        SortedMap<String, Layout> layouts = new TreeMap<>();
        for (String topic : topics) {
            authority.get(topic).ifPresent(layout -> layouts.put(topic, layout));
        }
        List<OwnershipCommand> commands = l.planner.plan(new OwnershipPlanner.Inputs(table, layouts, live, lapsed,
                Map.copyOf(load), now));
        Set<String> planned = new TreeSet<>();
        commands.stream().filter(c -> c instanceof OwnershipCommand.Expire)
                .forEach(c -> planned.add(((OwnershipCommand.Expire) c).member()));
        lapsed.stream().filter(m -> !planned.contains(m) && holds(table, m)).forEach(l.book::settled);
        if (commands.isEmpty()) {
            return;
        }
        Set<String> expiring = new TreeSet<>();
        OwnershipChange.Builder change = OwnershipChange.newBuilder();
        for (OwnershipCommand c : commands) {
            if (c instanceof OwnershipCommand.Expire e) {
                require(now - l.takeover > L, "expired %s within a lease of the takeover at %d", e.member(), l.takeover);
                long granted = l.granted.getOrDefault(e.member(), Long.MIN_VALUE / 2);
                require(now - granted > L, "expired %s within a lease of answering its report at %d", e.member(), granted);
                expiring.add(e.member());
                change.addExpire(e.member());
                count("expiries");
            } else if (c instanceof OwnershipCommand.Assign a) {
                change.addAssign(Assign.newBuilder().setSegment(ref(a.segment())).setTo(a.to()));
                count("assigns");
            } else if (c instanceof OwnershipCommand.Move m) {
                boolean draining = table.member(table.of(m.segment()).orElseThrow().owner())
                        .map(x -> x.state() == RegisteredMember.State.DRAINING).orElse(false);
                if (!draining) {
                    while (!l.balanceMoves.isEmpty() && now - l.balanceMoves.peekFirst() >= PLANNING.moveInterval().toMillis()) {
                        l.balanceMoves.pollFirst();
                    }
                    l.balanceMoves.addLast(now);
                    require(l.balanceMoves.size() <= PLANNING.maxMoves(), "%d balancing moves within %s",
                            l.balanceMoves.size(), PLANNING.moveInterval());
                }
                change.addMove(Move.newBuilder().setSegment(ref(m.segment())).setExpectedEpoch(m.expectedEpoch())
                        .setTo(m.to()));
                count(draining ? "drain moves" : "balance moves");
            }
        }
        trace("plan %s", commands);
        l.planning = true;
        Runnable settle = () -> {
            l.planning = false;
            expiring.forEach(l.book::settled);
        };
        propose(LayoutCommand.newBuilder().setOwnership(change).build().toByteString(), o -> settle.run(), settle);
    }

    private static boolean holds(OwnershipTable table, String member) {
        return table.segments().values().stream().anyMatch(o -> o.phase() != SegmentOwner.Phase.UNOWNED
                && (o.owner().equals(member) || o.to().equals(member)));
    }

    // ---- the members' reports

    private void reportLoop(Broker b, int incarnation) {
        if (!b.running || b.incarnation != incarnation) {
            return;
        }
        if (!b.paused()) {
            report(b, incarnation);
            at(now + (long) (1000 / b.drift), () -> reportLoop(b, incarnation));
        } else {
            at(b.pausedUntil, () -> reportLoop(b, incarnation));
        }
    }

    private void report(Broker b, int incarnation) {
        if (!b.running || b.incarnation != incarnation || b.paused() || !b.reachesLeader()) {
            return;
        }
        long sent = b.local();
        OwnershipTable mine = b.replica.ownership();
        List<SegmentOwner> releases = mine.segments().values().stream()
                .filter(o -> o.phase() == SegmentOwner.Phase.RELEASING && o.owner().equals(b.id)).toList();
        boolean leaving = b.leaving;
        at(now + r.nextInt(300), () -> {
            if (!b.reachesLeader() || leader == null) {
                return;
            }
            Leader l = leader;
            boolean lease = l.book.heard(b.id, now);
            OwnershipTable table = authority.ownership();
            boolean inactive = table.member(b.id).map(m -> m.state() != RegisteredMember.State.ACTIVE).orElse(true);
            if (inactive && !leaving && l.pendingMembers.add(b.id)) {
                propose(member(b.id, MemberState.ACTIVE), o -> l.pendingMembers.remove(b.id),
                        () -> l.pendingMembers.remove(b.id));
            }
            if (leaving && table.member(b.id).map(m -> m.state() == RegisteredMember.State.ACTIVE).orElse(false)
                    && l.pendingMembers.add(b.id)) {
                propose(member(b.id, MemberState.DRAINING), o -> l.pendingMembers.remove(b.id),
                        () -> l.pendingMembers.remove(b.id));
            }
            OwnershipChange.Builder change = OwnershipChange.newBuilder();
            for (SegmentOwner o : releases) {
                if (l.pendingReleases.add(o.segment())) {
                    change.addRelease(Release.newBuilder().setSegment(ref(o.segment())).setEpoch(o.epoch()).setBy(b.id));
                }
            }
            if (change.getReleaseCount() > 0) {
                List<SegmentKey> keys = releases.stream().map(SegmentOwner::segment).toList();
                Runnable done = () -> keys.forEach(l.pendingReleases::remove);
                propose(LayoutCommand.newBuilder().setOwnership(change).build().toByteString(), o -> done.run(), done);
            }
            if (!lease) {
                return;
            }
            l.granted.put(b.id, now);
            long epoch = table.epoch();
            at(now + r.nextInt(300), () -> {
                if (b.running && b.incarnation == incarnation && !b.paused() && b.reachesLeader()) {
                    b.lease.granted(sent, epoch);
                }
            });
        });
    }

    // ---- what every member does meanwhile, and the checks

    private void check() {
        Map<SegmentKey, String> actor = new HashMap<>();
        for (Broker b : brokers.values()) {
            b.acting.clear();
            if (!b.running || b.paused()) {
                continue;
            }
            OwnershipTable table = b.replica.ownership();
            if (!b.lease.mayAct(b.local(), table.epoch())) {
                continue;
            }
            for (SegmentKey k : table.ownedBy(b.id)) {
                b.acting.add(k);
                String other = actor.put(k, b.id);
                require(other == null, "%s and %s both act on %s", other, b.id, k);
            }
        }
        Set<SegmentKey> all = new TreeSet<>();
        for (String topic : topics) {
            authority.get(topic).ifPresent(l -> l.segments().keySet().forEach(id -> all.add(new SegmentKey(topic, id))));
        }
        unactedSince.keySet().retainAll(all);
        for (SegmentKey k : all) {
            if (actor.containsKey(k)) {
                unactedSince.remove(k);
                continue;
            }
            long since = unactedSince.computeIfAbsent(k, x -> now);
            if (now >= faultsUntil && now >= quietFrom + SETTLE) {
                long allowed = Math.max(MOVE_GRACE, quietFrom + SETTLE - since);
                require(now - since <= allowed, "%s without an acting owner since %d (faults ended at %d)", k, since,
                        quietFrom);
            }
        }
    }

    // ---- the faults and the workload

    private void scheduleFaults(long until) {
        quietFrom = 0;
        for (long t = 1000 + r.nextInt(3000); t < until; t += 1000 + r.nextInt(5000)) {
            long start = t;
            int kind = r.nextInt(9);
            at(start, () -> fault(kind));
        }
        at(until, () -> quietFrom = Math.max(quietFrom, now));
    }

    private void fault(int kind) {
        List<Broker> running = brokers.values().stream().filter(b -> b.running).toList();
        if (running.isEmpty()) {
            return;
        }
        Broker b = running.get(r.nextInt(running.size()));
        switch (kind) {
            case 0 -> {
                b.running = false;
                long back = now + 2000 + r.nextInt(20_000);
                extendQuiet(back);
                trace("SIGKILL %s, restarted at %d", b.id, back);
                count("kills");
                at(back, () -> {
                    if (!b.exited && !b.running) {
                        b.start();
                    }
                });
            }
            case 1 -> {
                b.pausedUntil = now + 500 + r.nextInt((int) (3 * L));
                extendQuiet(b.pausedUntil);
                trace("pause %s until %d", b.id, b.pausedUntil);
                count("pauses");
            }
            case 2 -> {
                b.cutFromLeaderUntil = now + 1000 + r.nextInt(30_000);
                extendQuiet(b.cutFromLeaderUntil);
                trace("cut %s from the leader until %d", b.id, b.cutFromLeaderUntil);
                count("partitions from the leader");
            }
            case 3 -> {
                b.cutFromAllUntil = now + 1000 + r.nextInt(30_000);
                extendQuiet(b.cutFromAllUntil);
                trace("cut %s from everything until %d", b.id, b.cutFromAllUntil);
                count("full partitions");
            }
            case 4 -> {
                leaderChange();
                extendQuiet(now + 3000);
            }
            case 5 -> {
                if (brokers.size() < 8) {
                    Broker joined = newBroker();
                    joined.start();
                    trace("%s joins", joined.id);
                    count("joins");
                }
            }
            case 6 -> {
                long activeRunning = running.stream().filter(x -> !x.leaving).count();
                if (activeRunning > 2 && !b.leaving) {
                    b.leaving = true;
                    trace("SIGTERM %s", b.id);
                    count("drains");
                }
            }
            default -> {
                // a quieter moment
            }
        }
    }

    private void extendQuiet(long until) {
        quietFrom = Math.max(quietFrom, until);
    }

    private void layoutLoop() {
        for (String topic : topics) {
            Layout layout = authority.get(topic).orElseThrow();
            if (layoutChanging.contains(topic) || r.nextInt(4) != 0) {
                continue;
            }
            Mutation mutation;
            List<Segment> sealed = layout.segments().values().stream().filter(Segment::isSealed).toList();
            if (!sealed.isEmpty() && r.nextBoolean()) {
                mutation = Mutation.prune(sealed.get(0).id());
            } else if (layout.activeSegments().size() < 8) {
                List<Segment> active = layout.activeSegments();
                mutation = Mutation.split(active.get(r.nextInt(active.size())).id());
            } else {
                continue;
            }
            if (!(layout.apply(mutation, layout.epoch(), now) instanceof Outcome.Applied applied)) {
                continue;
            }
            layoutChanging.add(topic);
            propose(LayoutCommand.newBuilder().setTopic(topic).setCompareAndSet(CompareAndSetLayout.newBuilder()
                    .setExpectedEpoch(layout.epoch()).setNext(LayoutCodec.toProto(applied.layout()))).build()
                    .toByteString(), o -> layoutChanging.remove(topic), () -> layoutChanging.remove(topic));
            count("layout changes");
        }
        if (now < faultsUntil) {
            at(now + 3000 + r.nextInt(4000), this::layoutLoop);
        }
    }

    private void loadLoop() {
        for (String topic : topics) {
            authority.get(topic).ifPresent(l -> l.activeSegments().forEach(s ->
                    load.put(new SegmentKey(topic, s.id()), (long) r.nextInt(4) * r.nextInt(1 << 20))));
        }
        if (now < faultsUntil) {
            at(now + 5000, this::loadLoop);
        }
    }

    // ---- plumbing

    private static ByteString member(String id, MemberState state) {
        return LayoutCommand.newBuilder().setMember(MemberChange.newBuilder()
                .setMember(BrokerMember.newBuilder().setId(id).setState(state))).build().toByteString();
    }

    private static SegmentRef ref(SegmentKey k) {
        return SegmentRef.newBuilder().setTopic(k.topic()).setSegment(k.segment()).build();
    }

    private void require(boolean condition, String format, Object... args) {
        if (!condition) {
            throw new AssertionError("at " + now + " ms: " + String.format(format, args));
        }
    }

    private void count(String what) {
        stats.merge(what, 1, Integer::sum);
    }

    private void trace(String format, Object... args) {
        log.add(now + " " + String.format(format, args));
        if (log.size() > 60) {
            log.remove(0);
        }
    }

    Map<String, Integer> stats() {
        return stats;
    }

    /** The run's shape and its last steps, for a failure's message. */
    String describe() {
        return "seed " + seed + ", " + brokers.size() + " members, " + topics.size() + " topics, faults until " + quietFrom
                + " ms; last steps:\n    " + String.join("\n    ", log);
    }
}
