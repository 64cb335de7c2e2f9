package io.verbatim.examples;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.verbatim.pulsar.broker.PulsarProcess;
import io.verbatim.testkit.DeliveryChecks;
import io.verbatim.testkit.NetworkConsumer;
import java.io.IOException;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A cluster's brokers on many machines (issue 25), across processes on one Pulsar broker: east as three
 * controller replicas and three broker members, each a {@code verbatim node --member} process, west as one
 * node; traffic on both, through every live broker member of east. The member acting on the most segments is
 * killed (SIGKILL) mid-traffic and west splits every segment at once: the killed member's segments go to the others
 * within the lease plus a few seconds, and what it had sent west unanswered goes again to the split segments'
 * children. A fourth
 * member, named in the file but not started so far, starts and takes a share; a second member is stopped with
 * SIGTERM, drains (its segments move) and exits 0. Then every message acknowledged on either cluster is on
 * both, once, in order per key (the fault suite's checks, on what Pulsar stores), and each segment was acted
 * on by one member at a time as the members' statuses showed it. East's own subscription, read over the network by
 * two consumers connected to every member, receives every acknowledged message of both origins, each key in order.
 */
class BrokerProcessesTest {
    private static final String TOPIC = "persistent://public/default/orders";
    private static final String TOKEN = "broker-processes-admin-token";
    private static final List<String> REPLICAS = List.of("c1", "c2", "c3");
    private static final List<String> MEMBERS = List.of("broker-1", "broker-2", "broker-3", "broker-4");
    private static final Duration LEASE = Duration.ofSeconds(4);
    private static final Duration WAIT = Duration.ofSeconds(120);
    private static final int PER_CALL = 10;
    private static final int KEYS = 50;
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;

    private NodeProcesses nodes;
    private PulsarProcess pulsar;
    private final ProduceLedger ledger = new ProduceLedger(List.of("east", "west"));
    private final List<String> overlaps = new CopyOnWriteArrayList<>();
    private final List<NetworkConsumer> consumers = new CopyOnWriteArrayList<>();
    private final DeliveryChecks.ConsumerRecorder onEast = new DeliveryChecks.ConsumerRecorder("east");
    private final Set<String> consumed = ConcurrentHashMap.newKeySet();
    private String namespaceEast;
    private String namespaceWest;

    @AfterEach
    void stop() throws IOException {
        consumers.forEach(NetworkConsumer::dispose);
        if (nodes != null) {
            nodes.close();
            Path logs = Path.of("target", "broker-processes-logs");
            Files.createDirectories(logs);
            for (String name : nodes.processes().keySet()) {
                Files.writeString(logs.resolve(name.replace('/', '-') + ".log"), nodes.log(name));
            }
        }
        if (pulsar != null) {
            pulsar.close();
        }
    }

    @Test
    void segmentsMoveWhenAMemberIsKilledJoinsOrDrainsAndEveryMessageArrivesOnce() throws Exception {
        pulsar = PulsarProcess.start(PulsarProcess.Options.of(dir.resolve("pulsar")));
        nodes = new NodeProcesses(dir, TOKEN, WAIT, true);
        writeConfig();
        for (String r : REPLICAS) {
            nodes.start("east/" + r);
        }
        for (String m : MEMBERS.subList(0, 3)) {
            nodes.start("east/" + m);
        }
        nodes.start("west");
        for (String p : List.copyOf(nodes.processes().keySet())) {
            nodes.awaitLine(p, p + ": ready", 1);
        }
        List<String> live = new CopyOnWriteArrayList<>(MEMBERS.subList(0, 3).stream().map(m -> "east/" + m).toList());
        awaitShared(live);
        HttpResponse<String> listed = nodes.call("east/broker-1", "GET", "/admin/v2/scalable/members", null);
        assertThat(listed.statusCode()).as(listed.body()).isEqualTo(200);
        report("east's members: " + listed.body());
        // east's own subscription, two consumers each connected to every member: each segment's entries come from
        // the member acting on it, and follow it as it moves
        for (int i = 0; i < 2; i++) {
            consumers.add(NetworkConsumer.builder(live.stream().map(nodes::adminUrl).toList(), TOPIC, "readers").token(TOKEN)
                    .consumer(i, 2).rediscoverEvery(Duration.ofMillis(500)).start(r -> {
                        onEast.record(r.consumer(), r.segmentId(), r.messages());
                        r.messages().forEach(m -> consumed.add(new String(m.payloadBytes(), StandardCharsets.UTF_8)));
                    }));
        }

        AtomicBoolean running = new AtomicBoolean(true);
        Thread east = traffic("east", live, running);
        Thread west = traffic("west", List.of("west"), running);
        Thread watch = new Thread(() -> watchOverlaps(live, running), "overlaps");
        watch.start();
        Thread.sleep(2_000);

        // SIGKILL the member acting on the most segments, mid-traffic
        String victim = live.stream().max((a, b) -> Integer.compare(acting(a).size(), acting(b).size())).orElseThrow();
        Set<String> lost = acting(victim);
        long killed = System.nanoTime();
        nodes.process(victim).destroyForcibly(); // its produce calls in flight: outcome unknown
        live.remove(victim);
        assertThat(nodes.process(victim).waitFor(30, TimeUnit.SECONDS)).isTrue();
        // west splits every segment before the victim's segments have a new owner: what the victim had sent west
        // and not seen answered (stored, its cursors not yet told) goes again from its cursors, by west's new layout,
        // to the children, which must not store what their sealed parents took
        for (int s = 0; s < 6; s++) {
            String path = "/admin/v2/scalable/split?topic=" + NodeProcesses.enc(TOPIC) + "&segment=" + s;
            await("west splits segment " + s, () -> nodes.call("west", "POST", path, null).statusCode() == 200);
        }
        long splitMs = (System.nanoTime() - killed) / 1_000_000;
        // east's layout follows west's splits: twice the segments to place besides the victim's
        awaitCovered(live, LEASE.plusSeconds(20));
        long withoutOwnerMs = (System.nanoTime() - killed) / 1_000_000;
        report("SIGKILL " + victim + " acting on " + lost.size() + " segment(s), west split its six " + splitMs
                + " ms after: every segment of east's layout owned again after " + withoutOwnerMs + " ms (lease "
                + LEASE.toMillis() + " ms)");

        // a fourth member starts and takes a share
        nodes.start("east/broker-4");
        nodes.awaitLine("east/broker-4", "east/broker-4: ready", 1);
        live.add("east/broker-4");
        long joined = System.nanoTime();
        await("broker-4 takes a share", () -> !acting("east/broker-4").isEmpty());
        report("broker-4 acted on its first segment " + (System.nanoTime() - joined) / 1_000_000 + " ms after ready");

        // SIGTERM a member: it drains, its segments move, it exits 0
        String leaving = live.stream().filter(p -> !p.equals("east/broker-4")).findFirst().orElseThrow();
        live.remove(leaving);
        long asked = System.nanoTime();
        nodes.process(leaving).destroy();
        assertThat(nodes.process(leaving).waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(nodes.process(leaving).exitValue()).as(leaving + " exit code; log:\n" + nodes.log(leaving)).isZero();
        report("SIGTERM " + leaving + ": drained and exited in " + (System.nanoTime() - asked) / 1_000_000 + " ms");
        awaitCovered(live, LEASE.plusSeconds(10));

        Thread.sleep(2_000);
        running.set(false);
        east.join();
        west.join();
        watch.join();
        awaitCaughtUp(live);

        StoreView view = new StoreView.OnPulsar(pulsar.serviceUrl(), pulsar.webUrl(), TOPIC,
                Map.of("east", namespaceEast, "west", namespaceWest));
        StoreView.Snapshot snapshot = view.read(List.of("east", "west"));
        FaultChecker.Report checked = FaultChecker.check(snapshot.messages(), ledger.produced(),
                Map.of("east", "-", "west", "-"));
        report("checked " + checked.checked() + " acknowledged message(s) on both clusters; " + ledger.unknownCount()
                + " with an unknown outcome (a produce call to the killed member)");
        assertThat(checked.violations()).as("violations").isEmpty();
        assertThat(checked.checked()).isPositive();

        // every acknowledged message of both origins reached east's consumers, each key in order
        List<String> expected = new ArrayList<>();
        for (String origin : List.of("east", "west")) {
            ledger.acknowledged(origin).stream().forEach(n -> expected.add(origin + "/" + n));
        }
        try {
            await("east's consumers received every acknowledged message", () -> consumed.containsAll(expected));
        } catch (AssertionError e) {
            List<String> missing = expected.stream().filter(m -> !consumed.contains(m)).toList();
            throw new AssertionError(e.getMessage() + ": " + missing.size() + " missing, first "
                    + missing.subList(0, Math.min(10, missing.size())) + "; connected to "
                    + consumers.stream().map(NetworkConsumer::connectedTo).toList(), e);
        }
        assertThat(onEast.checks()).allMatch(c -> c.passed());
        report("east's network consumers received " + expected.size() + " acknowledged message(s) of both origins "
                + "through the kill, the join and the drain; " + onEast.repeats() + " repeat(s) (Pulsar's redelivery of "
                + "what was not acknowledged), first: " + onEast.repeatSamples());
        assertThat(overlaps).as("two members acting on one segment at once").isEmpty();
        for (String p : List.copyOf(live)) {
            assertThat(nodes.log(p).lines().filter(l -> l.contains(" ERROR ")).toList()).as(p + "'s errors").isEmpty();
        }
    }

    // ---- the processes ----------------------------------------------------------------------------

    private void writeConfig() throws IOException {
        int run = (int) (ProcessHandle.current().pid() % 10_000);
        namespaceEast = "public/bp-east-" + run;
        namespaceWest = "public/bp-west-" + run;
        // sealed segments kept (not pruned once drained): the checks read every message from what Pulsar stores
        StringBuilder y = new StringBuilder("storage: {type: pulsar, deleteConsumed: false, pruneSealed: false}\n"
                + "clusters:\n  - name: east\n    token: east-token\n");
        y.append("    pulsar: {serviceUrl: '").append(pulsar.serviceUrl()).append("', adminUrl: '").append(pulsar.webUrl())
                .append("', namespace: ").append(namespaceEast).append("}\n    controllers:\n");
        for (String r : REPLICAS) {
            int admin = NodeProcesses.freePort();
            nodes.adminPort("east/" + r, admin);
            y.append("      - {id: ").append(r).append(", adminPort: ").append(admin).append(", raftPort: ")
                    .append(NodeProcesses.freePort()).append(", secret: east-").append(r).append("-secret}\n");
        }
        y.append("    brokerMembers:\n");
        for (String m : MEMBERS) {
            int admin = NodeProcesses.freePort();
            nodes.adminPort("east/" + m, admin);
            y.append("      - {id: ").append(m).append(", adminPort: ").append(admin).append(", brokerPorts: [")
                    .append(NodeProcesses.freePort()).append("], raftPort: ").append(NodeProcesses.freePort())
                    .append(", secret: east-").append(m).append("-secret}\n");
        }
        int westAdmin = NodeProcesses.freePort();
        nodes.adminPort("west", westAdmin);
        y.append("  - name: west\n    token: west-token\n    adminPort: ").append(westAdmin)
                .append("\n    brokerPorts: [").append(NodeProcesses.freePort()).append("]\n")
                .append("    pulsar: {serviceUrl: '").append(pulsar.serviceUrl()).append("', adminUrl: '")
                .append(pulsar.webUrl()).append("', namespace: ").append(namespaceWest).append("}\n");
        y.append("""
                topics:
                  - name: %s
                    initialSegments: 6
                    bucketBudget: 4
                replication:
                  startAt: earliest
                  sendTimeout: 5s
                  retry: { initial: 20ms, max: 500ms, jitter: 0.5 }
                exchange:
                  antiEntropyInterval: 1s
                  retry: { initial: 20ms, max: 500ms, jitter: 0.5 }
                ownership: {lease: %ds, interval: 500ms, minTenure: 0s, drainTimeout: 20s}
                security:
                  adminToken: %s
                """.formatted(TOPIC, LEASE.toSeconds(), TOKEN));
        nodes.config(y.toString());
    }

    private static void report(String line) throws IOException {
        System.out.println("broker processes: " + line);
        Path out = Path.of("target", "handover.txt");
        Files.createDirectories(out.getParent());
        Files.writeString(out, line + "\n", StandardCharsets.UTF_8, java.nio.file.StandardOpenOption.CREATE,
                java.nio.file.StandardOpenOption.APPEND);
    }

    /** The segments {@code process} acts on, as its status says ({@code topic#segment}); empty when it does not answer. */
    private Set<String> acting(String process) {
        try {
            HttpResponse<String> r = nodes.call(process, "GET", "/admin/v2/scalable/status", null, Duration.ofSeconds(5));
            Set<String> out = new TreeSet<>();
            if (r.statusCode() == 200) {
                JSON.readTree(r.body()).path("ownership").path("acting").forEach(n -> out.add(n.asText()));
            }
            return out;
        } catch (IOException | InterruptedException e) {
            return Set.of();
        }
    }

    /** How many segments the topic has now, as the first live member's status says. */
    private int segments(String process) throws IOException {
        HttpResponse<String> r = nodes.call(process, "GET", "/admin/v2/scalable/status", null);
        return JSON.readTree(r.body()).path("topics").path(TOPIC).path("layout").size();
    }

    private int awaitShared(List<String> live) throws Exception {
        int[] total = {0};
        await("every segment acted on, each member acting", () -> {
            try {
                total[0] = segments(live.get(0));
            } catch (IOException e) {
                return false;
            }
            int sum = 0;
            Set<String> all = new TreeSet<>();
            for (String p : live) {
                Set<String> mine = acting(p);
                if (mine.isEmpty()) {
                    return false;
                }
                sum += mine.size();
                all.addAll(mine);
            }
            return total[0] > 0 && all.size() == total[0] && sum == total[0];
        });
        return total[0];
    }

    /** Waits until every segment of the topic's current layout (splits add some) is acted on by a live member. */
    private void awaitCovered(List<String> live, Duration within) throws Exception {
        long deadline = System.nanoTime() + within.toNanos();
        Map<String, Set<String>> last = new TreeMap<>();
        int need = -1;
        while (System.nanoTime() < deadline) {
            try {
                need = segments(live.get(0));
            } catch (IOException e) {
                Thread.sleep(100);
                continue;
            }
            Set<String> all = new TreeSet<>();
            for (String p : live) {
                Set<String> mine = acting(p);
                last.put(p, mine);
                all.addAll(mine);
            }
            if (need > 0 && all.size() >= need) {
                return;
            }
            Thread.sleep(100);
        }
        throw new AssertionError("not every one of " + need + " segments acted on within " + within + ": " + last);
    }

    /** Polls the live members' statuses until traffic stops: two acting on one segment at once is recorded. */
    private void watchOverlaps(List<String> live, AtomicBoolean running) {
        while (running.get()) {
            Map<String, String> by = new LinkedHashMap<>();
            for (String p : List.copyOf(live)) {
                for (String s : acting(p)) {
                    String other = by.put(s, p);
                    if (other != null) {
                        overlaps.add(s + ": " + other + " and " + p);
                    }
                }
            }
            try {
                Thread.sleep(200);
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    /** Produce calls of {@link #PER_CALL} messages to {@code cluster}'s processes in turn until stopped. */
    private Thread traffic(String cluster, List<String> processes, AtomicBoolean running) {
        Thread t = new Thread(() -> {
            int turn = 0;
            while (running.get()) {
                List<String> now = List.copyOf(processes);
                String process = now.get(turn++ % now.size());
                int first = ledger.reserve(cluster, PER_CALL);
                StringBuilder body = new StringBuilder("{\"messages\":[");
                for (int m = 0; m < PER_CALL; m++) {
                    int n = first + m;
                    String payload = Base64.getEncoder().encodeToString((cluster + "/" + n)
                            .getBytes(StandardCharsets.UTF_8));
                    body.append(m == 0 ? "" : ",").append("{\"key\":\"k").append(n * 7919 % KEYS)
                            .append("\",\"payload\":\"").append(payload).append("\"}");
                }
                body.append("]}");
                try {
                    HttpResponse<String> r = nodes.call(process, "POST", "/admin/v2/scalable/produce?topic="
                            + NodeProcesses.enc(TOPIC), body.toString(), Duration.ofSeconds(10));
                    if (r.statusCode() == 200) {
                        ledger.acknowledged(cluster, first, PER_CALL);
                    } else {
                        ledger.unknown(cluster, first, PER_CALL);
                    }
                } catch (IOException | InterruptedException e) {
                    ledger.unknown(cluster, first, PER_CALL);
                }
                try {
                    Thread.sleep(20);
                } catch (InterruptedException e) {
                    return;
                }
            }
        }, "traffic-" + cluster);
        t.start();
        return t;
    }

    private void awaitCaughtUp(List<String> live) throws Exception {
        List<String> all = new ArrayList<>(live);
        all.add("west");
        await("no replication backlog on " + all, () -> {
            for (String p : all) {
                try {
                    HttpResponse<String> r = nodes.call(p, "GET", "/admin/v2/scalable/status", null);
                    JsonNode topic = JSON.readTree(r.body()).path("topics").path(TOPIC);
                    for (JsonNode remote : topic.path("remotes")) {
                        for (JsonNode b : remote.path("replicationBacklog")) {
                            if (b.asLong() > 0) {
                                return false;
                            }
                        }
                    }
                } catch (IOException e) {
                    return false;
                }
            }
            return true;
        });
    }

    private interface Condition {
        boolean holds() throws Exception;
    }

    private static void await(String what, Condition condition) throws Exception {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (System.nanoTime() < deadline) {
            if (condition.holds()) {
                return;
            }
            Thread.sleep(200);
        }
        throw new AssertionError("not within " + WAIT + ": " + what);
    }
}
