package io.verbatim.exchange;

import static org.assertj.core.api.Assertions.assertThat;

import io.verbatim.layoutstore.InMemoryLayoutStore;
import io.verbatim.model.Buckets;
import io.verbatim.model.HashRange;
import io.verbatim.model.Layout;
import io.verbatim.model.Segment;
import io.verbatim.model.Shape;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;
import reactor.test.scheduler.VirtualTimeScheduler;

/**
 * Seeded simulations of 3 to 5 clusters running local policies (splits, rebuckets, cold marks that come
 * and go, operators' merges and rebucket-downs issued on every cluster) while the network loses,
 * duplicates and reorders calls, partitions come and go, controllers crash, leaders fail over, and
 * clusters come back having lost their store. Clusters draw their own caps, often tight enough to be
 * hit, and some runs push states in calls cut to a small body limit. Invariants are checked after
 * every step; after healing, every cluster must hold the same layout, within every cluster's caps.
 * {@code -Dverbatim.seed=N -Dverbatim.simulations=1} replays one run.
 *
 * <p>Invariants: no cluster ever passes its own caps; a boundary is removed only by a merge the
 * cluster recorded, on its own cold mark (or one the caps made), with every peer's agreement in a state
 * that reached it; in runs where clusters only split, every count is the one a lone cluster would have
 * (the initial count carried to the range: the join never undoes a split's halving); a boundary nobody
 * marked and no cap removed survives to the end.
 */
class ConvergenceSimulationTest {
    private static final int SCALE = Integer.getInteger("verbatim.scale", 1);

    @Test
    void everyClusterConvergesOnTheSameLayoutAndNoInvariantBreaks() {
        simulate(0xE8C4_0001L, 1000 * SCALE, 3);
    }

    @Test
    void manyTopicsInCallsCutToTheBodyLimitConvergeToo() {
        simulate(0xE8C4_9001L, 20 * SCALE, 40);
    }

    private static void simulate(long defaultSeed, int defaultCount, int topics) {
        long first = Long.getLong("verbatim.seed", defaultSeed);
        int count = Integer.getInteger("verbatim.simulations", defaultCount);
        for (int i = 0; i < count; i++) {
            long seed = first + i;
            Run run = new Run(seed, topics);
            try {
                run.run();
            } catch (Throwable t) {
                throw new AssertionError("simulation seed " + seed + " failed (replay with -Dverbatim.seed=" + seed
                        + " -Dverbatim.simulations=1): " + t.getMessage() + "\n" + run.describe(), t);
            }
        }
    }

    private static final class Run {
        final Random r;
        final VirtualTimeScheduler clock = VirtualTimeScheduler.create();
        final SimNetwork net;
        final List<String> topics = new ArrayList<>();
        final List<String> names = new ArrayList<>();
        final Map<String, InMemoryLayoutStore> stores = new LinkedHashMap<>();
        final Map<String, Controller> controllers = new HashMap<>();
        final Map<String, Caps> caps = new HashMap<>();
        final Map<String, Pusher> pushers = new HashMap<>();
        /** cluster|topic → boundaries its policy or operator ever marked cold. */
        final Map<String, Set<Integer>> coldEver = new HashMap<>();
        /** cluster|topic → the boundaries it held after the last step. */
        final Map<String, Set<Integer>> lastBoundaries = new HashMap<>();
        /** cluster|topic → the epoch of the newest recorded change already checked. */
        final Map<String, Long> checkedEpoch = new HashMap<>();
        /** topic → boundaries that may legitimately vanish (marked cold, merged past a cap, lost with a store). */
        final Map<String, Set<Integer>> mayVanish = new HashMap<>();
        final Map<String, Set<Integer>> everSeen = new HashMap<>();
        /**
         * Topics a cap has shaped: a fold left part of the join out, or a merge undid a split. A merge
         * counts {@code N1+N2} as PIP-483 does, so from then on a lone cluster's split-only counts are no
         * longer what any cluster should hold there.
         */
        final Set<String> capShaped = new HashSet<>();
        /** Operators' rebucket-downs still to issue: at step, on cluster, topic, range, count. */
        final List<Object[]> operatorActions = new ArrayList<>();
        final boolean splitOnly;
        final boolean tight;
        final int bodyLimit;
        final ExchangeConfig config;
        Caps globalMin;
        int step;

