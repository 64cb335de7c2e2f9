package io.verbatim.bench;

import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Parser;
import com.sun.management.OperatingSystemMXBean;
import io.verbatim.exchange.Caps;
import io.verbatim.exchange.Controller;
import io.verbatim.exchange.ExchangeConfig;
import io.verbatim.exchange.ExchangeServer;
import io.verbatim.exchange.ExchangeTransport;
import io.verbatim.exchange.HttpTransport;
import io.verbatim.model.Join;
import io.verbatim.net.Authenticator;
import io.verbatim.net.NetClient;
import io.verbatim.net.NetServer;
import io.verbatim.net.NetworkLimits;
import io.verbatim.net.SigningKey;
import io.verbatim.net.VerifyingKey;
import io.verbatim.exchange.Pusher;
import io.verbatim.exchange.proto.ExchangeRequest;
import io.verbatim.exchange.proto.ExchangeResponse;
import io.verbatim.model.Layout;
import io.verbatim.model.Shape;
import io.verbatim.store.InMemoryLayoutStore;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.netty.DisposableServer;
import reactor.netty.http.client.HttpClient;
import reactor.netty.http.server.HttpServer;

/**
 * The exchange's figures: P6, convergence time after a split ÷ one exchange round trip (three clusters
 * over HTTP on loopback); P9, a large fleet between two clusters over HTTP: how long until they converge,
 * and what an anti-entropy round costs once they have (calls, bytes, CPU per topic on each side, heap).
 *
 * <p>Run: {@code java -Xmx4g -cp bench/target/benchmarks.jar io.verbatim.bench.ExchangeBench [rounds] [topics]}
 * ({@code rounds} of P6, default 20; {@code topics} of P9, default 100,000).
 */
public final class ExchangeBench {
    /** Every cluster's token is its name and "-bench"; what each presents and each server checks. */
    /** Clusters a, b, c: each signs with the key of {@code <name>-bench}. */
    private static final List<String> CLUSTERS = List.of("a", "b", "c");

    private ExchangeBench() {
    }

    public static void main(String[] args) {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 20;
        int topics = args.length > 1 ? Integer.parseInt(args[1]) : 100_000;
        p6(rounds);
        p9(topics);
        System.exit(0);
    }

    /** Probe pushes before the measured rounds: enough for the JIT to compile the path at its last tier. */
    private static final int WARM_UP_PUSHES = 5000;
    /** Rounds of a whole P6 run on clusters of its own, first, not measured: the split and its folds warmed too. */
    private static final int WARM_UP_ROUNDS = 60;

    private static void p6(int rounds) {
        // 300 pushes left the round trip's code at the JIT's profiling tier, about twice as slow: a whole run
        // first (pushes, then splits and their convergence), on clusters thrown away, then the measured one.
        p6Run(WARM_UP_PUSHES, WARM_UP_ROUNDS);
        P6Run run = p6Run(300, rounds);
        double[] rtt = run.rtt();
        double[] converge = run.converge();
        double[] bareCpu = new double[rounds];
        double[] bare = bareRoundTrips(rounds, run.bodyBytes(), run.answerBytes(), bareCpu);
        double medianRtt = median(rtt);
        double medianConverge = median(converge);
        System.out.println("| figure | value |");
        System.out.println("| --- | --- |");
        System.out.printf(Locale.ROOT, "| one exchange round trip (loopback, quiet, median of %d) | %.2f ms (min %.2f, max %.2f) |%n",
                rounds, medianRtt, min(rtt), max(rtt));
        System.out.printf(Locale.ROOT, "|   CPU of all Java threads per round trip (median) | %.3f ms |%n", median(run.rttCpu()));
        System.out.printf(Locale.ROOT, "| bare Reactor Netty POST of as many bytes, after as long idle (median) | %.2f ms (min %.2f, max %.2f) |%n",
                median(bare), min(bare), max(bare));
        System.out.printf(Locale.ROOT, "|   CPU of all Java threads per bare POST (median) | %.3f ms |%n", median(bareCpu));
        System.out.printf(Locale.ROOT, "| convergence of 3 clusters after a split (median) | %.2f ms (min %.2f, max %.2f) |%n",
                medianConverge, min(converge), max(converge));
        System.out.printf(Locale.ROOT, "| P6 convergence / round trip | %.2f |%n", medianConverge / medianRtt);
    }

