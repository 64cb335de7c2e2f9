package io.verbatim.examples;

import io.verbatim.config.TopicConfig;
import io.verbatim.config.VerbatimConfig;
import io.verbatim.metadatalog.server.MemberRole;
import io.verbatim.model.Buckets;
import io.verbatim.model.Compression;
import io.verbatim.model.Layout;
import io.verbatim.model.Outcome;
import io.verbatim.model.Segment;
import io.verbatim.pipeline.ReplicatorMetrics;
import io.verbatim.runtime.ClusterNode;
import io.verbatim.runtime.EmbeddedRuntime;
import io.verbatim.runtime.broker.Producer;
import io.verbatim.runtime.broker.Subscription;
import io.verbatim.testkit.DeliveryChecks;
import io.verbatim.testkit.ReplicationChecks;
import io.verbatim.testkit.ReplicationRecorder;
import io.verbatim.testkit.Traffic;
import java.io.PrintWriter;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryType;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import reactor.core.publisher.Flux;

/**
 * The main job: clusters on loopback replicating several topics in every direction under keyed traffic,
 * while layouts change: at 25 % of the run two topics split at the same moment on two clusters, at 45 %
 * the first splits again, at 65 % the second rebuckets; then every check on every topic, a summary and,
 * on request, a JSON line and an HTML report. Stored data is checked as it is stored, so a run of any
 * length keeps no message for the checks.
 */
final class Demo {
    /** The most batches one produce call takes when sending is behind its rate. */
    static final int CATCH_UP = 25;
    private static final String[] NAMES = {"orders", "payments", "shipments", "invoices", "returns", "reviews"};

    /**
     * What the demo runs with.
     *
     * @param outage how long the last cluster's brokers refuse replication from 75 % of the run on (zero: never)
     * @param topics how many topics replicate (the configuration's first, then more like it)
     * @param killLeader whether the first cluster's controller leader is killed at 55 % of the run
     */
    record Options(VerbatimConfig config, Duration duration, int rate, int batch, int keys, long seed,
            Duration outage, int topics, boolean killLeader) {
    }

    /** One second of the run: replication rates summed over every cluster, remote and topic. */
    record Tick(double atSeconds, double verbatimPerSecond, double rebatchedPerSecond, long produced, long backlog,
            long heapBytes) {
    }

    /** A layout change the demo made, and how long until every cluster held the same layout again. */
    record Change(double atSeconds, String what, long convergedAfterMs) {
    }

    /** Replication out of one origin: entries per path, summed over its remotes and topics. */
    record Flow(long produced, long verbatimEntries, long rebatchedEntries, long rebatchedParts, long sendFailures) {
    }

