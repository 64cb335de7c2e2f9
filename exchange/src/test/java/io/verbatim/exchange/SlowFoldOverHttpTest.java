package io.verbatim.exchange;

import static org.assertj.core.api.Assertions.assertThat;

import io.verbatim.layoutstore.InMemoryLayoutStore;
import io.verbatim.layoutstore.LayoutStore;
import io.verbatim.model.Layout;
import io.verbatim.net.Authenticator;
import io.verbatim.net.NetClient;
import io.verbatim.net.NetServer;
import io.verbatim.net.NetworkLimits;
import io.verbatim.net.Token;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * Issue 23 over real HTTP: a peer whose fold of a large first call takes longer than the request timeout (a busy
 * machine's 54,615 topics). The fold runs off the server's I/O threads, and the sender cuts its calls after the
 * timeouts until the peer folds them in time, so every topic gets through.
 */
class SlowFoldOverHttpTest {
    private static final int TOPICS = 1200;
    private static final NetServer NET = TestKeys.net("b");
    private static final ExchangeConfig CONFIG = ExchangeConfig.defaults().withAntiEntropyInterval(Duration.ofMinutes(10))
            .withRetry(Duration.ofMillis(50), Duration.ofMillis(200), 0.5).withRequestTimeout(Duration.ofSeconds(1));

    /** Names of the threads b's store was read on while it folded. */
    private final Set<String> foldThreads = ConcurrentHashMap.newKeySet();
    private ExchangeServer server;
    private Pusher pusher;

    @AfterEach
    void stop() {
        if (pusher != null) {
            pusher.dispose();
        }
        if (server != null) {
            server.stop();
        }
    }

    private static InMemoryLayoutStore store() {
        InMemoryLayoutStore store = new InMemoryLayoutStore();
        for (int i = 0; i < TOPICS; i++) {
            store.create("persistent://tenant/namespace/topic-" + i, Layout.initial(1, 1, 0)).block();
        }
        return store;
    }

    @Test
    void aCallTooLargeToFoldInTimeIsFoldedOffTheIoThreadsAndCutUntilEveryTopicGetsThrough() {
        Controller a = new Controller("a", Set.of("b"), Caps.PULSAR_DEFAULTS, store(), Schedulers.parallel());
        // Every read of b's store costs 2 ms of its thread, as a busy machine's fold does: a whole call of
        // 1200 topics takes several seconds (each topic is read to fold it and again to answer), past the 1 s
        // request timeout, however often it is sent again.
        Controller b = new Controller("b", Set.of("a"), Caps.PULSAR_DEFAULTS, new Slow(store()), Schedulers.parallel());
        server = new ExchangeServer(b, CONFIG, NET, Controller.BacklogSource.NONE).start(0);
        pusher = new Pusher(a, new HttpTransport(Map.of("b", server.baseUrl()), TestKeys.client("a")), CONFIG, Schedulers.parallel());
        long t0 = System.nanoTime();
        pusher.pushUntilAcknowledged("b").block(Duration.ofSeconds(120));
        System.out.printf("%d topics through in %d ms, %d call(s) timed out first%n", TOPICS,
                (System.nanoTime() - t0) / 1_000_000, a.metrics().failures("b"));

        assertThat(b.peerStatesView()).hasSize(TOPICS);
        assertThat(a.metrics().failures("b")).as("the whole call timed out at least once").isPositive();
        assertThat(foldThreads).isNotEmpty().noneMatch(t -> t.startsWith("reactor-http"));
    }

    /** A store whose every read blocks its thread for 2 ms. */
    private final class Slow implements LayoutStore {
        private final LayoutStore store;

        Slow(LayoutStore store) {
            this.store = store;
        }

        @Override
        public Mono<Layout> get(String topic) {
            return Mono.defer(() -> {
                foldThreads.add(Thread.currentThread().getName());
                try {
                    Thread.sleep(2);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                return store.get(topic);
            });
        }

        @Override
        public Mono<Layout> create(String topic, Layout initial) {
            return store.create(topic, initial);
        }

        @Override
        public Mono<Layout> compareAndSet(String topic, long expectedEpoch, Layout next) {
            return store.compareAndSet(topic, expectedEpoch, next);
        }

        @Override
        public Flux<Layout> watch(String topic) {
            return store.watch(topic);
        }

        @Override
        public Flux<String> topics() {
            return store.topics();
        }
    }
}