    /** P6 in the suite: convergence after a split ÷ one quiet exchange round trip, medians of a run's rounds. */
    static final Row.Spec P6 = new Row.Spec("P6", "convergence after a split ÷ one exchange round trip, 3 clusters"
            + " over HTTP on loopback", "convergence", "round trip", "ms", Goal.atMost(3));

    /**
     * P6 for {@link Suite}: a warm-up round is a whole run on clusters thrown away (the JIT's last tier for the
     * pushes and the splits); each measured round is a run of {@code rounds} splits on fresh clusters.
     */
    static Bench p6Bench(int rounds, PrintStream log) {
        return new Bench() {
            @Override
            public List<Row.Spec> specs() {
                return List.of(P6);
            }

            @Override
            public List<Row.Sample> round(int round) {
                if (round < 0) {
                    p6Run(WARM_UP_PUSHES, WARM_UP_ROUNDS);
                }
                P6Run run = p6Run(300, rounds);
                double rtt = median(run.rtt());
                double converge = median(run.converge());
                log.printf(Locale.ROOT, "  round trip %.2f ms (min %.2f), convergence %.2f ms, CPU per round trip %.3f ms%n",
                        rtt, min(run.rtt()), converge, median(run.rttCpu()));
                return List.of(Row.Sample.of(converge, rtt));
            }

            @Override
            public void close() {
                // each run closes its servers
            }
        };
    }

    /** One P6 run's figures, in milliseconds, and the sizes of its last call's body and answer. */
    private record P6Run(double[] rtt, double[] rttCpu, double[] converge, int bodyBytes, int answerBytes) {
    }

    /** Three fresh clusters: {@code pushes} probe pushes, then {@code rounds} of a quiet round trip and a split. */
    private static P6Run p6Run(int pushes, int rounds) {
        ExchangeConfig config = ExchangeConfig.defaults().withRetry(Duration.ofMillis(20), Duration.ofSeconds(1), 0.5);
        Map<String, InMemoryLayoutStore> stores = new LinkedHashMap<>();
        Map<String, Controller> controllers = new LinkedHashMap<>();
        List<ExchangeServer> servers = new ArrayList<>();
        Map<String, String> urls = new HashMap<>();
        for (String name : List.of("a", "b", "c")) {
            InMemoryLayoutStore store = new InMemoryLayoutStore();
            store.create("t", Layout.initial(1, 4, 0)).block();
            Set<String> peers = new HashSet<>(List.of("a", "b", "c"));
            peers.remove(name);
            Controller c = new Controller(name, peers, Caps.PULSAR_DEFAULTS, store, Schedulers.parallel());
            ExchangeServer server = new ExchangeServer(c, config, net(c.cluster()),
                    Controller.BacklogSource.NONE).start(0);
            stores.put(name, store);
            controllers.put(name, c);
            servers.add(server);
            urls.put(name, server.baseUrl());
        }
        List<Pusher> pushers = new ArrayList<>();
        List<InFlight> background = new ArrayList<>();
        controllers.values().forEach(c -> {
            InFlight transport = new InFlight(new HttpTransport(urls, client(c.cluster())));
            background.add(transport);
            pushers.add(new Pusher(c, transport, config, Schedulers.parallel()).start());
        });
        Pusher probe = new Pusher(need(controllers.get("a")), new HttpTransport(urls, client("a")), config, Schedulers.parallel());
        for (int i = 0; i < pushes; i++) {
            probe.pushUntilAcknowledged("b").block();
        }
        double[] rtt = new double[rounds];
        double[] converge = new double[rounds];
        double[] rttCpu = new double[rounds];
        for (int i = 0; i < rounds; i++) {
            // One round trip on a quiet exchange: the calls that followed the previous split (every cluster
            // tells the others of its new layout, and each answers) may still be out when the stores already
            // hold the join; timed among them, the round trip measured the machine's load, not the exchange.
            awaitQuiet(background);
            Map<Long, Long> c0 = threadCpu();
            long t0 = System.nanoTime();
            probe.pushUntilAcknowledged("b").block();
            rtt[i] = (System.nanoTime() - t0) / 1e6;
            rttCpu[i] = cpuSince(c0);
            Layout before = need(need(stores.get("a")).get("t").block());
            long widest = before.activeSegments().stream()
                    .max(Comparator.comparingInt(s -> s.range().size())).orElseThrow().id();
            long t1 = System.nanoTime();
            need(controllers.get("a")).split("t", widest).block();
            // The finer layout wins: a's new boundary, with the largest bucket count anyone has there.
            Shape target = Join.of(Shape.of(need(need(stores.get("a")).get("t").block())),
                    Shape.of(need(need(stores.get("b")).get("t").block())), Shape.of(need(need(stores.get("c")).get("t").block())));
            for (String other : List.of("a", "b", "c")) {
                need(stores.get(other)).watch("t").filter(l -> Shape.of(l).equals(target)).next()
                        .block(Duration.ofSeconds(10));
            }
            converge[i] = (System.nanoTime() - t1) / 1e6;
        }
        // a call's body and an answer's, as large as the last round trip's (the answer: b's state and a result)
        int bodyBytes = need(need(controllers.get("a")).stateFor("b").block()).getSerializedSize();
        int answerBytes = need(need(controllers.get("b")).stateFor("a").block()).getSerializedSize() + 16;
        pushers.forEach(Pusher::dispose);
        servers.forEach(ExchangeServer::stop);
        return new P6Run(rtt, rttCpu, converge, bodyBytes, answerBytes);
    }