        Run(long seed, int topicCount) {
            r = new Random(seed);
            net = new SimNetwork(r, clock);
            for (int i = 0; i < topicCount; i++) {
                topics.add(i == 0 ? "orders" : i == 1 ? "events" : "topic-" + i);
            }
            splitOnly = r.nextInt(4) == 0;
            tight = r.nextInt(3) == 0;
            bodyLimit = topicCount > 3 || r.nextInt(5) == 0 ? 1024 + r.nextInt(2048) : 4 << 20;
            config = ExchangeConfig.defaults().withAntiEntropyInterval(Duration.ofSeconds(5))
                    .withRetry(Duration.ofMillis(100), Duration.ofSeconds(2), 0.5).withMaxBodyBytes(bodyLimit);
        }

        void run() {
            int n = 3 + r.nextInt(3);
            boolean apart = !splitOnly && !tight && r.nextInt(4) == 0; // "events" existed before replication
            for (int i = 0; i < n; i++) {
                String name = "c" + i;
                names.add(name);
                caps.put(name, tight ? new Caps(4 + r.nextInt(6), 4 << r.nextInt(3))
                        : r.nextInt(5) == 0 ? new Caps(24, 64) : new Caps(32, 128));
                stores.put(name, freshStore(apart));
            }
            globalMin = Caps.min(caps.get(names.get(0)), caps.values());
            names.forEach(this::start);
            net.lossRate = r.nextDouble() * 0.3;
            net.duplicateRate = r.nextDouble() * 0.2;
            net.maxDelayMillis = 10 + r.nextInt(300);
            snapshot();
            for (step = 0; step < 120; step++) {
                act();
                clock.advanceTimeBy(Duration.ofMillis(250));
                checkInvariants();
            }
            net.heal();
            net.lossRate = 0;
            net.duplicateRate = 0;
            for (String name : names) {
                if (!pushers.containsKey(name)) {
                    restart(name, r.nextInt(3) == 0);
                }
            }
            for (Object[] a : operatorActions) {
                issueLowering((String) a[1], (String) a[2], (HashRange) a[3], (Integer) a[4]);
            }
            operatorActions.clear();
            for (int i = 0; i < 120; i++) {
                clock.advanceTimeBy(Duration.ofMillis(500));
                checkInvariants();
            }
            checkConverged();
            pushers.values().forEach(Pusher::dispose);
        }

        InMemoryLayoutStore freshStore(boolean apart) {
            InMemoryLayoutStore store = new InMemoryLayoutStore();
            for (String topic : topics) {
                boolean differs = apart && topic.equals("events");
                store.create(topic, differs ? Layout.initial(1 + r.nextInt(3), 4, 0) : Layout.initial(1, 4, 0)).block();
            }
            return store;
        }

        void start(String name) {
            Set<String> peers = new HashSet<>(names);
            peers.remove(name);
            Controller c = new Controller(name, peers, caps.get(name), stores.get(name), clock).maxBodyBytes(bodyLimit);
            c.becomeLeader();
            controllers.put(name, c);
            net.nodes.put(name, c);
            net.up(name);
            pushers.put(name, new Pusher(c, net.transportOf(name), config, clock, new Random(r.nextLong())).start());
        }

        void crash(String name) {
            Pusher p = pushers.remove(name);
            if (p != null) {
                p.dispose();
            }
            net.down(name);
        }

        /** A restart, or a follower taking over as leader; {@code lost}: the store is gone (restored empty). */
        void restart(String name, boolean lost) {
            if (lost) {
                for (String topic : topics) {
                    Set<Integer> elsewhere = new HashSet<>();
                    names.stream().filter(o -> !o.equals(name)).forEach(o -> elsewhere.addAll(boundaries(o, topic)));
                    for (int b : boundaries(name, topic)) {
                        if (!elsewhere.contains(b)) {
                            mayVanish.computeIfAbsent(topic, t -> new HashSet<>()).add(b); // lost with the store
                        }
                    }
                    checkedEpoch.remove(name + "|" + topic);
                }
                stores.put(name, freshStore(false));
            }
            start(name);
            for (String topic : topics) {
                lastBoundaries.put(name + "|" + topic, boundaries(name, topic));
                checkedEpoch.remove(name + "|" + topic); // a new controller has a new history
            }
        }

