package io.verbatim.runtime;

import io.verbatim.config.VerbatimConfig;
import io.verbatim.model.Compression;
import io.verbatim.model.entry.Entries;
import io.verbatim.model.entry.Entry;
import io.verbatim.model.entry.Message;
import io.verbatim.runtime.status.NodeStatus;
import io.verbatim.testkit.DeliveryChecks;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Two clusters as {@code verbatim node} runs them (one process each, here one JVM), every connection between
 * them (exchange, replication sessions, layout streams) through a {@link BlackholeProxy}: each cluster binds
 * 127.0.0.1 and advertises an address of its own on loopback (127.0.0.2, 127.0.0.3) where the proxy listens on
 * the same ports. Both produce all along; the network between them drops everything silently for a while, then
 * heals, and each direction's time to drain is measured from the heal: until the other cluster stores every
 * message produced before it. Meanwhile status names the replicators that stand still.
 */
class PartitionHealTest {
    private static final String T = "persistent://public/default/orders";
    private static final Duration PARTITION = Duration.ofSeconds(12);

    private final List<Node> nodes = new ArrayList<>();
    private final List<BlackholeProxy> proxies = new ArrayList<>();
    private final AtomicBoolean producing = new AtomicBoolean(true);

    @AfterEach
    void stop() throws IOException {
        producing.set(false);
        nodes.forEach(n -> n.stop(Duration.ofMillis(100)));
        for (BlackholeProxy p : proxies) {
            p.close();
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    /** What every origin's messages reached a cluster: counters seen, and how far they are complete. */
    private static final class Arrivals {
        private final Map<String, BitSet> seen = new ConcurrentHashMap<>();

        synchronized void add(String origin, long counter) {
            seen.computeIfAbsent(origin, o -> new BitSet()).set((int) counter);
        }

        /** The first counter of {@code origin} not stored yet. */
        synchronized long complete(String origin) {
            BitSet s = seen.get(origin);
            return s == null ? 0 : s.nextClearBit(0);
        }
    }

    private static Arrivals record(Node node) {
        Arrivals arrivals = new Arrivals();
        node.cluster().storage(T).onAppend((cluster, segment, stored) -> {
            Entry entry = Entry.parse(stored.bytes().duplicate());
            if (!entry.isReplicated()) {
                return;
            }
            for (Message m : Entries.messages(entry)) {
                String[] p = StandardCharsets.UTF_8.decode(m.payload().duplicate()).toString().split("/");
                arrivals.add(p[0], Long.parseLong(p[1]));
            }
        });
        return arrivals;
    }

    /** Produces {@code origin/0}, {@code origin/1}, … on {@code node} every 20 ms; the counter is the next to go. */
    private Thread produce(Node node, String origin, AtomicLong counter) {
        Thread t = new Thread(() -> {
            var producer = node.cluster().producer(T, Compression.NONE);
            while (producing.get()) {
                long n = counter.get();
                producer.sendNow(List.of(Message.of("key-" + (n % 32), DeliveryChecks.payload(origin, n))));
                counter.incrementAndGet();
                try {
                    Thread.sleep(20);
                } catch (InterruptedException e) {
                    return;
                }
            }
        }, "produce-" + origin);
        t.setDaemon(true);
        t.start();
        return t;
    }

    private BlackholeProxy proxy(String host, int port) throws IOException {
        BlackholeProxy p = new BlackholeProxy(host, port, new InetSocketAddress("127.0.0.1", port));
        proxies.add(p);
        return p;
    }

    /**
     * With {@code config/samples/nodes.yaml}'s retries, backing off to 2 s. A machine that holds this JVM's threads
     * still for a while (a shared one, loaded many times over) delays everything by as much: the bound allows the
     * longest such pause measured while the clusters drained, nothing more.
     */
    @Test
    void everyDirectionDrainsWithinTwoSecondsPlusTheBackoffAfterASilentPartitionHeals() throws Exception {
        Duration[] drained = partitionAndHeal("{initial: 50ms, max: 2s, jitter: 0.5}");
        Duration bound = Duration.ofSeconds(2).plus(Duration.ofSeconds(2)).plus(drained[2]);
        assertThat(drained[0]).as("a->b").isLessThanOrEqualTo(bound);
        assertThat(drained[1]).as("b->a").isLessThanOrEqualTo(bound);
    }

    /** The run of the class comment, {@code retry} the replicators'; each direction's time to drain. */
    private Duration[] partitionAndHeal(String retry) throws Exception {
        int aAdmin = freePort();
        int aBroker = freePort();
        int bAdmin = freePort();
        int bBroker = freePort();
        // As config/samples/nodes.yaml: a send timeout of 10 s.
        VerbatimConfig config = VerbatimConfig.parse("""
                clusters:
                  - {name: a, token: a-token, bindAddress: 127.0.0.1, advertisedAddress: 127.0.0.3, adminPort: %d, brokerPorts: [%d]}
                  - {name: b, token: b-token, bindAddress: 127.0.0.1, advertisedAddress: 127.0.0.2, adminPort: %d, brokerPorts: [%d]}
                topics: [{name: %s, initialSegments: 2, bucketBudget: 4}]
                replication: {startAt: earliest, sendTimeout: 10s, retry: %s}
                exchange: {antiEntropyInterval: 2s, requestTimeout: 5s, retry: {initial: 50ms, max: 2s, jitter: 0.5}}
                storage: {deleteConsumed: true}
                """.formatted(aAdmin, aBroker, bAdmin, bBroker, T, retry));
        proxy("127.0.0.3", aAdmin);
        proxy("127.0.0.3", aBroker);
        proxy("127.0.0.2", bAdmin);
        proxy("127.0.0.2", bBroker);
        Node a = Node.start(config, "a", Optional.empty());
        nodes.add(a);
        Node b = Node.start(config, "b", Optional.empty());
        nodes.add(b);
        Arrivals atA = record(a);
        Arrivals atB = record(b);
        AtomicLong fromA = new AtomicLong();
        AtomicLong fromB = new AtomicLong();
        produce(a, "a", fromA);
        produce(b, "b", fromB);
        awaitComplete(atB, "a", 1, Duration.ofSeconds(30));
        awaitComplete(atA, "b", 1, Duration.ofSeconds(30));

        proxies.forEach(BlackholeProxy::partition);
        Thread.sleep(PARTITION.toMillis() / 2);
        // a layout change on b that a can learn only from b's layout stream, which the partition froze
        long segment = b.cluster().layout(T).activeSegments().get(0).id();
        b.cluster().controller().split(T, segment).block(Duration.ofSeconds(10));
        Thread.sleep(PARTITION.toMillis() / 2);
        // Status shows what stands still: replicators rewinding across the partition are stalled, not failing.
        NodeStatus during = a.cluster().status().block(Duration.ofSeconds(10));
        assertThat(during.replicators().failing()).isEmpty();
        assertThat(during.replicators().stalled()).isNotEmpty().allSatisfy(r -> {
            assertThat(r.id()).endsWith("-->b");
            assertThat(r.backlog()).isPositive();
            assertThat(r.stalledFor().orElseThrow()).isGreaterThanOrEqualTo(config.replication().stallAfter());
        });
        assertThat(a.cluster().registry().scrape()).containsPattern(
                "verbatim_replication_stalled\\{[^}]*remote_cluster=\"b\"[^}]*\\} [1-9]");
        long lastA = fromA.get();
        long lastB = fromB.get();
        Pauses pauses = new Pauses();
        long healed = System.nanoTime();
        proxies.forEach(BlackholeProxy::heal);

        long[] drained = awaitComplete(List.of(atB, atA), List.of("a", "b"), List.of(lastA, lastB),
                Duration.ofSeconds(90));
        long aToB = drained[0] - healed;
        long bToA = drained[1] - healed;
        Duration paused = pauses.stop();
        System.out.printf("after a silent partition of %d s, retry %s: a->b drained %d ms after the heal, b->a %d ms "
                + "(longest pause of a thread meanwhile: %d ms)%n", PARTITION.toSeconds(), retry, aToB / 1_000_000,
                bToA / 1_000_000, paused.toMillis());
        for (Node n : nodes) {
            assertThat(Flux.interval(Duration.ofMillis(50)).onBackpressureDrop().concatMap(t -> n.cluster().status())
                    .filter(st -> st.replicators().stalled().isEmpty()).blockFirst(Duration.ofSeconds(30))).isNotNull();
        }
        return new Duration[] {Duration.ofNanos(aToB), Duration.ofNanos(bToA), paused};
    }

    /** The longest a thread that sleeps 10 ms at a time overslept: how long the machine held this JVM still. */
    private static final class Pauses {
        private final AtomicBoolean running = new AtomicBoolean(true);
        private final AtomicLong longestNanos = new AtomicLong();
        private final Thread thread = new Thread(() -> {
            while (running.get()) {
                long t0 = System.nanoTime();
                try {
                    Thread.sleep(10);
                } catch (InterruptedException e) {
                    return;
                }
                longestNanos.accumulateAndGet(System.nanoTime() - t0 - 10_000_000, Math::max);
            }
        }, "pauses");

        Pauses() {
            thread.setDaemon(true);
            thread.start();
        }

        Duration stop() {
            running.set(false);
            return Duration.ofNanos(Math.max(0, longestNanos.get()));
        }
    }

    /** Waits until {@code arrivals} holds {@code origin}'s counters below {@code count}; when, in nanos. */
    private static long awaitComplete(Arrivals arrivals, String origin, long count, Duration max)
            throws InterruptedException {
        return awaitComplete(List.of(arrivals), List.of(origin), List.of(count), max)[0];
    }

    /** For each i, when {@code arrivals[i]} held {@code origins[i]}'s counters below {@code counts[i]}, in nanos. */
    private static long[] awaitComplete(List<Arrivals> arrivals, List<String> origins, List<Long> counts, Duration max)
            throws InterruptedException {
        long deadline = System.nanoTime() + max.toNanos();
        long[] when = new long[arrivals.size()];
        int left = arrivals.size();
        while (left > 0) {
            long now = System.nanoTime();
            for (int i = 0; i < when.length; i++) {
                if (when[i] == 0 && arrivals.get(i).complete(origins.get(i)) >= counts.get(i)) {
                    when[i] = now;
                    left--;
                }
            }
            if (left > 0 && now > deadline) {
                throw new AssertionError("not every message arrived within " + max + ": " + origins + " complete up to "
                        + arrivals.stream().map(a -> a.complete(origins.get(arrivals.indexOf(a)))).toList()
                        + " of " + counts);
            }
            Thread.sleep(5);
        }
        return when;
    }
}
