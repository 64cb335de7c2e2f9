package io.verbatim.examples;

import io.verbatim.config.VerbatimConfig;
import io.verbatim.model.Layout;
import io.verbatim.model.Outcome;
import io.verbatim.model.Segment;
import io.verbatim.model.proto.CompressionType;
import io.verbatim.pipeline.ReplicatorMetrics;
import io.verbatim.pipeline.memory.MemoryCluster;
import io.verbatim.pipeline.memory.ReplicationChecks;
import io.verbatim.runtime.ClusterNode;
import io.verbatim.runtime.DeliveryChecks;
import io.verbatim.runtime.EmbeddedRuntime;
import io.verbatim.runtime.Producer;
import io.verbatim.runtime.Subscription;
import io.verbatim.runtime.Traffic;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import reactor.core.publisher.Flux;

/**
 * The main job: clusters on loopback replicating one topic in every direction under keyed traffic,
 * while the first cluster splits twice and rebuckets once; then every check, a summary and, on request,
 * a JSON line and an HTML report.
 */
final class Demo {

    /**
     * What the demo runs with.
     *
     * @param outage how long the last cluster's brokers refuse replication from 75 % of the run on (zero: never)
     */
    record Options(VerbatimConfig config, Duration duration, int rate, int batch, int keys, long seed,
            Duration outage) {
    }

    /** One second of the run: replication rates summed over every cluster and remote. */
    record Tick(double atSeconds, double verbatimPerSecond, double rebatchedPerSecond, long produced, long backlog) {
    }

    /** A layout change the demo made, and how long until every cluster held the same layout again. */
    record Change(double atSeconds, String what, long convergedAfterMs) {
    }

    /** Replication out of one origin: entries per path, summed over its remotes. */
    record Flow(long produced, long verbatimEntries, long rebatchedEntries, long rebatchedParts, long sendFailures) {
    }

    record Result(Options options, String topic, Map<String, Flow> flows, List<Tick> ticks, List<Change> changes,
            List<ReplicationChecks.Check> checks, double catchUpSeconds, Map<String, String> layouts,
            Map<String, String> statusPages) {
        boolean passed() {
            return checks.stream().allMatch(ReplicationChecks.Check::passed);
        }

        double verbatimShare() {
            long v = flows.values().stream().mapToLong(Flow::verbatimEntries).sum();
            long r = flows.values().stream().mapToLong(Flow::rebatchedEntries).sum();
            return v + r == 0 ? 0 : v / (double) (v + r);
        }
    }

    private final Options options;
    private final PrintWriter progress;

    Demo(Options options, PrintWriter progress) {
        this.options = options;
        this.progress = progress;
    }