        void act() {
            for (Object[] a : List.copyOf(operatorActions)) {
                if ((Integer) a[0] <= step) {
                    operatorActions.remove(a);
                    issueLowering((String) a[1], (String) a[2], (HashRange) a[3], (Integer) a[4]);
                }
            }
            for (String name : names) {
                if (!pushers.containsKey(name)) {
                    if (r.nextInt(8) == 0) {
                        restart(name, r.nextInt(3) == 0);
                    }
                    continue;
                }
                Controller c = controllers.get(name);
                String topic = topics.get(r.nextInt(topics.size()));
                Layout layout = stores.get(name).get(topic).block();
                List<Segment> active = layout.activeSegments();
                Segment s = active.get(r.nextInt(active.size()));
                int dice = r.nextInt(44);
                if (dice == 0) {
                    c.split(topic, s.id()).block();
                } else if (dice == 1 && !splitOnly && s.buckets().count() < 64) {
                    c.rebucket(topic, s.id(), s.buckets().count() * 2).block();
                } else if (dice <= 4 && !splitOnly && active.size() > 1) {
                    int boundary = active.get(1 + r.nextInt(active.size() - 1)).range().start();
                    coldEver.computeIfAbsent(name + "|" + topic, k -> new HashSet<>()).add(boundary);
                    c.markCold(topic, boundary).block();
                } else if (dice == 5 && !splitOnly && !c.coldMarks(topic).isEmpty()) {
                    c.unmarkCold(topic, c.coldMarks(topic).iterator().next());
                } else if (dice == 9 && !splitOnly && active.size() > 1) {
                    Set<Integer> cold = new HashSet<>();
                    for (Segment x : active.subList(1, active.size())) {
                        if (r.nextInt(3) == 0) {
                            cold.add(x.range().start());
                        }
                    }
                    coldEver.computeIfAbsent(name + "|" + topic, k -> new HashSet<>()).addAll(cold);
                    c.policyColdMarks(topic, cold).block();
                } else if (dice == 10 && !splitOnly && s.buckets().count() > 1 && r.nextInt(2) == 0) {
                    // An operator lowers a range's count: issued on every cluster, each at its own moment.
                    for (String other : names) {
                        operatorActions.add(new Object[] {step + r.nextInt(20), other, topic, s.range(),
                                s.buckets().count() / 2});
                    }
                } else if (dice == 6 && r.nextInt(4) == 0) {
                    crash(name);
                } else if (dice == 7 && r.nextInt(3) == 0) {
                    net.partition(name, names.get(r.nextInt(names.size())));
                } else if (dice == 8 && r.nextInt(3) == 0) {
                    net.heal();
                }
            }
        }

        void issueLowering(String name, String topic, HashRange range, int count) {
            Controller c = controllers.get(name);
            if (pushers.containsKey(name) && count >= 1) {
                c.markBucketsCold(topic, range, count).block();
            }
        }

        Set<Integer> boundaries(String name, String topic) {
            return Shape.of(stores.get(name).get(topic).block()).boundaries();
        }

        void snapshot() {
            for (String name : names) {
                for (String topic : topics) {
                    Set<Integer> b = boundaries(name, topic);
                    lastBoundaries.put(name + "|" + topic, b);
                    everSeen.computeIfAbsent(topic, t -> new HashSet<>()).addAll(b);
                }
            }
        }

        void checkInvariants() {
            for (String name : names) {
                Caps own = caps.get(name);
                for (String topic : topics) {
                    Layout l = stores.get(name).get(topic).block();
                    assertThat(l.activeSegments().size()).as("segments of %s/%s within its own cap", name, topic)
                            .isLessThanOrEqualTo(own.maxSegments());
                    assertThat(l.activeSegments()).as("buckets of %s/%s within its own cap", name, topic)
                            .allMatch(s -> s.buckets().count() <= Buckets.floorCount(own.maxEntryBucketsPerSegment()));
                    if (splitOnly && !capShaped(topic)) {
                        assertThat(l.activeSegments()).as("%s/%s: counts a lone cluster would have", name, topic)
                                .allMatch(s -> s.buckets().count() == Shape.project(4, HashRange.FULL, s.range()));
                    }
                    checkRemovals(name, topic, l);
                }
            }
            snapshot();
        }

        boolean capShaped(String topic) {
            for (Controller c : controllers.values()) {
                if (c.capLimited(topic) || c.recentChanges(topic).stream().anyMatch(ch -> ch.what().startsWith("merge"))) {
                    capShaped.add(topic);
                }
            }
            return capShaped.contains(topic);
        }

