package io.verbatim.bench;

import io.verbatim.config.VerbatimConfig;
import io.verbatim.metadatalog.state.SegmentKey;
import io.verbatim.pulsar.broker.PulsarProcess;
import io.verbatim.runtime.Node;
import io.verbatim.runtime.controller.LeasedOwnership;
import java.io.IOException;
import java.io.PrintStream;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * Issue 25's topology in this JVM, for the benchmarks of a cluster's broker members: cluster {@code a} with three
 * controller replicas (voters of its metadata log) and {@code members} broker members (listeners), cluster
 * {@code b} one node, both on one Pulsar broker (a child process), {@code a} replicating one topic of
 * {@code segments} segments to {@code b}. Every node is started as {@code verbatim node --member} starts it
 * ({@link Node#start}), in this process: members share the JVM, its CPU and its heap.
 *
 * <p>The lease is 4 s, reports and planning every 500 ms, no minimum tenure and no limit on balancing moves, so a
 * member started again takes its share back at once (what a benchmark needs between rounds; the shipped defaults
 * are a 10 s lease and 8 moves per 10 s). The local policy (autoscale) is off: the layout stays as it starts.
 */
final class MemberCluster implements AutoCloseable {
    static final String TOPIC = "persistent://public/default/orders";
    static final Duration LEASE = Duration.ofSeconds(4);
    private static final AtomicInteger RUNS = new AtomicInteger();

    private final VerbatimConfig config;
    private final Path dir;
    private final PrintStream log;
    private final int run;
    private final int segments;
    private final List<Node> voters = new ArrayList<>();
    private final Map<String, Node> members = new ConcurrentSkipListMap<>();
    private final List<String> memberIds = new ArrayList<>();
    private @Nullable Node peer;

    private MemberCluster(VerbatimConfig config, int run, Path dir, int segments, int members, PrintStream log) {
        this.config = config;
        this.run = run;
        this.dir = dir;
        this.segments = segments;
        this.log = log;
        for (int i = 1; i <= members; i++) {
            memberIds.add("broker-" + i);
        }
    }

    /** A Pulsar broker for these benchmarks: a child process, as {@link PulsarBench} starts it. */
    static PulsarProcess broker(String heap, PrintStream log) throws IOException {
        if (System.getProperty("verbatim.pulsar.classpath") == null
                && System.getenv("VERBATIM_PULSAR_CLASSPATH") == null) {
            System.setProperty("verbatim.pulsar.classpath", "pulsar-standalone/target/standalone.classpath");
        }
        Path data = Files.createTempDirectory("verbatim-members-pulsar");
        log.printf(Locale.ROOT, "  starting a Pulsar broker on %s%n", data);
        PulsarProcess broker = PulsarProcess.start(PulsarProcess.Options.of(data).withHeap(heap));
        log.printf(Locale.ROOT, "  broker ready in %d ms (pid %d)%n", broker.startMillis(), broker.pid());
        return broker;
    }

    /**
     * Starts the controller replicas and {@code b}; no member yet ({@link #start}).
     *
     * @param members how many broker members the configuration names (broker-1 …)
     */
    static MemberCluster open(PulsarProcess broker, int segments, int members, PrintStream log) throws IOException {
        Path dir = Files.createTempDirectory("verbatim-members-bench");
        int run = RUNS.incrementAndGet() * 1000 + (int) (ProcessHandle.current().pid() % 1000);
        MemberCluster c = new MemberCluster(VerbatimConfig.parse(yaml(broker, run, segments, members)), run, dir,
                segments, members, log);
        try {
            for (String v : List.of("c1", "c2", "c3")) {
                c.voters.add(Node.start(c.config, "a", Optional.of(v), Optional.of(dir.resolve("a-" + v))));
            }
            c.peer = Node.start(c.config, "b", Optional.empty(), Optional.of(dir.resolve("b")));
        } catch (RuntimeException e) {
            c.close();
            throw e;
        }
        return c;
    }

    private static String yaml(PulsarProcess broker, int run, int segments, int members) throws IOException {
        StringBuilder m = new StringBuilder();
        for (int i = 1; i <= members; i++) {
            m.append(String.format(Locale.ROOT,
                    "      - {id: broker-%d, adminPort: %d, brokerPorts: [%d], raftPort: %d, secret: b%d-secret}%n",
                    i, freePort(), freePort(), freePort(), i));
        }
        return """
                clusters:
                  - name: a
                    token: a-token
                    controllers:
                      - {id: c1, adminPort: %d, raftPort: %d, secret: c1-secret}
                      - {id: c2, adminPort: %d, raftPort: %d, secret: c2-secret}
                      - {id: c3, adminPort: %d, raftPort: %d, secret: c3-secret}
                    brokerMembers:
                %s    pulsar: {serviceUrl: '%s', adminUrl: '%s', namespace: public/bench-a-%d}
                  - name: b
                    token: b-token
                    adminPort: %d
                    brokerPorts: [%d]
                    pulsar: {serviceUrl: '%s', adminUrl: '%s', namespace: public/bench-b-%d}
                topics: [{name: %s, initialSegments: %d, bucketBudget: %d}]
                caps: {maxSegments: %d}
                autoScale: {enabled: false}
                replication: {startAt: earliest, retry: {initial: 50ms, max: 1s, jitter: 0.5}}
                exchange: {antiEntropyInterval: 1s, retry: {initial: 20ms, max: 500ms, jitter: 0.5}}
                ownership: {lease: %ds, interval: 500ms, minTenure: 0s, maxMoves: 10000, moveInterval: 1s,
                            drainTimeout: 60s}
                security: {adminToken: admin-token}
                storage: pulsar
                """.formatted(freePort(), freePort(), freePort(), freePort(), freePort(), freePort(), m,
                broker.serviceUrl(), broker.webUrl(), run, freePort(), freePort(), broker.serviceUrl(), broker.webUrl(),
                run, TOPIC, segments, 4, Math.max(segments, 64), LEASE.toSeconds());
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    /** The configuration the nodes run (the traffic's namespace is in it). */
    VerbatimConfig config() {
        return config;
    }

    /** The Pulsar namespace of cluster {@code a}'s segments. */
    String namespaceOfA() {
        return "public/bench-a-" + run;
    }

    /** The broker member ids the configuration names, in order. */
    List<String> memberIds() {
        return memberIds;
    }

    /** The members running now, by id. */
    Map<String, Node> running() {
        return members;
    }

    /** Starts member {@code id} (again, after a stop: on the data directory it had). */
    Node start(String id) {
        Node n = Node.start(config, "a", Optional.of(id), Optional.of(dir.resolve("a-" + id)));
        members.put(id, n);
        return n;
    }

    /** Closes member {@code id} without draining: as SIGKILL leaves it, but within this JVM (sockets closed). */
    void kill(String id) {
        Node n = member(id);
        members.remove(id);
        n.cluster().close(); // its two schedulers' threads stay, idle: a Node has no way to drop them without a stop
    }

    /** Stops member {@code id} as SIGTERM does ({@link Node#stop}: it drains, then stops); blocks until stopped. */
    void stop(String id) {
        Node n = member(id);
        members.remove(id);
        n.stop(config.ownership().drainTimeout());
    }

    /** What member {@code id} acts on now (its replica's table under its lease). */
    Set<SegmentKey> acting(String id) {
        return ((LeasedOwnership) member(id).cluster().ownership()).acting();
    }

    private Node member(String id) {
        Node n = members.get(id);
        if (n == null) {
            throw new IllegalArgumentException("member " + id + " is not running");
        }
        return n;
    }

    /** Whether member {@code id} acts on {@code segment} now. */
    boolean acts(String id, SegmentKey segment) {
        Node n = members.get(id);
        return n != null && n.cluster().ownership().owns(segment.topic(), segment.segment());
    }

    /**
     * Waits until the running members share every segment, none twice, each acting on at least one, and nothing is
     * being moved (no member's replica shows a segment releasing): the state a round starts from.
     */
    void awaitSettled(Duration within) {
        await(() -> "the " + segments + " segments shared by " + members.keySet() + ": " + shares(), within, () -> {
            Set<SegmentKey> all = new HashSet<>();
            int sum = 0;
            for (String id : members.keySet()) {
                Set<SegmentKey> mine = acting(id);
                if (mine.isEmpty()) {
                    return false;
                }
                sum += mine.size();
                all.addAll(mine);
                if (((LeasedOwnership) member(id).cluster().ownership()).table().segments().values().stream()
                        .anyMatch(o -> o.phase() != io.verbatim.metadatalog.state.SegmentOwner.Phase.OWNED)) {
                    return false;
                }
            }
            return sum == segments && all.size() == segments;
        });
    }

    /** Each running member's count of segments, for the progress lines. */
    String shares() {
        StringBuilder s = new StringBuilder();
        members.keySet().forEach(id -> s.append(s.length() == 0 ? "" : ", ").append(id).append(' ')
                .append(acting(id).size()));
        return s.toString();
    }

    /** Waits until the running members' replication to {@code b} has nothing left (as their storage last polled). */
    void awaitCaughtUp(Duration within) {
        await(() -> "replication caught up", within, () -> members.values().stream().allMatch(n -> n.cluster()
                .caughtUp()));
    }

    static void await(Supplier<String> what, Duration within, BooleanSupplier condition) {
        long deadline = System.nanoTime() + within.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("not within " + within + ": " + what.get());
            }
            sleep(20);
        }
    }

    static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** The topic's segments' count. */
    int segments() {
        return segments;
    }

    /** Progress to standard error, indented as the suite's. */
    void say(String format, Object... args) {
        log.printf(Locale.ROOT, "  " + format + "%n", args);
    }

    @Override
    public void close() {
        for (Node n : members.values()) {
            n.stop(Duration.ofSeconds(2));
        }
        members.clear();
        if (peer != null) {
            peer.stop(Duration.ofSeconds(2));
        }
        voters.forEach(v -> v.stop(Duration.ofSeconds(2)));
    }
}
