package io.verbatim.bench;

import io.verbatim.exchange.Caps;
import io.verbatim.exchange.Controller;
import io.verbatim.exchange.ExchangeConfig;
import io.verbatim.exchange.ExchangeServer;
import io.verbatim.exchange.HttpTransport;
import io.verbatim.exchange.Pusher;
import io.verbatim.exchange.proto.ExchangeRequest;
import io.verbatim.model.Layout;
import io.verbatim.model.Mutation;
import io.verbatim.model.Shape;
import io.verbatim.store.InMemoryLayoutStore;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import reactor.core.scheduler.Schedulers;

/**
 * The exchange's figures: P6, convergence time after a split ÷ one exchange round trip (three clusters
 * over HTTP on loopback); P9, the CPU an anti-entropy round costs for 10,000 topics (the sender building
 * its state, the receiver parsing and folding every topic, and the answer).
 *
 * <p>Run: {@code java -cp bench/target/benchmarks.jar io.verbatim.bench.ExchangeBench [rounds] [topics]}
 */
public final class ExchangeBench {
    private static final String TOKEN = "bench";

    private ExchangeBench() {
    }

    public static void main(String[] args) {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 20;
        int topics = args.length > 1 ? Integer.parseInt(args[1]) : 10_000;
        p6(rounds);
        p9(topics);
        System.exit(0);
    }

    private static void p6(int rounds) {
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
            ExchangeServer server = new ExchangeServer(c, config, Map.of(TOKEN, ExchangeServer.BROKER_ROLE), () -> null,
                    Controller.BacklogSource.NONE).start(0);
            stores.put(name, store);
            controllers.put(name, c);
            servers.add(server);
            urls.put(name, server.baseUrl());
        }
        List<Pusher> pushers = new ArrayList<>();
        controllers.values().forEach(c -> pushers.add(new Pusher(c, new HttpTransport(urls, TOKEN), config,
                Schedulers.parallel()).start()));
        Pusher probe = new Pusher(controllers.get("a"), new HttpTransport(urls, TOKEN), config, Schedulers.parallel());
        for (int i = 0; i < 50; i++) {
            probe.pushUntilAcknowledged("b").block(); // warm-up
        }
        double[] rtt = new double[rounds];
        double[] converge = new double[rounds];
        for (int i = 0; i < rounds; i++) {
            long t0 = System.nanoTime();
            probe.pushUntilAcknowledged("b").block();
            rtt[i] = (System.nanoTime() - t0) / 1e6;
            Layout before = stores.get("a").get("t").block();
            long widest = before.activeSegments().stream()
                    .max(java.util.Comparator.comparingInt(s -> s.range().size())).orElseThrow().id();
            long t1 = System.nanoTime();
            controllers.get("a").split("t", widest).block();
            // The finer layout wins: a's new boundary, with the largest bucket count anyone has there.
            Shape target = io.verbatim.model.Join.of(Shape.of(stores.get("a").get("t").block()),
                    Shape.of(stores.get("b").get("t").block()), Shape.of(stores.get("c").get("t").block()));
            for (String other : List.of("a", "b", "c")) {
                stores.get(other).watch("t").filter(l -> Shape.of(l).equals(target)).next()
                        .block(Duration.ofSeconds(10));
            }
            converge[i] = (System.nanoTime() - t1) / 1e6;
        }
        pushers.forEach(Pusher::dispose);
        servers.forEach(ExchangeServer::stop);
        double medianRtt = median(rtt);
        double medianConverge = median(converge);
        System.out.println("| figure | value |");
        System.out.println("| --- | --- |");
        System.out.printf(Locale.ROOT, "| one exchange round trip (loopback, median of %d) | %.2f ms |%n", rounds,
                medianRtt);
        System.out.printf(Locale.ROOT, "| convergence of 3 clusters after a split (median) | %.2f ms |%n",
                medianConverge);
        System.out.printf(Locale.ROOT, "| P6 convergence / round trip | %.2f |%n", medianConverge / medianRtt);
    }

    private static void p9(int topics) {
        InMemoryLayoutStore senderStore = new InMemoryLayoutStore();
        InMemoryLayoutStore receiverStore = new InMemoryLayoutStore();
        Layout layout = Layout.initial(1, 4, 0);
        for (int i = 0; i < 3; i++) {
            long widest = layout.activeSegments().stream()
                    .max(java.util.Comparator.comparingInt(s -> s.range().size())).orElseThrow().id();
            layout = layout.apply(Mutation.split(widest), layout.epoch(), 0).layoutOrThrow();
        }
        for (int i = 0; i < topics; i++) {
            senderStore.create("topic-" + i, layout).block();
            receiverStore.create("topic-" + i, layout).block();
        }
        Controller sender = new Controller("a", Set.of("b"), Caps.PULSAR_DEFAULTS, senderStore, Schedulers.immediate());
        Controller receiver = new Controller("b", Set.of("a"), Caps.PULSAR_DEFAULTS, receiverStore,
                Schedulers.immediate());
        ThreadMXBean cpu = ManagementFactory.getThreadMXBean();
        double[] millis = new double[7];
        int bytes = 0;
        for (int round = 0; round < millis.length + 2; round++) {
            long t0 = cpu.getCurrentThreadCpuTime();
            ExchangeRequest request = sender.stateFor("b").block();
            byte[] wire = request.toByteArray();
            bytes = wire.length;
            var answer = receiver.receive(parse(wire)).block();
            sender.onAnswer("b", request, answer).block();
            double took = (cpu.getCurrentThreadCpuTime() - t0) / 1e6;
            if (round >= 2) {
                millis[round - 2] = took;
            }
        }
        System.out.printf(Locale.ROOT, "| P9 CPU of one anti-entropy round, %d topics (median of %d) | %.1f ms "
                + "(%.1f µs per topic; request %d KB) |%n", topics, millis.length, median(millis),
                median(millis) * 1000 / topics, bytes / 1024);
    }

    private static ExchangeRequest parse(byte[] wire) {
        try {
            return ExchangeRequest.parseFrom(wire);
        } catch (com.google.protobuf.InvalidProtocolBufferException e) {
            throw new IllegalStateException(e);
        }
    }

    private static double median(double[] values) {
        double[] sorted = values.clone();
        Arrays.sort(sorted);
        return sorted[sorted.length / 2];
    }
}