    /**
     * P9: two controllers over HTTP on loopback (default config: 4 MiB bodies, 30 s anti-entropy) holding
     * {@code topics} topics, three in ten laid out differently on the two sides. Measures the time until
     * both hold the join of every topic, then a full anti-entropy round once converged: its calls and
     * bytes, the process CPU it costs (both sides and HTTP), and, run in-process on one thread, the
     * sender's part (state, encoding, parsing the answer, folding it) and the receiver's (parsing,
     * folding every topic, the answer).
     */
    /** P9 in the suite: CPU of one anti-entropy round between two converged controllers over HTTP, per topic. */
    static final Row.Spec P9 = new Row.Spec("P9", "anti-entropy round between two converged controllers over HTTP:"
            + " CPU of all Java threads per topic (ms)", "CPU ms", "topics", "",
            Goal.words("measured; batched and chunked"));

    /**
     * P9 for {@link Suite}: two controllers with {@code topics} topics (30 % laid out differently) converge once;
     * each round is then one anti-entropy push a → b, its CPU of all Java threads over the topics, with its calls
     * and largest body in the round's note (the push is chunked to the body limit).
     */
    static Bench p9Bench(int topics, PrintStream log) {
        return new Bench() {
            private @Nullable P9Pair pair;

            @Override
            public List<Row.Spec> specs() {
                return List.of(P9);
            }

            @Override
            public List<Row.Sample> round(int round) {
                if (pair == null) {
                    long t0 = System.nanoTime();
                    P9Pair started = P9Pair.converged(topics);
                    pause(); // calls still out when the pushers were disposed finish
                    log.printf(Locale.ROOT, "  %,d topics converged in %.0f ms%n", topics, (System.nanoTime() - t0) / 1e6);
                    pair = started;
                }
                P9Pair p = pair;
                Counting transport = p.toB();
                Pusher probe = new Pusher(p.a(), transport, p.config(), Schedulers.parallel());
                transport.reset();
                Map<Long, Long> before = threadCpu();
                probe.pushUntilAcknowledged("b").block();
                double[] cpu = {0};
                threadCpu().forEach((id, nanos) -> cpu[0] += (nanos - before.getOrDefault(id, 0L)) / 1e6);
                String note = String.format(Locale.ROOT, "%d calls, largest %.0f KB, %.1f µs per topic",
                        transport.calls.get(), transport.largest.get() / 1e3, cpu[0] * 1000 / topics);
                log.println("  " + note);
                return List.of(new Row.Sample(cpu[0], topics, note));
            }

            @Override
            public void close() {
                if (pair != null) {
                    pair.stop();
                }
            }
        };
    }

