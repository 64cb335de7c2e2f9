package io.verbatim.examples;

import io.verbatim.examples.FaultChecker.Report;
import io.verbatim.examples.FaultChecker.Rule;
import io.verbatim.examples.FaultChecker.Violation;
import io.verbatim.examples.FaultTable.Drain;
import io.verbatim.examples.FaultTable.Phase;
import io.verbatim.examples.FaultTable.Splits;
import java.io.IOException;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Three {@code verbatim node} processes behind a {@link FaultNetwork}, producing all along ({@link FaultTraffic}),
 * and what one fault does to them: a phase is traffic, the fault, splits on one or two clusters during it, the
 * heal, a produce call to each node that must be acknowledged, the time each direction takes to drain, and the
 * {@link FaultChecker} on what every cluster then stores. A violation is reported in the first phase that finds
 * it.
 */
final class FaultSuite implements AutoCloseable {
    static final String TOPIC = "persistent://public/default/orders";
    static final String ADMIN_TOKEN = "fault-suite-admin-token";
    private static final Duration SPLIT_TIMEOUT = Duration.ofSeconds(5);
    private static final Duration PROBE_TIMEOUT = Duration.ofSeconds(30);

    /**
     * @param warmup    traffic before the fault
     * @param fault     how long the fault lasts (splits at 40 % of it)
     * @param drainDeadline how long after the heal a direction may take before it counts as not drained
     * @param maxSegments no split on a cluster that holds this many segments
     * @param splits whether each phase splits during its fault (the splits scenario always does)
     */
    record Settings(Duration warmup, Duration fault, Duration drainDeadline, FaultTraffic.Settings traffic,
            int maxSegments, boolean splits) {
    }

    /** Where the clusters keep their segments. */
    sealed interface Storage {
        /** The embedded storage, each node with its data directory. */
        record Embedded() implements Storage {
        }

        /** Each cluster a namespace of its own on one Pulsar broker. */
        record OnPulsar(String serviceUrl, String adminUrl, String namespacePrefix) implements Storage {
            String namespace(String cluster) {
                return "public/" + namespacePrefix + "-" + cluster;
            }
        }
    }

    private final List<String> clusters;
    private final Storage storage;
    private final Settings settings;
    private final Path dir;
    private final Path keptLogs;
    private final NodeProcesses nodes;
    private final FaultNetwork network;
    private final Map<String, Path> configs = new LinkedHashMap<>();
    private final Map<String, Integer> starts = new LinkedHashMap<>();
    private final Set<String> paused = new LinkedHashSet<>();
    private final Set<String> reported = new HashSet<>();
    private final ProduceLedger ledger;
    private final FaultTraffic traffic;
    private final FaultTable table;
    private final DrainWatch drainWatch;
    private final List<Violation> processViolations = new ArrayList<>();
    private StoreView view;
    private int phases;
    private volatile String lastSplitProblem = "none";

    private FaultSuite(List<String> clusters, Storage storage, Settings settings, Path dir, Path keptLogs, long seed,
            String title) throws IOException {
        this.clusters = List.copyOf(clusters);
        this.storage = storage;
        this.settings = settings;
        this.dir = dir;
        this.keptLogs = keptLogs;
        this.nodes = new NodeProcesses(dir, ADMIN_TOKEN, Duration.ofSeconds(120), false);
        List<FaultNetwork.Member> members = new ArrayList<>();
        for (String c : clusters) {
            int admin = NodeProcesses.freePort();
            nodes.adminPort(c, admin);
            members.add(new FaultNetwork.Member(c, List.of(admin, NodeProcesses.freePort())));
        }
        this.network = new FaultNetwork(members, seed);
        this.ledger = new ProduceLedger(clusters);
        Map<String, Integer> adminPorts = new LinkedHashMap<>();
        members.forEach(m -> adminPorts.put(m.name(), m.ports().get(0)));
        this.traffic = new FaultTraffic(nodes, adminPorts, clusters, TOPIC, ADMIN_TOKEN, ledger, settings.traffic(), seed);
        this.table = new FaultTable(title);
        this.drainWatch = new DrainWatch(nodes, clusters, TOPIC);
    }

    /**
     * Starts the network and a node per cluster, each from a YAML of its own (its peers at their links' addresses),
     * and waits until every node is ready.
     *
     * @param keptLogs where the nodes' logs are copied at the end (the temporary directory goes)
     */
    static FaultSuite start(List<String> clusters, Storage storage, Settings settings, Path dir, Path keptLogs, long seed,
            String title) throws Exception {
        FaultSuite suite = new FaultSuite(clusters, storage, settings, dir, keptLogs, seed, title);
        try {
            suite.startAll();
        } catch (Exception | Error e) {
            suite.close();
            throw e;
        }
        return suite;
    }

