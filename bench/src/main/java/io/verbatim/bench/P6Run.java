package io.verbatim.bench;

import static io.verbatim.bench.ExchangeMeasures.cpuSince;
import static io.verbatim.bench.ExchangeMeasures.need;
import static io.verbatim.bench.ExchangeMeasures.pause;
import static io.verbatim.bench.ExchangeMeasures.threadCpu;
import static io.verbatim.bench.ExchangeWiring.client;
import static io.verbatim.bench.ExchangeWiring.net;

import io.verbatim.exchange.Caps;
import io.verbatim.exchange.Controller;
import io.verbatim.exchange.ExchangeConfig;
import io.verbatim.exchange.ExchangeServer;
import io.verbatim.exchange.ExchangeTransport;
import io.verbatim.exchange.HttpTransport;
import io.verbatim.exchange.Pusher;
import io.verbatim.exchange.proto.ExchangeRequest;
import io.verbatim.exchange.proto.ExchangeResponse;
import io.verbatim.layoutstore.InMemoryLayoutStore;
import io.verbatim.model.Join;
import io.verbatim.model.Layout;
import io.verbatim.model.Shape;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.netty.DisposableServer;
import reactor.netty.http.client.HttpClient;
import reactor.netty.http.server.HttpServer;

    /** One P6 run's figures, in milliseconds, and the sizes of its last call's body and answer. */
    record P6Run(double[] rtt, double[] rttCpu, double[] converge, int bodyBytes, int answerBytes) {
    /** Probe pushes before the measured rounds: enough for the JIT to compile the path at its last tier. */
    static final int WARM_UP_PUSHES = 5000;
    /** Rounds of a whole P6 run on clusters of its own, first, not measured: the split and its folds warmed too. */
    static final int WARM_UP_ROUNDS = 60;

    /** Three fresh clusters: {@code pushes} probe pushes, then {@code rounds} of a quiet round trip and a split. */
    static P6Run measure(int pushes, int rounds) {
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
     * What the machine allows: {@code rounds} POSTs of {@code bodyBytes}, answered with {@code answerBytes}
     * by a bare Reactor Netty server on loopback, each after 50 ms idle (as long as a measured exchange round
     * trip waited for quiet at least). The exchange's own cost is what it takes more.
     */
    static double[] bareRoundTrips(int rounds, int bodyBytes, int answerBytes, double[] cpu) {
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
}