    /** P9's two controllers over HTTP, {@code topics} topics each (30 % laid out differently), once converged. */
    private record P9Pair(Controller a, Controller b, ExchangeServer serverA, ExchangeServer serverB, Counting toB,
            Counting toA, ExchangeConfig config, double convergeMillis) {
        static P9Pair converged(int topics) {
            Fleet fleet = new Fleet(topics);
            InMemoryLayoutStore storeA = new InMemoryLayoutStore();
            InMemoryLayoutStore storeB = new InMemoryLayoutStore();
            fleet.fill(storeA, true);
            fleet.fill(storeB, false);
            ExchangeConfig config = ExchangeConfig.defaults();
            Controller a = new Controller("a", Set.of("b"), Caps.PULSAR_DEFAULTS, storeA, Schedulers.parallel());
            Controller b = new Controller("b", Set.of("a"), Caps.PULSAR_DEFAULTS, storeB, Schedulers.parallel());
            ExchangeServer serverA = new ExchangeServer(a, config, net("a"), Controller.BacklogSource.NONE).start(0);
            ExchangeServer serverB = new ExchangeServer(b, config, net("b"), Controller.BacklogSource.NONE).start(0);
            Map<String, String> urls = Map.of("a", serverA.baseUrl(), "b", serverB.baseUrl());
            Counting toB = new Counting(new HttpTransport(urls, client("a")));
            Counting toA = new Counting(new HttpTransport(urls, client("b")));
            long t0 = System.nanoTime();
            List<Pusher> pushers = List.of(new Pusher(a, toB, config, Schedulers.parallel()).start(),
                    new Pusher(b, toA, config, Schedulers.parallel()).start());
            awaitJoin(fleet, storeA, storeB);
            double convergeMillis = (System.nanoTime() - t0) / 1e6;
            pushers.forEach(Pusher::dispose);
            return new P9Pair(a, b, serverA, serverB, toB, toA, config, convergeMillis);
        }

        void stop() {
            serverA.stop();
            serverB.stop();
        }
    }