    private void startAll() throws Exception {
        network.start();
        for (String c : clusters) {
            Path yaml = dir.resolve(c + ".yaml");
            Files.writeString(yaml, yaml(c));
            configs.put(c, yaml);
        }
        for (String c : clusters) {
            startNode(c);
        }
        for (String c : clusters) {
            awaitReady(c);
        }
        view = storage instanceof Storage.OnPulsar p
                ? new StoreView.OnPulsar(p.serviceUrl(), p.adminUrl(), TOPIC, namespaces(p))
                : new StoreView.Images(nodes, TOPIC);
    }

    private Map<String, String> namespaces(Storage.OnPulsar p) {
        Map<String, String> out = new LinkedHashMap<>();
        clusters.forEach(c -> out.put(c, p.namespace(c)));
        return out;
    }

    /** {@code viewer}'s YAML: every cluster at the address {@code viewer} reaches it by (its link, or its own door). */
    private String yaml(String viewer) {
        StringBuilder y = new StringBuilder("clusters:\n");
        for (FaultNetwork.Member m : network.members()) {
            y.append("  - name: ").append(m.name()).append("\n    token: ").append(m.name()).append("-token")
                    .append("\n    bindAddress: ").append(FaultNetwork.NODE_ADDRESS)
                    .append("\n    advertisedAddress: ").append(network.advertised(viewer, m.name()))
                    .append("\n    adminPort: ").append(m.ports().get(0))
                    .append("\n    brokerPorts: ").append(m.ports().subList(1, m.ports().size())).append('\n');
            if (storage instanceof Storage.OnPulsar p) {
                y.append("    pulsar: {serviceUrl: '").append(p.serviceUrl()).append("', adminUrl: '").append(p.adminUrl())
                        .append("', namespace: ").append(p.namespace(m.name())).append("}\n");
            }
        }
        y.append("""
                topics:
                  - name: %s
                    initialSegments: 2
                    bucketBudget: 4
                replication:
                  startAt: earliest
                  sendTimeout: 5s
                  retry: { initial: 20ms, max: 500ms, jitter: 0.5 }
                exchange:
                  antiEntropyInterval: 1s
                  retry: { initial: 20ms, max: 500ms, jitter: 0.5 }
                security:
                  adminToken: %s
                storage:
                  type: %s
                  deleteConsumed: false
                  pruneSealed: false
                """.formatted(TOPIC, ADMIN_TOKEN, storage instanceof Storage.OnPulsar ? "pulsar" : "memory"));
        return y.toString();
    }

    List<String> clusters() {
        return clusters;
    }

    String table() {
        return table.format();
    }

    // ---- a phase ------------------------------------------------------------------------------------------

