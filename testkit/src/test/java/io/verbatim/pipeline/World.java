package io.verbatim.pipeline;

import io.verbatim.budget.SlowPathBudget;
import io.verbatim.embedded.MemorySegments;
import io.verbatim.model.Compression;
import io.verbatim.model.Layout;
import io.verbatim.model.entry.Message;
import io.verbatim.model.entry.SourcePosition;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.SplittableRandom;
import java.util.function.Function;
import reactor.test.scheduler.VirtualTimeScheduler;

/**
 * In-memory clusters replicating in a full mesh on one virtual clock. Every message payload names its
 * origin and a per-origin counter, so invariants can be checked on what every cluster stores.
 */
final class World {
    final VirtualTimeScheduler clock = VirtualTimeScheduler.create();
    final Map<String, MemorySegments> clusters = new LinkedHashMap<>();
    final List<ReplicationLink> links = new ArrayList<>();
    private final Map<String, Integer> produced = new LinkedHashMap<>();

    World(Layout initial, String... names) {
        for (String name : names) {
            clusters.put(name, new MemorySegments(name, initial, clock));
        }
        for (MemorySegments c : clusters.values()) {
            for (String peer : names) {
                if (!peer.equals(c.name())) {
                    c.replicateTo(peer, StartAt.EARLIEST);
                }
            }
        }
    }

    World link(ReplicatorConfig base, SlowPathBudget budget) {
        return link(base, cluster -> budget);
    }

    /** Links every pair, each source cluster's replicators sharing that cluster's budget. */
    World link(ReplicatorConfig base, Function<String, SlowPathBudget> budgets) {
        for (MemorySegments from : clusters.values()) {
            SlowPathBudget budget = budgets.apply(from.name());
            for (MemorySegments to : clusters.values()) {
                if (from != to) {
                    ReplicatorConfig config = base.withLocalCluster(from.name());
                    links.add(ReplicationLink.builder().local(from).remote(to.asRemote()).config(config)
                            .budget(budget).timer(clock).cpu(clock).random(new SplittableRandom(links.size()))
                            .build().start());
                }
            }
        }
        return this;
    }

    static ReplicatorConfig testConfig() {
        return ReplicatorConfig.defaults("unused").withRetry(Duration.ofMillis(10), Duration.ofMillis(500), 0)
                .withSendTimeout(Duration.ofSeconds(2));
    }

    MemorySegments cluster(String name) {
        return clusters.get(name);
    }

    /** Produces {@code count} messages at {@code origin} over {@code keys} keys (some unkeyed), in batches. */
    List<SourcePosition> produce(String origin, Random r, int count, int keys, Compression codec) {
        List<Message> messages = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            int n = produced.merge(origin, 1, Integer::sum) - 1;
            String key = r.nextInt(10) == 0 ? null : "key-" + r.nextInt(keys);
            byte[] payload = (origin + "/" + n + "/" + "x".repeat(r.nextInt(64))).getBytes(StandardCharsets.UTF_8);
            messages.add(key == null ? Message.unkeyed(payload) : Message.of(key, payload));
        }
        return cluster(origin).produce(messages, codec);
    }

    /** Counts the messages {@code cluster} produced itself, for a world assembled by hand. */
    World recordProduced(String origin, MemorySegments cluster) {
        long local = Invariants.stored(cluster).stream().filter(s -> s.origin().equals(origin)).count();
        produced.put(origin, (int) local);
        return this;
    }

    int produced(String origin) {
        return produced.getOrDefault(origin, 0);
    }

    void advance(Duration d) {
        clock.advanceTimeBy(d);
    }

    /** Advances the clock until every link has no backlog, up to {@code limit}. */
    boolean settle(Duration limit) {
        Duration step = Duration.ofMillis(50);
        for (Duration t = Duration.ZERO; t.compareTo(limit) < 0; t = t.plus(step)) {
            if (links.stream().allMatch(ReplicationLink::caughtUp)) {
                advance(step); // let receipts of the last acknowledgements land
                return true;
            }
            advance(step);
        }
        return links.stream().allMatch(ReplicationLink::caughtUp);
    }

    void crashAll() {
        links.forEach(ReplicationLink::stop);
    }

    void restartAll() {
        links.forEach(ReplicationLink::start);
    }
}
