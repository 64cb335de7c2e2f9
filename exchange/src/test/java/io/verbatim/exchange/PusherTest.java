package io.verbatim.exchange;

import static org.assertj.core.api.Assertions.assertThat;

import io.verbatim.model.Layout;
import io.verbatim.store.InMemoryLayoutStore;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.test.scheduler.VirtualTimeScheduler;

class PusherTest {
    private final VirtualTimeScheduler clock = VirtualTimeScheduler.create();
    private final ExchangeConfig config = ExchangeConfig.defaults().withAntiEntropyInterval(Duration.ofSeconds(30))
            .withRetry(Duration.ofMillis(100), Duration.ofSeconds(10), 0);

    private Controller controller(String name, String peer) {
        InMemoryLayoutStore store = new InMemoryLayoutStore();
        store.create("t", Layout.initial(1, 1, 0)).block();
        return new Controller(name, Set.of(peer), Caps.PULSAR_DEFAULTS, store, clock);
    }

    @Test
    void retriesWithExponentialBackoffUntilAcknowledged() {
        Controller a = controller("a", "b");
        Controller b = controller("b", "a");
        AtomicInteger calls = new AtomicInteger();
        ExchangeTransport flaky = (peer, request) -> calls.incrementAndGet() <= 3
                ? Mono.error(new ExchangeException(503, "down")) : b.receive(request);
        Pusher pusher = new Pusher(a, flaky, config, clock).start();
        clock.advanceTimeBy(Duration.ofMillis(100 + 200 + 400 - 1));
        assertThat(calls.get()).as("backoff 100, 200, 400 ms").isEqualTo(3);
        clock.advanceTimeBy(Duration.ofMillis(1));
        assertThat(calls.get()).isEqualTo(4);
        assertThat(a.hasAnswered("b")).isTrue();
        assertThat(a.metrics().failures("b")).isEqualTo(3);
        assertThat(a.metrics().successes("b")).isEqualTo(1);
        pusher.dispose();
    }

    @Test
    void pushesAtOnceOnAChangeAndOnEveryAntiEntropyTick() {
        Controller a = controller("a", "b");
        Controller b = controller("b", "a");
        AtomicInteger calls = new AtomicInteger();
        Pusher pusher = new Pusher(a, (peer, request) -> {
            calls.incrementAndGet();
            return b.receive(request);
        }, config, clock).start();
        assertThat(calls.get()).as("a push at start").isEqualTo(1);
        a.split("t", 0).block();
        assertThat(calls.get()).as("a push at once on the change").isEqualTo(2);
        assertThat(b.store().get("t").block().activeSegments()).hasSize(2);
        clock.advanceTimeBy(Duration.ofSeconds(90));
        assertThat(calls.get()).as("and one per anti-entropy tick").isEqualTo(5);
        pusher.dispose();
    }
}