    private static void p9(int topics) {
        P9Pair pair = P9Pair.converged(topics);
        Controller a = pair.a();
        Controller b = pair.b();
        Counting toB = pair.toB();
        Counting toA = pair.toA();
        ExchangeConfig config = pair.config();
        double convergeMillis = pair.convergeMillis();
        long convergeCalls = toB.calls.get() + toA.calls.get();
        long convergeBytes = toB.sent.get() + toA.sent.get() + toB.answered.get() + toA.answered.get();
        pause(); // calls still out when the pushers were disposed finish
        long heap = heapAfterGc();

        OperatingSystemMXBean os = (OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        Pusher probe = new Pusher(a, toB, config, Schedulers.parallel());
        int measured = 5;
        double[] threads = new double[measured];
        double[] process = new double[measured];
        double[] wall = new double[measured];
        int warmUp = warmUpRounds(topics);
        for (int round = 0; round < measured + warmUp; round++) {
            toB.reset();
            Map<Long, Long> t0s = threadCpu();
            long c0 = os.getProcessCpuTime();
            long w0 = System.nanoTime();
            probe.pushUntilAcknowledged("b").block();
            if (round >= warmUp) {
                int slot = round - warmUp;
                wall[slot] = (System.nanoTime() - w0) / 1e6;
                process[slot] = (os.getProcessCpuTime() - c0) / 1e6;
                threadCpu().forEach((id, nanos) -> threads[slot] += (nanos - t0s.getOrDefault(id, 0L)) / 1e6);
            }
        }
        InProcess split = inProcess(a, b, measured, warmUp);
        pair.stop();

        System.out.println();
        System.out.printf(Locale.ROOT, "| P9: %,d topics, two controllers over HTTP (maxBodyBytes %d KiB) | value |%n",
                topics, config.maxBodyBytes() / 1024);
        System.out.println("| --- | --- |");
        row("topics laid out differently on the two sides", "%,d", (long) Math.ceil(topics * 0.3));
        row("convergence: both sides hold the join of every topic", "%.0f ms (%d calls, %.1f MB both ways)",
                convergeMillis, convergeCalls, convergeBytes / 1e6);
        row("anti-entropy push a -> b, once converged", "%d calls, %.1f MB sent, %.1f MB answered",
                toB.calls.get(), toB.sent.get() / 1e6, toB.answered.get() / 1e6);
        row("  largest call", "%.0f KB", toB.largest.get() / 1e3);
        row("  wall time (median of " + measured + ")", "%.0f ms", median(wall));
        row("  CPU of all Java threads, both sides + HTTP (median)", "%.0f ms (%.1f µs per topic)", median(threads),
                median(threads) * 1000 / topics);
        row("  process CPU, also GC and JIT (median)", "%.0f ms (%.1f µs per topic)", median(process),
                median(process) * 1000 / topics);
        row("  sender CPU in-process (states, encoding, parsing and folding the answer)", "%.0f ms (%.1f µs per topic)",
                split.sender(), split.sender() * 1000 / topics);
        row("  receiver CPU in-process (parsing, folding every topic, the answer)", "%.0f ms (%.1f µs per topic)",
                split.receiver(), split.receiver() * 1000 / topics);
        row("  whole round in-process, one thread (the earlier P9 figure)", "%.0f ms (%.1f µs per topic)",
                split.sender() + split.receiver(), (split.sender() + split.receiver()) * 1000 / topics);
        row("heap used after GC (two controllers, two stores)", "%.0f MB (%.1f KB per topic and side)", heap / 1e6,
                heap / 1e3 / topics / 2);
    }

    /** Rounds before measuring: enough topics through the code for the JIT to be done with it (a small fleet takes more). */
    private static int warmUpRounds(int topics) {
        return Math.max(2, Math.min(30, 300_000 / topics));
    }

    /** The sender's and the receiver's CPU of one round, in milliseconds (medians). */
    private record InProcess(double sender, double receiver) {
    }

    private static InProcess inProcess(Controller a, Controller b, int measured, int warmUp) {
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        double[] sender = new double[measured];
        double[] receiver = new double[measured];
        for (int round = 0; round < measured + warmUp; round++) {
            long s0 = threads.getCurrentThreadCpuTime();
            ExchangeRequest request = need(a.stateFor("b").block());
            byte[] wire = request.toByteArray();
            long r0 = threads.getCurrentThreadCpuTime();
            byte[] answer = need(b.receive(parse(wire, ExchangeRequest.parser())).block()).toByteArray();
            long s1 = threads.getCurrentThreadCpuTime();
            a.onAnswer("b", request, parse(answer, ExchangeResponse.parser())).block();
            long end = threads.getCurrentThreadCpuTime();
            if (round >= warmUp) {
                sender[round - warmUp] = ((r0 - s0) + (end - s1)) / 1e6;
                receiver[round - warmUp] = (s1 - r0) / 1e6;
            }
        }
        return new InProcess(median(sender), median(receiver));
    }

    /** Waits until both stores hold the join of every topic, looking again only at topics whose epoch moved. */
    private static void awaitJoin(Fleet fleet, InMemoryLayoutStore storeA, InMemoryLayoutStore storeB) {
        List<Integer> pending = new ArrayList<>();
        for (int i = 0; i < fleet.size; i++) {
            if (Fleet.differs(i)) {
                pending.add(i);
            }
        }
        Map<Integer, Shape> joins = new HashMap<>();
        pending.forEach(i -> joins.put(i, Fleet.join(i)));
        Side sideA = new Side(fleet, storeA);
        Side sideB = new Side(fleet, storeB);
        long deadline = System.nanoTime() + Duration.ofMinutes(10).toNanos();
        while (!pending.isEmpty()) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException(pending.size() + " topics did not converge, e.g. " + fleet.name(
                        pending.get(0)));
            }
            pending.removeIf(i -> sideA.reached(i, need(joins.get(i))) & sideB.reached(i, need(joins.get(i))));
            pause(50);
        }
    }

    /** One side's progress toward the joins: the epoch last looked at, and whether it was the join. */
    private static final class Side {
        private final Fleet fleet;
        private final InMemoryLayoutStore store;
        private final long[] seen;
        private final boolean[] done;

        Side(Fleet fleet, InMemoryLayoutStore store) {
            this.fleet = fleet;
            this.store = store;
            this.seen = new long[fleet.size];
            this.done = new boolean[fleet.size];
            Arrays.fill(seen, -1);
        }

        boolean reached(int i, Shape join) {
            if (done[i]) {
                return true;
            }
            Layout l = need(store.get(fleet.name(i)).block());
            if (l.epoch() != seen[i]) {
                seen[i] = l.epoch();
                done[i] = Shape.of(l).equals(join);
            }
            return done[i];
        }
    }

    /** Milliseconds of CPU the Java threads spent since {@code before} (a {@link #threadCpu} snapshot). */
    private static double cpuSince(Map<Long, Long> before) {
        double[] sum = new double[1];
        threadCpu().forEach((id, nanos) -> sum[0] += (nanos - before.getOrDefault(id, 0L)) / 1e6);
        return sum[0];
    }

    /** CPU time of every live Java thread, by id. */
    private static Map<Long, Long> threadCpu() {
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        Map<Long, Long> out = new HashMap<>();
        for (long id : threads.getAllThreadIds()) {
            long nanos = threads.getThreadCpuTime(id);
            if (nanos >= 0) {
                out.put(id, nanos);
            }
        }
        return out;
    }

    private static long heapAfterGc() {
        for (int i = 0; i < 3; i++) {
            System.gc();
        }
        return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    }

    private static void pause() {
        pause(1000);
    }

    private static void pause(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    private static void row(String figure, String format, Object... values) {
        System.out.printf(Locale.ROOT, "| %s | " + format + " |%n", prepend(figure, values));
    }

    private static Object[] prepend(Object first, Object[] rest) {
        Object[] all = new Object[rest.length + 1];
        all[0] = first;
        System.arraycopy(rest, 0, all, 1, rest.length);
        return all;
    }

    /** Counts the calls through a transport and their bytes. */
    private static final class Counting implements ExchangeTransport {
        final AtomicLong calls = new AtomicLong();
        final AtomicLong sent = new AtomicLong();
        final AtomicLong answered = new AtomicLong();
        final AtomicLong largest = new AtomicLong();
        private final ExchangeTransport delegate;

        Counting(ExchangeTransport delegate) {
            this.delegate = delegate;
        }

        void reset() {
            calls.set(0);
            sent.set(0);
            answered.set(0);
            largest.set(0);
        }

        @Override
        public Mono<ExchangeResponse> send(String peer, ExchangeRequest request) {
            int size = request.getSerializedSize();
            calls.incrementAndGet();
            sent.addAndGet(size);
            largest.accumulateAndGet(size, Math::max);
            return delegate.send(peer, request).doOnNext(r -> answered.addAndGet(r.getSerializedSize()));
        }
    }

    private static <T> T parse(byte[] wire, Parser<T> parser) {
        try {
            return parser.parseFrom(wire);
        } catch (InvalidProtocolBufferException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * What the machine allows: {@code rounds} POSTs of {@code bodyBytes}, answered with {@code answerBytes}
     * by a bare Reactor Netty server on loopback, each after 50 ms idle (as long as a measured exchange round
     * trip waited for quiet at least). The exchange's own cost is what it takes more.
     */
    private static double[] bareRoundTrips(int rounds, int bodyBytes, int answerBytes, double[] cpu) {
        byte[] body = new byte[bodyBytes];
        byte[] answer = new byte[answerBytes];
        DisposableServer server = HttpServer.create().host("127.0.0.1").port(0)
                .handle((request, response) -> request.receive().aggregate().asByteArray()
                        .flatMap(bytes -> response.status(200).sendByteArray(Mono.just(answer)).then()))
                .bindNow();
        HttpClient client = HttpClient.create();
        String url = "http://127.0.0.1:" + server.port() + "/";
        Runnable call = () -> client.post().uri(url).send((request, out) -> out.sendByteArray(Mono.just(body)))
                .responseSingle((response, content) -> content.asByteArray()).block();
        for (int i = 0; i < WARM_UP_PUSHES; i++) {
            call.run(); // warmed as long as the exchange was
        }
        double[] out = new double[rounds];
        for (int i = 0; i < rounds; i++) {
            pause(50);
            Map<Long, Long> c0 = threadCpu();
            long t0 = System.nanoTime();
            call.run();
            out[i] = (System.nanoTime() - t0) / 1e6;
            cpu[i] = cpuSince(c0);
        }
        server.disposeNow();
        return out;
    }

    private static double min(double[] values) {
        return Arrays.stream(values).min().orElse(Double.NaN);
    }

    private static double max(double[] values) {
        return Arrays.stream(values).max().orElse(Double.NaN);
    }

    /** Until no call of {@code transports} is out, nor was started or finished, for 50 ms (at most 10 s). */
    private static void awaitQuiet(List<InFlight> transports) {
        long quietFor = Duration.ofMillis(50).toNanos();
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (System.nanoTime() < deadline) {
            long now = System.nanoTime();
            if (transports.stream().allMatch(t -> t.out.get() == 0 && now - t.lastNanos.get() >= quietFor)) {
                return;
            }
            pause(5);
        }
        throw new IllegalStateException("the exchange did not fall quiet within 10 s");
    }

    /** A transport whose calls out are counted, with the time one last started or finished. */
    private static final class InFlight implements ExchangeTransport {
        final AtomicLong out = new AtomicLong();
        final AtomicLong lastNanos = new AtomicLong(System.nanoTime());
        private final ExchangeTransport delegate;

        InFlight(ExchangeTransport delegate) {
            this.delegate = delegate;
        }

        @Override
        public Mono<ExchangeResponse> send(String peer, ExchangeRequest request) {
            return Mono.defer(() -> {
                out.incrementAndGet();
                lastNanos.set(System.nanoTime());
                return delegate.send(peer, request).doFinally(signal -> {
                    lastNanos.set(System.nanoTime());
                    out.decrementAndGet();
                });
            });
        }
    }

    private static double median(double[] values) {
        double[] sorted = values.clone();
        Arrays.sort(sorted);
        return sorted[sorted.length / 2];
    }

    /** The ports of cluster {@code self}: they check each cluster's signatures. */
    private static NetServer net(String self) {
        Map<String, VerifyingKey> keys = new LinkedHashMap<>();
        CLUSTERS.forEach(c -> keys.put(c, SigningKey.fromSecret(c + "-bench").verifying()));
        return new NetServer(new Authenticator(self, keys, Optional.empty(), Map.of(), true), NetworkLimits.defaults());
    }

    /** How cluster {@code cluster} calls its peers: each call signed, as a node's are. */
    private static NetClient client(String cluster) {
        return NetClient.of(cluster, SigningKey.fromSecret(cluster + "-bench"), NetworkLimits.defaults(), Optional.empty(),
                Schedulers.parallel());
    }

    /** What a benchmark step expects to be there. */
    private static <T> T need(@Nullable T value) {
        return Objects.requireNonNull(value);
    }
}