    Result run() {
        VerbatimConfig config = options.config();
        String topic = config.topics().get(0).name();
        progress.printf("verbatim demo: %d clusters %s, topic %s, %d msg/s per cluster for %ds%s%n",
                config.clusters().size(), config.clusters().stream().map(c -> c.name()).toList(), topic,
                options.rate(), options.duration().toSeconds(),
                config.rtt().isZero() ? "" : ", simulated round trip " + config.rtt().toMillis() + " ms");
        try (EmbeddedRuntime runtime = EmbeddedRuntime.start(config)) {
            Map<String, String> pages = new LinkedHashMap<>();
            runtime.clusters().forEach((name, node) -> pages.put(name, node.adminUrl() + "/"));
            pages.forEach((name, url) -> progress.printf("  %-10s status page %s  (JSON %sadmin/v2/scalable/status,"
                    + " Prometheus %smetrics)%n", name, url, url, url));
            Map<String, Producer> producers = new LinkedHashMap<>();
            Map<String, Subscription> subscriptions = new LinkedHashMap<>();
            runtime.clusters().forEach((name, node) -> {
                producers.put(name, node.producer(topic, CompressionType.LZ4));
                Subscription s = node.subscribe(topic, "demo-checks", 3, true);
                // Its consumers read as they would in an application: one nobody reads holds dispatch back
                // once its queue (subscriptions.receiverQueueSize) is full.
                Flux.range(0, s.consumers()).flatMap(s::consumer, s.consumers()).subscribe();
                subscriptions.put(name, s);
            });
            Traffic traffic = new Traffic(producers, options.keys(), 0.02, options.seed());
            ClusterNode first = runtime.clusters().values().iterator().next();
            List<Tick> ticks = new ArrayList<>();
            List<Change> changes = new CopyOnWriteArrayList<>();

            long startNanos = System.nanoTime();
            long durationNanos = options.duration().toNanos();
            long[] last = totals(runtime, topic);
            long lastTickNanos = startNanos;
            int step = 0;
            double[] plan = {0.25, 0.45, 0.65};
            ClusterNode victim = List.copyOf(runtime.clusters().values()).get(runtime.clusters().size() - 1);
            int outageStep = 0;
            long outageEnds = 0;
            while (true) {
                long now = System.nanoTime();
                long elapsed = now - startNanos;
                if (elapsed >= durationNanos) {
                    break;
                }
                // Keep every origin on its rate: send what is due, one produce call per batch.
                long due = (long) (options.rate() * (elapsed / 1e9));
                for (String origin : producers.keySet()) {
                    while (traffic.produced(origin) < due) {
                        traffic.send(origin, options.batch());
                    }
                }
                if (!options.outage().isZero() && outageStep == 0 && elapsed >= 0.75 * durationNanos) {
                    victim.stopIngest();
                    outageEnds = elapsed + options.outage().toNanos();
                    outageStep = 1;
                    progress.printf("  t=%4.1fs %s's brokers go down for %d ms: replication into it fails%n",
                            elapsed / 1e9, victim.name(), options.outage().toMillis());
                }
                if (outageStep == 1 && elapsed >= outageEnds) {
                    victim.restartIngest();
                    outageStep = 2;
                    progress.printf("  t=%4.1fs %s's brokers are back%n", elapsed / 1e9, victim.name());
                }
                if (step < plan.length && elapsed >= plan[step] * durationNanos) {
                    change(runtime, first, topic, step, elapsed / 1e9, changes);
                    step++;
                }
                if (now - lastTickNanos >= 1_000_000_000L) {
                    long[] current = totals(runtime, topic);
                    double seconds = (now - lastTickNanos) / 1e9;
                    ticks.add(new Tick(elapsed / 1e9, (current[0] - last[0]) / seconds, (current[1] - last[1]) / seconds,
                            traffic.total(), backlog(runtime, topic)));
                    printProgress(runtime, topic, ticks.get(ticks.size() - 1), current);
                    last = current;
                    lastTickNanos = now;
                }
                sleepQuietly(5);
            }
            if (outageStep == 1) {
                victim.restartIngest();
                progress.printf("  %s's brokers are back%n", victim.name());
            }
            long stopped = System.nanoTime();
            progress.printf("traffic stopped after %,d messages; waiting for replication and convergence...%n",
                    traffic.total());
            runtime.awaitQuiet(Duration.ofSeconds(120)).block();
            long quietAt = System.nanoTime();
            double catchUp = (quietAt - stopped) / 1e9;
            long[] end = totals(runtime, topic);
            double sinceTick = Math.max(0.001, (quietAt - lastTickNanos) / 1e9);
            ticks.add(new Tick((quietAt - startNanos) / 1e9, (end[0] - last[0]) / sinceTick,
                    (end[1] - last[1]) / sinceTick, traffic.total(), backlog(runtime, topic)));

            Map<String, MemoryCluster> storage = new LinkedHashMap<>();
            runtime.clusters().forEach((name, node) -> storage.put(name, node.storage(topic)));
            List<ReplicationChecks.Check> checks = new ArrayList<>(DeliveryChecks.run(storage, traffic.produced()));
            subscriptions.forEach((name, s) -> checks.addAll(DeliveryChecks.consumers(name,
                    s.deliveries().take(Duration.ofMillis(300)).collectList().block())));
            for (ClusterNode node : runtime.clusters().values()) {
                checks.add(DeliveryChecks.replicators(node));
            }
            Map<String, Flow> flows = new LinkedHashMap<>();
            runtime.clusters().forEach((name, node) -> flows.put(name, flow(node, topic, traffic.produced().get(name))));
            Map<String, String> layouts = new LinkedHashMap<>();
            runtime.clusters().forEach((name, node) -> layouts.put(name, describe(node.layout(topic))));
            return new Result(options, topic, flows, ticks, changes, checks, catchUp, layouts, pages);
        }
    }