    record Result(Options options, List<String> topics, Map<String, Flow> flows, List<Tick> ticks,
            List<Change> changes, List<ReplicationChecks.Check> checks, double catchUpSeconds,
            Map<String, Map<String, String>> layouts, Map<String, String> statusPages) {
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

    /** The configuration's topics, and more like its first up to {@code count}. */
    static VerbatimConfig withTopics(VerbatimConfig config, int count) {
        List<TopicConfig> topics = new ArrayList<>(config.topics().subList(0, Math.min(count, config.topics().size())));
        TopicConfig first = config.topics().get(0);
        String prefix = first.name().contains("/") ? first.name().substring(0, first.name().lastIndexOf('/') + 1) : "";
        for (int i = topics.size(); i < count; i++) {
            String name = prefix + (i < NAMES.length ? NAMES[i] : "topic-" + i);
            if (name.equals(first.name())) {
                name = prefix + "topic-" + i;
            }
            topics.add(new TopicConfig(name, first.initialSegments(), first.bucketBudget()));
        }
        return config.withTopics(topics);
    }

    Result run() {
        VerbatimConfig config = withTopics(options.config(), options.topics());
        List<String> topics = config.topics().stream().map(TopicConfig::name).toList();
        progress.printf("verbatim demo: %d clusters %s, %d topic(s) %s, %d msg/s per cluster for %ds%s%n",
                config.clusters().size(), config.clusters().stream().map(c -> c.name()).toList(), topics.size(),
                topics.stream().map(Demo::shortName).toList(), options.rate(), options.duration().toSeconds(),
                config.rtt().isZero() ? "" : ", simulated round trip " + config.rtt().toMillis() + " ms");
        try (EmbeddedRuntime runtime = EmbeddedRuntime.start(config)) {
            Map<String, String> pages = new LinkedHashMap<>();
            runtime.clusters().forEach((name, node) -> pages.put(name, node.adminUrl() + "/"));
            pages.forEach((name, url) -> progress.printf("  %-10s status page %s  (JSON %sadmin/v2/scalable/status,"
                    + " Prometheus %smetrics)%n", name, url, url, url));
            Map<String, ReplicationRecorder> recorders = new LinkedHashMap<>();
            Map<String, Traffic> traffic = new LinkedHashMap<>();
            Map<String, Map<String, Subscription>> subscriptions = new LinkedHashMap<>();
            Map<String, Map<String, DeliveryChecks.ConsumerRecorder>> consumerChecks = new LinkedHashMap<>();
            boolean inMemory = !config.storage().onPulsar();
            for (String topic : topics) {
                if (inMemory) {
                    // what every cluster stores, checked as it is stored (on Pulsar the consumers' checks stand in)
                    recorders.put(topic, ReplicationRecorder.attach(runtime.storages(topic), true));
                }
                Map<String, Producer> producers = new LinkedHashMap<>();
                Map<String, Subscription> subs = new LinkedHashMap<>();
                Map<String, DeliveryChecks.ConsumerRecorder> recorded = new LinkedHashMap<>();
                runtime.clusters().forEach((name, node) -> {
                    producers.put(name, node.producer(topic, Compression.LZ4));
                    DeliveryChecks.ConsumerRecorder dispatched = new DeliveryChecks.ConsumerRecorder(name);
                    recorded.put(name, dispatched);
                    // Checked as entries are dispatched: nothing is kept for the checks.
                    Subscription s = node.subscription(topic, "demo-checks").consumers(3).onDispatch(d ->
                            dispatched.record(d.consumer(), d.segmentId(), d.messages())).subscribe();
                    // Its consumers read as they would in an application: one nobody reads holds dispatch back
                    // once its queue (subscriptions.receiverQueueSize) is full.
                    Flux.range(0, s.consumers()).flatMap(s::consumer, s.consumers()).subscribe();
                    subs.put(name, s);
                });
                traffic.put(topic, new Traffic(Traffic.senders(producers, p -> p::sendNow), options.keys(), 0.02,
                        options.seed() + topics.indexOf(topic)));
                subscriptions.put(topic, subs);
                consumerChecks.put(topic, recorded);
            }
            List<ClusterNode> nodes = List.copyOf(runtime.clusters().values());
            List<Tick> ticks = new ArrayList<>();
            List<Change> changes = new CopyOnWriteArrayList<>();
            AtomicInteger applied = new AtomicInteger();

            long startNanos = System.nanoTime();
            long durationNanos = options.duration().toNanos();
            long[] last = totals(runtime, topics);
            long lastTickNanos = startNanos;
            int step = 0;
            double[] plan = {0.25, 0.45, 0.65};
            ClusterNode victim = nodes.get(nodes.size() - 1);
            int outageStep = 0;
            long outageEnds = 0;
            boolean killed = false;
            while (true) {
                long now = System.nanoTime();
                // The run's clock stops at its duration: on a machine too busy to keep time (a stall of seconds),
                // what was due is still sent and every scripted step still happens, a little late, not skipped.
                long elapsed = Math.min(now - startNanos, durationNanos);
                // Keep every origin on its rate, shared by the topics: send what is due, a produce call per batch.
                // A call behind its rate takes what is due, up to CATCH_UP batches: a produce call waits for its
                // broker (on Pulsar, a round trip and a write), and calls of one batch each would fall behind.
                long due = (long) (options.rate() * (elapsed / 1e9) / topics.size());
                for (Traffic t : traffic.values()) {
                    for (String origin : runtime.clusters().keySet()) {
                        while (t.produced(origin) < due) {
                            t.send(origin, (int) Math.min((long) CATCH_UP * options.batch(),
                                    Math.max(options.batch(), due - t.produced(origin))));
                        }
                    }
                }
                if (!options.outage().isZero() && outageStep == 0 && elapsed >= 0.75 * durationNanos) {
                    victim.stopIngest();
                    outageEnds = elapsed + options.outage().toNanos();
                    outageStep = 1;
                    progress.printf("  t=%4.1fs %s's brokers go down for %d ms: replication into it fails%n",
                            elapsed / 1e9, victim.name(), options.outage().toMillis());
                }
                if (outageStep == 1 && (elapsed >= outageEnds || now - startNanos >= durationNanos + options.outage()
                        .toNanos())) {
                    victim.restartIngest();
                    outageStep = 2;
                    progress.printf("  t=%4.1fs %s's brokers are back%n", elapsed / 1e9, victim.name());
                }
                if (options.killLeader() && !killed && elapsed >= 0.55 * durationNanos) {
                    killed = true;
                    ClusterNode first = nodes.get(0);
                    String member = first.killControllerLeader();
                    progress.printf("  t=%4.1fs %s's controller leader %s is killed: another replica takes over%n",
                            elapsed / 1e9, first.name(), member);
                }
                if (step < plan.length && elapsed >= plan[step] * durationNanos) {
                    changes(runtime, nodes, topics, step, elapsed / 1e9, changes, applied);
                    step++;
                }
                if (now - lastTickNanos >= 1_000_000_000L) {
                    long[] current = totals(runtime, topics);
                    double seconds = (now - lastTickNanos) / 1e9;
                    ticks.add(new Tick(elapsed / 1e9, (current[0] - last[0]) / seconds, (current[1] - last[1]) / seconds,
                            produced(traffic), backlog(runtime, topics), heapAfterGc()));
                    printProgress(runtime, topics, ticks.get(ticks.size() - 1), current);
                    last = current;
                    lastTickNanos = now;
                }
                boolean scripted = step == plan.length && (options.outage().isZero() || outageStep == 2)
                        && (!options.killLeader() || killed);
                if (now - startNanos >= durationNanos && scripted) {
                    break; // everything due was sent above, with the clock at its end
                }
                sleepQuietly(5);
            }
            if (killed) {
                ClusterNode first = nodes.get(0);
                first.metadataLog().stream().filter(m -> m.role() == MemberRole.LEADER)
                        .findFirst().ifPresentOrElse(m -> progress.printf("  %s's metadata log: %s leads term %d, "
                                + "commit index %d, after %d failover(s)%n", first.name(), m.memberId(), m.term(),
                                m.commitIndex(), first.controllerFailovers()),
                                () -> progress.printf("  %s's metadata log has no leader now%n", first.name()));
            }
            if (outageStep == 1) {
                victim.restartIngest();
                progress.printf("  %s's brokers are back%n", victim.name());
            }
            printFeeds(nodes);
            long stopped = System.nanoTime();
            progress.printf("traffic stopped after %,d messages; waiting for replication and convergence...%n",
                    produced(traffic));
            runtime.awaitQuiet(Duration.ofSeconds(120)).block();
            // Every change's convergence is measured in the background: let the last measurement land.
            Flux.interval(Duration.ofMillis(5)).filter(t -> changes.size() >= applied.get()).next()
                    .block(Duration.ofSeconds(10));
            // And every subscription has dispatched everything its cluster stores.
            Flux.interval(Duration.ofMillis(20)).filter(t -> subscriptions.values().stream()
                    .allMatch(m -> m.values().stream().allMatch(s -> s.backlog() == 0))).next()
                    .block(Duration.ofSeconds(60));
            long quietAt = System.nanoTime();
            double catchUp = (quietAt - stopped) / 1e9;
            long[] end = totals(runtime, topics);
            double sinceTick = Math.max(0.001, (quietAt - lastTickNanos) / 1e9);
            ticks.add(new Tick((quietAt - startNanos) / 1e9, (end[0] - last[0]) / sinceTick,
                    (end[1] - last[1]) / sinceTick, produced(traffic), backlog(runtime, topics), heapAfterGc()));

            List<ReplicationChecks.Check> checks = new ArrayList<>();
            for (String topic : topics) {
                String prefix = topics.size() == 1 ? "" : shortName(topic) + ": ";
                Traffic t = Objects.requireNonNull(traffic.get(topic));
                List<ReplicationChecks.Check> of = new ArrayList<>();
                ReplicationRecorder stored = recorders.get(topic);
                if (stored != null) {
                    of.addAll(stored.checks(t.produced()));
                }
                Objects.requireNonNull(consumerChecks.get(topic)).forEach((name, c) -> {
                    of.addAll(c.checks(t.produced()));
                    if (stored == null) {
                        of.add(once(runtime, topic, name, c.repeats()));
                    }
                });
                of.forEach(c -> checks.add(new ReplicationChecks.Check(prefix + c.name(), c.passed(), c.detail())));
            }
            for (ClusterNode node : nodes) {
                checks.add(ReplicationChecks.replicators(node.name(), node.replicators()));
            }
            Map<String, Flow> flows = new LinkedHashMap<>();
            runtime.clusters().forEach((name, node) -> flows.put(name, flow(node, topics, traffic)));
            Map<String, Map<String, String>> layouts = new LinkedHashMap<>();
            for (String topic : topics) {
                Map<String, String> perCluster = new LinkedHashMap<>();
                runtime.clusters().forEach((name, node) -> perCluster.put(name, describe(node.layout(topic))));
                layouts.put(topic, perCluster);
            }
            return new Result(options, topics, flows, ticks, changes, checks, catchUp, layouts, pages);
        }
    }

    /**
     * The scripted layout changes: two topics split at the same moment on two clusters; the first splits
     * again; the second rebuckets.
     */
    private void changes(EmbeddedRuntime runtime, List<ClusterNode> nodes, List<String> topics, int step,
            double atSeconds, List<Change> changes, AtomicInteger applied) {
        String first = topics.get(0);
        String second = topics.get(Math.min(1, topics.size() - 1));
        if (step == 0) {
            change(runtime, nodes.get(0), first, true, atSeconds, changes, applied);
            change(runtime, nodes.get(1 % nodes.size()), second, true, atSeconds, changes, applied);
        } else if (step == 1) {
            change(runtime, nodes.get(0), first, true, atSeconds, changes, applied);
        } else {
            change(runtime, nodes.get(0), second, false, atSeconds, changes, applied);
        }
    }

    private void change(EmbeddedRuntime runtime, ClusterNode node, String topic, boolean split, double atSeconds,
            List<Change> changes, AtomicInteger applied) {
        List<Segment> active = node.layout(topic).activeSegments();
        Outcome outcome;
        String what;
        if (split) {
            Segment widest = active.stream().max((x, y) -> Integer.compare(x.range().size(), y.range().size()))
                    .orElseThrow();
            what = "split " + widest.descriptor() + " of " + shortName(topic) + " on " + node.name();
            outcome = node.split(topic, widest.id()).block();
        } else {
            Segment target = active.get(active.size() - 1);
            int n = Math.min(target.buckets().count() * 2,
                    Buckets.floorCount(runtime.config().caps().maxEntryBucketsPerSegment()));
            what = "rebucket " + target.descriptor() + " of " + shortName(topic) + " to N=" + n + " on " + node.name();
            outcome = node.rebucket(topic, target.id(), n).block();
        }
        if (!(outcome instanceof Outcome.Applied)) {
            progress.printf("  %s refused: %s%n", what, outcome);
            return;
        }
        long began = System.nanoTime();
        applied.incrementAndGet();
        progress.printf("  t=%4.1fs %s%n", atSeconds, what);
        // Measured in the background: the traffic goes on meanwhile.
        Flux.interval(Duration.ofMillis(2), runtime.timer())
                .filter(t -> runtime.converged(topic)).next()
                .subscribe(t -> changes.add(new Change(atSeconds, what, (System.nanoTime() - began) / 1_000_000)));
    }

    private void printProgress(EmbeddedRuntime runtime, List<String> topics, Tick tick, long[] totals) {
        StringBuilder segments = new StringBuilder();
        runtime.clusters().forEach((name, node) -> segments.append(segments.length() == 0 ? "" : "/")
                .append(topics.stream().mapToInt(t -> node.layout(t).activeSegments().size()).sum()));
        double share = totals[0] + totals[1] == 0 ? 0 : 100.0 * totals[0] / (totals[0] + totals[1]);
        progress.printf(Locale.ROOT, "[%5.1fs/%ds] produced %,9d msgs · replicated %,8d entries (%5.1f%% verbatim) · "
                        + "now %,7.0f verbatim/s %,6.0f re-batched/s · segments %s · backlog %,d · heap %,d MB%n",
                tick.atSeconds(), options.duration().toSeconds(), tick.produced(), totals[0] + totals[1], share,
                tick.verbatimPerSecond(), tick.rebatchedPerSecond(), segments, tick.backlog(),
                tick.heapBytes() >> 20);
    }

    /**
     * The heap in use just after the latest garbage collection (what stays, not what waits to be
     * collected); the heap in use now before the first collection.
     */
    static long heapAfterGc() {
        long latest = -1;
        long afterGc = 0;
        for (java.lang.management.GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
            if (gc instanceof com.sun.management.GarbageCollectorMXBean sun && sun.getLastGcInfo() != null
                    && sun.getLastGcInfo().getEndTime() > latest) {
                latest = sun.getLastGcInfo().getEndTime();
                afterGc = sun.getLastGcInfo().getMemoryUsageAfterGc().entrySet().stream()
                        .filter(e -> isHeap(e.getKey())).mapToLong(e -> e.getValue().getUsed()).sum();
            }
        }
        return latest < 0 ? ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed() : afterGc;
    }

    private static boolean isHeap(String pool) {
        return ManagementFactory.getMemoryPoolMXBeans().stream()
                .anyMatch(p -> p.getName().equals(pool) && p.getType() == MemoryType.HEAP);
    }

    /** {verbatim entries, re-batched entries} replicated so far, every cluster toward every remote. */
    private static long[] totals(EmbeddedRuntime runtime, List<String> topics) {
        long[] t = new long[2];
        for (ClusterNode node : runtime.clusters().values()) {
            for (String topic : topics) {
                for (String peer : node.peers()) {
                    ReplicatorMetrics m = node.replication(topic, peer);
                    t[0] += m.verbatimEntries();
                    t[1] += m.rebatchedEntries();
                }
            }
        }
        return t;
    }

    /** Who feeds each listener of every cluster's metadata log (listener delegation), as its leader sees it. */
    private void printFeeds(List<ClusterNode> nodes) {
        for (ClusterNode node : nodes) {
            node.status().blockOptional(Duration.ofSeconds(5)).map(s -> s.listenerFeeds()).filter(f -> !f.isEmpty())
                    .ifPresent(feeds -> progress.printf("  %s's metadata log listeners: %s%n", node.name(),
                            String.join(", ", feeds.stream().map(f -> f.listener() + " fed by " + f.source()
                                    + (f.delegated() ? " (delegate)"
                                    : f.revoked() ? " (leader; delegation to " + f.assignedTo() + " revoked)"
                                    : " (leader)")).toList())));
        }
    }

    private static long produced(Map<String, Traffic> traffic) {
        return traffic.values().stream().mapToLong(Traffic::total).sum();
    }

    private static long backlog(EmbeddedRuntime runtime, List<String> topics) {
        long b = 0;
        for (ClusterNode node : runtime.clusters().values()) {
            for (String topic : topics) {
                for (String peer : node.peers()) {
                    b += node.backlog(topic, peer).values().stream().mapToLong(Long::longValue).sum();
                }
            }
        }
        return b;
    }

    private static Flow flow(ClusterNode node, List<String> topics, Map<String, Traffic> traffic) {
        long produced = 0;
        long v = 0;
        long r = 0;
        long parts = 0;
        long failures = 0;
        for (String topic : topics) {
            produced += Objects.requireNonNull(traffic.get(topic)).produced(node.name());
            for (String peer : node.peers()) {
                ReplicatorMetrics m = node.replication(topic, peer);
                v += m.verbatimEntries();
                r += m.rebatchedEntries();
                parts += m.rebatchedParts();
                failures += m.sendFailures();
            }
        }
        return new Flow(produced, v, r, parts, failures);
    }

    /**
     * On Pulsar, where no recorder sees what is stored: no message reaches {@code cluster}'s consumers twice,
     * unless entries came into it re-batched (a seal window may then repeat what was also sent verbatim).
     */
    private static ReplicationChecks.Check once(EmbeddedRuntime runtime, String topic, String cluster, long repeats) {
        long rebatchedIn = runtime.clusters().values().stream().filter(n -> !n.name().equals(cluster))
                .mapToLong(n -> n.replication(topic, cluster).rebatchedEntries()).sum();
        String name = "each message delivered once (" + cluster + ")";
        if (repeats == 0) {
            return new ReplicationChecks.Check(name, true, "0 repeats");
        }
        return new ReplicationChecks.Check(name, rebatchedIn > 0, repeats + " repeat(s), " + rebatchedIn
                + " re-batched entries came in" + (rebatchedIn > 0 ? " (the seal window)" : " (none: not the seal window)"));
    }

    /** The last part of a topic's name. */
    static String shortName(String topic) {
        return topic.substring(topic.lastIndexOf('/') + 1);
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
