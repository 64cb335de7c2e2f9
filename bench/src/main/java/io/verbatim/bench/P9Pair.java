package io.verbatim.bench;

import static io.verbatim.bench.ExchangeMeasures.need;
import static io.verbatim.bench.ExchangeMeasures.pause;
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
import io.verbatim.model.Layout;
import io.verbatim.model.Shape;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

    /** P9's two controllers over HTTP, {@code topics} topics each (30 % laid out differently), once converged. */
    record P9Pair(Controller a, Controller b, ExchangeServer serverA, ExchangeServer serverB, Counting toB,
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

    /** Counts the calls through a transport and their bytes. */
    static final class Counting implements ExchangeTransport {
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
}