    /** Runs {@code fault} as one phase; {@code random} draws the splits. */
    Phase run(Fault fault, Random random) throws Exception {
        int number = phases++;
        long started = System.nanoTime();
        processViolations.clear();
        long acknowledgedBefore = ledger.acknowledgedCount();
        traffic.start();
        long healedAt;
        Splits splits;
        try {
            TimeUnit.MILLISECONDS.sleep(settings.warmup().toMillis());
            long faultStart = System.nanoTime();
            apply(fault, random);
            TimeUnit.MILLISECONDS.sleep(settings.fault().toMillis() * 2 / 5);
            splits = settings.splits() || fault instanceof Fault.Splits ? split(random) : new Splits(0, 0, 0);
            long rest = faultStart + settings.fault().toNanos() - System.nanoTime();
            if (rest > 0) {
                TimeUnit.NANOSECONDS.sleep(rest);
            }
            healedAt = heal(fault);
        } finally {
            traffic.stop();
        }
        // Every node takes produce calls again, each answered within the probe's patience.
        for (String c : clusters) {
            // one id per node: a node that keeps refusing is reported by the phase that found it, not every later one
            traffic.probe(c, PROBE_TIMEOUT).ifPresent(failure -> processViolations.add(new Violation(Rule.TRAFFIC,
                    c + " refuses produce calls", c + " did not acknowledge a produce call "
                            + "after the heal (waited " + PROBE_TIMEOUT.toSeconds() + " s): " + failure)));
        }
        List<Drain> drains = drainWatch.await(healedAt, settings.drainDeadline());
        for (String c : clusters) {
            if (!nodes.process(c).isAlive()) {
                processViolations.add(new Violation(Rule.PROCESS, "phase " + number + ": " + c + " exited",
                        c + " exited with " + nodes.process(c).exitValue() + " (log: " + keptLogs.resolve(c + ".log") + ")"));
            }
        }
        StoreView.Snapshot snapshot = view.read(clusters);
        Report report = FaultChecker.check(snapshot.messages(), ledger.produced(), drainWatch.layouts());
        List<Violation> all = new ArrayList<>(report.violations());
        all.addAll(snapshot.placement());
        for (Drain d : drains) {
            if (d.millis().isEmpty()) {
                all.add(new Violation(Rule.DRAIN, "phase " + number + ": " + d.from() + "->" + d.to() + " not drained",
                        d.from() + "->" + d.to() + " not drained " + settings.drainDeadline().toSeconds()
                                + " s after the heal of " + fault.name() + " on " + fault.target() + ": " + d.last()));
            }
        }
        all.addAll(processViolations);
        if (ledger.acknowledgedCount() == acknowledgedBefore) {
            all.add(new Violation(Rule.TRAFFIC, "phase " + number + ": nothing acknowledged", "no produce call was "
                    + "acknowledged during the phase, so it checked nothing new; last failures " + traffic.lastFailures()));
        }
        if (network.unattributed() > 0) {
            all.add(new Violation(Rule.UNROUTED, "unattributed " + network.unattributed(), network.unattributed()
                    + " connection(s) to a cluster's advertised address named no caller:\n" + network.describe()));
        }
        List<Violation> fresh = all.stream().filter(v -> reported.add(v.id())).toList();
        Phase phase = new Phase(number, fault.name(), fault.target(), drains, ledger.acknowledgedCount(),
                report.checked(), ledger.unknownCount(), report.unknownEverywhere(), splits, fresh,
                TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started));
        table.add(phase);
        return phase;
    }

    private void apply(Fault fault, Random random) throws Exception {
        if (fault instanceof Fault.None) {
            return;
        }
        if (fault instanceof Fault.Blackhole b) {
            network.between(b.a(), b.b()).forEach(p -> p.stall(true, true));
        } else if (fault instanceof Fault.Reset r) {
            network.between(r.a(), r.b()).forEach(FaultProxy::refuse);
        } else if (fault instanceof Fault.OneWay o) {
            network.link(o.from(), o.to()).stall(true, false); // what `from` sends on its own connections
            network.link(o.to(), o.from()).stall(false, true); // and its answers on `to`'s
        } else if (fault instanceof Fault.Latency l) {
            network.links().forEach(p -> p.latency(l.latency()));
        } else if (fault instanceof Fault.HalfOpen h) {
            network.between(h.a(), h.b()).forEach(FaultProxy::halfOpen);
        } else if (fault instanceof Fault.Splits s) {
            concurrentSplits(s.clusters(), random); // and the phase's own at 40 % of the fault
        } else if (fault instanceof Fault.Abandon a) {
            // A split first, so the abandoned calls are the first to the new segments: on Pulsar the first call to
            // a segment makes its producer, and abandoning that call is what leaves the segment refusing calls.
            traffic.hold(a.cluster());
            splitOne(a.cluster(), random.nextDouble(), Integer.MAX_VALUE);
            traffic.abandonCalls(a.cluster(), random);
        } else if (fault instanceof Fault.Pause p) {
            nodes.signal(p.cluster(), "STOP");
            paused.add(p.cluster());
        } else if (fault instanceof Fault.Terminate t) {
            Process process = nodes.process(t.cluster());
            process.destroy(); // SIGTERM: a clean stop, which drains for up to --drain-timeout
            if (!process.waitFor(60, TimeUnit.SECONDS)) {
                processViolations.add(new Violation(Rule.PROCESS, "phase " + (phases - 1) + ": " + t.cluster() + " ignored SIGTERM",
                        t.cluster() + " did not stop within 60 s of SIGTERM"));
                process.destroyForcibly().waitFor();
            } else if (process.exitValue() != 0) {
                processViolations.add(new Violation(Rule.PROCESS, "phase " + (phases - 1) + ": " + t.cluster() + " exit code",
                        t.cluster() + " exited with " + process.exitValue() + " after SIGTERM"));
            }
        } else if (fault instanceof Fault.Kill k) {
            nodes.process(k.cluster()).destroyForcibly().waitFor(); // SIGKILL
        }
    }

    /** Undoes {@code fault}; answers when the cluster is whole again (for a restart: when the node is ready). */
    private long heal(Fault fault) throws Exception {
        if (fault instanceof Fault.Abandon a) {
            traffic.release(a.cluster());
        } else if (fault instanceof Fault.Pause p) {
            nodes.signal(p.cluster(), "CONT");
            paused.remove(p.cluster());
        } else if (fault instanceof Fault.Terminate t) {
            startNode(t.cluster());
            awaitReady(t.cluster());
        } else if (fault instanceof Fault.Kill k) {
            startNode(k.cluster());
            awaitReady(k.cluster());
        } else {
            network.healAll();
        }
        return System.nanoTime();
    }

    private void startNode(String c) throws IOException {
        nodes.start(c, configs.get(c));
        starts.merge(c, 1, Integer::sum);
    }

    private void awaitReady(String c) throws InterruptedException {
        nodes.awaitLine(c, c + ": ready", starts.get(c));
    }

    // ---- splits during the fault --------------------------------------------------------------------------

    /** A split on one or two clusters at once (drawn from {@code random}), of a segment each holds. */
    private Splits split(Random random) throws InterruptedException {
        List<String> targets = random.nextBoolean() ? Fault.pair(clusters, random) : List.of(Fault.one(clusters, random));
        return concurrentSplits(targets, random);
    }

    /** A split on each of {@code targets} at the same moment, of a segment each holds (drawn from {@code random}). */
    private Splits concurrentSplits(List<String> targets, Random random) throws InterruptedException {
        Map<String, Double> picks = new LinkedHashMap<>();
        targets.forEach(t -> picks.put(t, random.nextDouble()));
        ExecutorService pool = Executors.newFixedThreadPool(targets.size());
        try {
            List<Future<Integer>> outcomes = new ArrayList<>();
            picks.forEach((target, pick) -> outcomes.add(pool.submit(() -> splitOne(target, pick,
                    settings.maxSegments()))));
            int[] counts = new int[3];
            for (Future<Integer> f : outcomes) {
                try {
                    counts[f.get(60, TimeUnit.SECONDS)]++;
                } catch (ExecutionException | TimeoutException e) {
                    counts[2]++;
                }
            }
            return new Splits(counts[0], counts[1], counts[2]);
        } finally {
            pool.shutdownNow();
        }
    }

    /** 0 applied, 1 refused, 2 failed (no answer, a 5xx, the node down); the last refusal or failure is kept. */
    private int splitOne(String cluster, double pick, int maxSegments) {
        try {
            List<Long> candidates = view.splitCandidates(cluster);
            if (candidates.isEmpty() || candidates.size() >= maxSegments) {
                lastSplitProblem = cluster + " holds " + candidates.size() + " segments: no split";
                return 1;
            }
            long segment = candidates.get((int) (pick * candidates.size()));
            HttpResponse<String> r = nodes.call(cluster, "POST", "/admin/v2/scalable/split?topic="
                    + NodeProcesses.enc(TOPIC) + "&segment=" + segment, null, SPLIT_TIMEOUT);
            if (r.statusCode() == 200 && r.body().contains("\"outcome\":\"applied\"")) {
                return 0;
            }
            lastSplitProblem = cluster + " split of " + segment + ": " + r.statusCode() + " " + r.body().strip();
            return r.statusCode() >= 500 ? 2 : 1;
        } catch (Exception e) {
            lastSplitProblem = cluster + ": " + e;
            return 2;
        }
    }

    /** What the last split that was not applied came to. */
    String lastSplitProblem() {
        return lastSplitProblem;
    }

    // ---- the end -----------------------------------------------------------------------------------------

    /** Heals everything, stops every node with SIGTERM, keeps the logs and writes the table beside them. */
    @Override
    public void close() {
        network.healAll();
        for (String c : List.copyOf(paused)) {
            try {
                nodes.signal(c, "CONT");
            } catch (Exception e) {
                // gone already
            }
        }
        for (Process p : nodes.processes().values()) {
            p.destroy();
        }
        for (Process p : nodes.processes().values()) {
            try {
                if (!p.waitFor(30, TimeUnit.SECONDS)) {
                    p.destroyForcibly();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        nodes.close();
        network.close();
        if (view != null) {
            view.close();
        }
        try {
            nodes.keepLogs(keptLogs);
            Files.writeString(keptLogs.resolve("table.txt"), table.format(), StandardOpenOption.CREATE,
                    StandardOpenOption.TRUNCATE_EXISTING);
        } catch (IOException e) {
            // the logs are a convenience; the table was printed too
        }
    }
}