        /** Every boundary that went was merged by a recorded merge, on a mark, with every peer agreeing. */
        void checkRemovals(String name, String topic, Layout now) {
            String key = name + "|" + topic;
            Controller c = controllers.get(name);
            long since = checkedEpoch.getOrDefault(key, -1L);
            Map<Integer, String> merged = new HashMap<>();
            for (LayoutChange change : c.recentChanges(topic)) {
                if (change.epoch() > since && change.what().startsWith("merge")) {
                    merged.put(change.boundary(), change.why());
                }
            }
            checkedEpoch.put(key, now.epoch());
            Set<Integer> current = Shape.of(now).boundaries();
            for (int removed : lastBoundaries.getOrDefault(key, Set.of())) {
                if (current.contains(removed)) {
                    continue;
                }
                String why = merged.get(removed);
                assertThat(why).as("%s removed %04x of %s by a recorded merge", name, removed, topic).isNotNull();
                if (why.equals(FoldPlan.COLD)) {
                    assertThat(coldEver.getOrDefault(key, Set.of())).as("%s merged %04x of %s on its own mark", name,
                            removed, topic).contains(removed);
                } else {
                    assertThat(why).isEqualTo(FoldPlan.CAPS);
                }
                mayVanish.computeIfAbsent(topic, t -> new HashSet<>()).add(removed);
                for (String other : names) {
                    if (!other.equals(name)) {
                        assertThat(agreed(name, other, topic, removed))
                                .as("%s merged %04x of %s without %s agreeing", name, removed, topic, other).isTrue();
                    }
                }
            }
        }

        boolean agreed(String merger, String peer, String topic, int boundary) {
            return net.delivered.getOrDefault(merger + "|" + peer + "|" + topic, List.of()).stream()
                    .anyMatch(v -> v.coldMarks().contains(boundary) || !v.boundaries().contains(boundary));
        }

        void checkConverged() {
            for (String topic : topics) {
                Shape expected = Shape.of(stores.get(names.get(0)).get(topic).block());
                for (String name : names) {
                    assertThat(Shape.of(stores.get(name).get(topic).block())).as("%s of %s vs %s", topic, name,
                            names.get(0)).isEqualTo(expected);
                }
                assertThat(expected.cells()).as("%s within every cluster's caps", topic)
                        .hasSizeLessThanOrEqualTo(globalMin.maxSegments())
                        .allMatch(cell -> cell.buckets().count() <= Buckets.floorCount(globalMin.maxEntryBucketsPerSegment()));
                // Nothing is lost without agreement: a boundary nobody marked, no cap removed and no lost store
                // took is still there.
                for (int b : everSeen.getOrDefault(topic, Set.of())) {
                    boolean marked = coldEver.entrySet().stream()
                            .anyMatch(e -> e.getKey().endsWith("|" + topic) && e.getValue().contains(b));
                    if (!marked && !mayVanish.getOrDefault(topic, Set.of()).contains(b)) {
                        assertThat(expected.boundaries()).as("boundary %04x of %s", b, topic).contains(b);
                    }
                }
            }
        }

        /** Every cluster's layouts, marks and latest changes: what a failed run looked like at the end. */
        String describe() {
            StringBuilder b = new StringBuilder("splitOnly=" + splitOnly + " tight=" + tight + " bodyLimit="
                    + bodyLimit + " caps=" + caps + "\n");
            for (String name : names) {
                Controller c = controllers.get(name);
                b.append("  ").append(name).append(" fold failures ").append(c.metrics().foldFailures())
                        .append(", invalid states ").append(c.metrics().invalidStates()).append(", last failures ");
                names.stream().filter(o -> !o.equals(name)).forEach(o -> b.append(o).append('=')
                        .append(c.metrics().lastFailure(o)).append(' '));
                b.append('\n');
                for (String topic : topics.subList(0, Math.min(3, topics.size()))) {
                    Layout l = stores.get(name).get(topic).block();
                    b.append("  ").append(name).append(' ').append(topic).append(" e").append(l.epoch()).append(' ')
                            .append(Shape.of(l)).append(" marks=").append(c.exchangedMarks(topic))
                            .append(" deferring=").append(c.deferringOwnChanges()).append('\n');
                    c.recentChanges(topic).stream().skip(Math.max(0, c.recentChanges(topic).size() - 6))
                            .forEach(ch -> b.append("      ").append(ch).append('\n'));
                    c.peerStatesView().getOrDefault(topic, Map.of()).forEach((peer, st) -> b.append("      holds ")
                            .append(peer).append(" e").append(st.epoch()).append(' ').append(st.shape()).append(' ')
                            .append(st.marks()).append('\n'));
                }
            }
            return b.toString();
        }
    }
}
