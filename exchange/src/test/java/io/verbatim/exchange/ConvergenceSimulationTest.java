package io.verbatim.exchange;

import static org.assertj.core.api.Assertions.assertThat;

import io.verbatim.model.Layout;
import io.verbatim.model.Segment;
import io.verbatim.model.Shape;
import io.verbatim.store.InMemoryLayoutStore;
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
 * Seeded simulations of 3 to 5 clusters running local policies (random splits, rebuckets, cold marks)
 * while the network loses, duplicates and reorders calls, partitions come and go, controllers crash
 * and leaders fail over. Invariants are checked after every step; after healing, every cluster must
 * hold the same layout. {@code -Dverbatim.seed=N -Dverbatim.simulations=1} replays one run.
 */
class ConvergenceSimulationTest {
    private static final String[] TOPICS = {"orders", "events"};

    @Test
    void everyClusterConvergesOnTheSameLayoutAndNoInvariantBreaks() {
        long first = Long.getLong("verbatim.seed", 0xE8C4_0001L);
        int count = Integer.getInteger("verbatim.simulations", 1000 * Integer.getInteger("verbatim.scale", 1));
        for (int i = 0; i < count; i++) {
            long seed = first + i;
            try {
                new Run(seed).run();
            } catch (Throwable t) {
                throw new AssertionError("simulation seed " + seed + " failed (replay with -Dverbatim.seed=" + seed
                        + " -Dverbatim.simulations=1): " + t.getMessage(), t);
            }
        }
    }

    private static final class Run {
        final Random r;
        final VirtualTimeScheduler clock = VirtualTimeScheduler.create();
        final SimNetwork net;
        final Map<String, InMemoryLayoutStore> stores = new LinkedHashMap<>();
        final Map<String, Caps> caps = new HashMap<>();
        final Map<String, Pusher> pushers = new HashMap<>();
        final Map<String, Set<Integer>> coldEver = new HashMap<>();
        final Map<String, Map<String, Set<Integer>>> lastBoundaries = new HashMap<>();
        final Map<String, Set<Integer>> everSeen = new HashMap<>();
        final ExchangeConfig config = ExchangeConfig.defaults().withAntiEntropyInterval(Duration.ofSeconds(5))
                .withRetry(Duration.ofMillis(100), Duration.ofSeconds(2), 0);
        Caps globalMin;

        Run(long seed) {
            r = new Random(seed);
            net = new SimNetwork(r, clock);
        }

        void run() {
            int n = 3 + r.nextInt(3);
            List<String> names = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                names.add("c" + i);
            }
            boolean apart = r.nextInt(4) == 0; // the second topic existed before replication: no nesting
            for (String name : names) {
                Caps c = r.nextInt(5) == 0 ? new Caps(24, 64) : new Caps(32, 128);
                caps.put(name, c);
                InMemoryLayoutStore store = new InMemoryLayoutStore();
                store.create(TOPICS[0], Layout.initial(1, 4, 0)).block();
                store.create(TOPICS[1], apart ? Layout.initial(1 + r.nextInt(3), 4, 0) : Layout.initial(1, 4, 0))
                        .block();
                stores.put(name, store);
                coldEver.put(name, new HashSet<>());
            }
            globalMin = Caps.min(caps.get(names.get(0)), caps.values());
            for (String name : names) {
                start(name, names);
            }
            net.lossRate = r.nextDouble() * 0.3;
            net.duplicateRate = r.nextDouble() * 0.2;
            net.maxDelayMillis = 10 + r.nextInt(300);
            snapshot();
            for (int step = 0; step < 120; step++) {
                act(names);
                clock.advanceTimeBy(Duration.ofMillis(250));
                checkInvariants(names);
            }
            net.heal();
            net.lossRate = 0;
            net.duplicateRate = 0;
            for (String name : names) {
                if (!pushers.containsKey(name)) {
                    start(name, names);
                }
            }
            for (int i = 0; i < 120; i++) {
                clock.advanceTimeBy(Duration.ofMillis(500));
                checkInvariants(names);
            }
            for (String topic : TOPICS) {
                Shape expected = Shape.of(stores.get(names.get(0)).get(topic).block());
                for (String name : names) {
                    assertThat(Shape.of(stores.get(name).get(topic).block())).as("%s of %s vs %s", topic, name,
                            names.get(0)).isEqualTo(expected);
                }
                // Nothing is lost without agreement: a boundary no cluster ever marked cold is still there.
                for (int b : everSeen.getOrDefault(topic, Set.of())) {
                    if (coldEver.values().stream().noneMatch(marks -> marks.contains(b))) {
                        assertThat(expected.boundaries()).as("boundary %s of %s", b, topic).contains(b);
                    }
                }
            }
            pushers.values().forEach(Pusher::dispose);
        }