    /** The scripted layout changes on the first cluster: split, split, rebucket. */
    private void change(EmbeddedRuntime runtime, ClusterNode node, String topic, int step, double atSeconds,
            List<Change> changes) {
        Layout layout = node.layout(topic);
        List<Segment> active = layout.activeSegments();
        Outcome outcome;
        String what;
        if (step < 2) {
            Segment widest = active.stream().max((x, y) -> Integer.compare(x.range().size(), y.range().size()))
                    .orElseThrow();
            what = "split " + widest.descriptor() + " on " + node.name();
            outcome = node.split(topic, widest.id()).block();
        } else {
            Segment target = active.get(active.size() - 1);
            int n = Math.min(target.buckets().count() * 2, runtime.config().caps().maxEntryBucketsPerSegment());
            what = "rebucket " + target.descriptor() + " to N=" + n + " on " + node.name();
            outcome = node.rebucket(topic, target.id(), n).block();
        }
        if (!(outcome instanceof Outcome.Applied)) {
            progress.printf("  %s refused: %s%n", what, outcome);
            return;
        }
        long began = System.nanoTime();
        progress.printf("  t=%4.1fs %s%n", atSeconds, what);
        // Measured in the background: the traffic goes on meanwhile.
        Flux.interval(Duration.ofMillis(2), runtime.timer())
                .filter(t -> runtime.converged(topic)).next()
                .subscribe(t -> changes.add(new Change(atSeconds, what, (System.nanoTime() - began) / 1_000_000)));
    }

    private void printProgress(EmbeddedRuntime runtime, String topic, Tick tick, long[] totals) {
        StringBuilder epochs = new StringBuilder();
        runtime.clusters().forEach((name, node) -> epochs.append(epochs.length() == 0 ? "" : "/")
                .append(node.layout(topic).epoch()));
        double share = totals[0] + totals[1] == 0 ? 0 : 100.0 * totals[0] / (totals[0] + totals[1]);
        progress.printf(Locale.ROOT, "[%5.1fs/%ds] produced %,9d msgs · replicated %,8d entries (%5.1f%% verbatim) · "
                        + "now %,7.0f verbatim/s %,6.0f re-batched/s · epochs %s · backlog %,d%n",
                tick.atSeconds(), options.duration().toSeconds(), tick.produced(), totals[0] + totals[1], share,
                tick.verbatimPerSecond(), tick.rebatchedPerSecond(), epochs, tick.backlog());
    }

    /** {verbatim entries, re-batched entries} replicated so far, every cluster toward every remote. */
    private static long[] totals(EmbeddedRuntime runtime, String topic) {
        long[] t = new long[2];
        for (ClusterNode node : runtime.clusters().values()) {
            for (String peer : node.peers()) {
                ReplicatorMetrics m = node.replication(topic, peer);
                t[0] += m.verbatimEntries();
                t[1] += m.rebatchedEntries();
            }
        }
        return t;
    }

    private static long backlog(EmbeddedRuntime runtime, String topic) {
        long b = 0;
        for (ClusterNode node : runtime.clusters().values()) {
            for (String peer : node.peers()) {
                b += node.backlog(topic, peer).values().stream().mapToLong(Long::longValue).sum();
            }
        }
        return b;
    }

    private static Flow flow(ClusterNode node, String topic, long produced) {
        long v = 0;
        long r = 0;
        long parts = 0;
        long failures = 0;
        for (String peer : node.peers()) {
            ReplicatorMetrics m = node.replication(topic, peer);
            v += m.verbatimEntries();
            r += m.rebatchedEntries();
            parts += m.rebatchedParts();
            failures += m.sendFailures();
        }
        return new Flow(produced, v, r, parts, failures);
    }

    static String describe(Layout layout) {
        StringBuilder b = new StringBuilder("epoch " + layout.epoch() + ":");
        for (Segment s : layout.activeSegments()) {
            b.append(' ').append(s.range().toHexString()).append("/N").append(s.buckets().count());
        }
        return b.toString();
    }

    private static void sleepQuietly(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }
}