        void start(String name, List<String> names) {
            Set<String> peers = new HashSet<>(names);
            peers.remove(name);
            Controller c = new Controller(name, peers, caps.get(name), stores.get(name), clock);
            c.becomeLeader();
            net.nodes.put(name, c);
            net.up(name);
            pushers.put(name, new Pusher(c, net.transportOf(name), config, clock).start());
        }

        void crash(String name) {
            Pusher p = pushers.remove(name);
            if (p != null) {
                p.dispose();
            }
            net.down(name);
        }

        void act(List<String> names) {
            for (String name : names) {
                if (!pushers.containsKey(name)) {
                    if (r.nextInt(8) == 0) {
                        start(name, names); // restart, or a follower takes over as leader
                    }
                    continue;
                }
                Controller c = net.nodes.get(name);
                String topic = TOPICS[r.nextInt(TOPICS.length)];
                Layout layout = stores.get(name).get(topic).block();
                List<Segment> active = layout.activeSegments();
                Segment s = active.get(r.nextInt(active.size()));
                int dice = r.nextInt(40);
                if (dice == 0 && active.size() < 8) {
                    c.split(topic, s.id()).block();
                } else if (dice == 1 && s.buckets().count() < 32) {
                    c.rebucket(topic, s.id(), s.buckets().count() * 2).block();
                } else if (dice <= 4 && active.size() > 1) {
                    int boundary = active.get(1 + r.nextInt(active.size() - 1)).range().start();
                    coldEver.get(name).add(boundary);
                    c.markCold(topic, boundary).block();
                } else if (dice == 5 && !c.coldMarks(topic).isEmpty()) {
                    c.unmarkCold(topic, c.coldMarks(topic).iterator().next());
                } else if (dice == 6 && r.nextInt(4) == 0) {
                    crash(name);
                } else if (dice == 7 && r.nextInt(3) == 0) {
                    net.partition(name, names.get(r.nextInt(names.size())));
                } else if (dice == 8 && r.nextInt(3) == 0) {
                    net.heal();
                }
            }
        }

        void snapshot() {
            stores.forEach((name, store) -> {
                Map<String, Set<Integer>> m = new HashMap<>();
                for (String topic : TOPICS) {
                    Set<Integer> boundaries = Shape.of(store.get(topic).block()).boundaries();
                    m.put(topic, boundaries);
                    everSeen.computeIfAbsent(topic, t -> new HashSet<>()).addAll(boundaries);
                }
                lastBoundaries.put(name, m);
            });
        }

        void checkInvariants(List<String> names) {
            for (String name : names) {
                for (String topic : TOPICS) {
                    Layout l = stores.get(name).get(topic).block();
                    assertThat(l.activeSegments().size()).as("segments of %s/%s", name, topic)
                            .isLessThanOrEqualTo(globalMin.maxSegments());
                    assertThat(l.activeSegments()).as("buckets of %s/%s", name, topic)
                            .allMatch(s -> s.buckets().count() <= globalMin.maxEntryBucketsPerSegment());
                    Set<Integer> before = lastBoundaries.get(name).get(topic);
                    for (int removed : before) {
                        if (!Shape.of(l).boundaries().contains(removed)) {
                            // A merge: the merging cluster's policy marked it cold, and every peer said so too
                            // (or said it did not have it) in a state that reached the merging cluster.
                            assertThat(coldEver.get(name)).as("%s merged %s of %s on its own mark", name, removed,
                                    topic).contains(removed);
                            for (String other : names) {
                                if (!other.equals(name)) {
                                    assertThat(agreed(name, other, topic, removed))
                                            .as("%s merged %s of %s without %s agreeing", name, removed, topic, other)
                                            .isTrue();
                                }
                            }
                        }
                    }
                }
            }
            snapshot();
        }

        boolean agreed(String merger, String peer, String topic, int boundary) {
            return net.delivered.getOrDefault(merger + "|" + peer + "|" + topic, List.of()).stream()
                    .anyMatch(v -> v.coldMarks().contains(boundary) || !v.boundaries().contains(boundary));
        }
    }
}
