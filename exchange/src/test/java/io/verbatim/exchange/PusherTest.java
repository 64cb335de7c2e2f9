package io.verbatim.exchange;

import static org.assertj.core.api.Assertions.assertThat;

import io.verbatim.exchange.proto.ExchangeRequest;
import io.verbatim.layoutstore.InMemoryLayoutStore;
import io.verbatim.model.Layout;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.test.scheduler.VirtualTimeScheduler;

class PusherTest {
    private final VirtualTimeScheduler clock = VirtualTimeScheduler.create();
    private final ExchangeConfig config = ExchangeConfig.defaults().withAntiEntropyInterval(Duration.ofSeconds(30))
            .withRetry(Duration.ofMillis(100), Duration.ofSeconds(10), 0);

    private Controller controller(String name, String peer) {
        return controller(name, peer, 1);
    }

    private Controller controller(String name, String peer, int topics) {
        InMemoryLayoutStore store = new InMemoryLayoutStore();
        for (int i = 0; i < topics; i++) {
            store.create(topics == 1 ? "t" : "persistent://tenant/namespace/topic-" + i, Layout.initial(1, 1, 0)).block();
        }
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

    /** Defect 5: at about 43,000 topics the one call passed the peer's body limit and every push got 413. */
    @Test
    void aLargeFleetGoesInCallsUnderThePeersLimitLearnedFromItsAnswers() {
        Controller a = controller("a", "b", 3000);
        Controller b = controller("b", "a", 3000).maxBodyBytes(20_000);
        List<Integer> sizes = new CopyOnWriteArrayList<>();
        ExchangeTransport limited = (peer, request) -> {
            sizes.add(request.getSerializedSize());
            return request.getSerializedSize() > 20_000
                    ? Mono.error(new ExchangeException(413, "body of " + request.getSerializedSize() + " bytes"))
                    : b.receive(request);
        };
        Pusher pusher = new Pusher(a, limited, config, clock);
        pusher.pushUntilAcknowledged("b").block();
        assertThat(a.metrics().oversizedStates()).isZero();
        assertThat(b.peerStatesView()).hasSize(3000);
        int refused = (int) sizes.stream().filter(size -> size > 20_000).count();
        assertThat(sizes.get(0)).as("first cut to the local limit").isGreaterThan(20_000);
        assertThat(refused).as("halved until it fits: a few 413s, not one per topic").isBetween(1, 6);
        assertThat(sizes.subList(refused, sizes.size())).as("then every call fits the limit the peer told")
                .allMatch(size -> size <= 20_000);
        sizes.clear();
        pusher.pushUntilAcknowledged("b").block();
        assertThat(sizes).as("the next push is cut to the peer's limit from the start").hasSizeGreaterThan(5)
                .allMatch(size -> size <= 20_000);
    }

    /**
     * Issue 23: a first call of 54,615 topics took longer to fold than the request timeout; it was cancelled and
     * sent again whole, forever. A call that times out is cut as a 413 cuts it, until the calls fit the time.
     */
    @Test
    void aCallThatTimesOutIsCutAsA413CutsItUntilEveryTopicGetsThrough() {
        Controller a = controller("a", "b", 3000);
        Controller b = controller("b", "a", 3000);
        List<Integer> topicsPerCall = new CopyOnWriteArrayList<>();
        // The peer folds a topic a millisecond: a call of more than 1000 topics passes the 1 s timeout.
        ExchangeTransport slow = (peer, request) -> {
            topicsPerCall.add(request.getTopicsCount());
            return Mono.delay(Duration.ofMillis(request.getTopicsCount()), clock).then(b.receive(request));
        };
        AtomicBoolean done = new AtomicBoolean();
        new Pusher(a, slow, config.withRequestTimeout(Duration.ofSeconds(1)), clock).pushUntilAcknowledged("b")
                .subscribe(v -> { }, e -> { }, () -> done.set(true));
        clock.advanceTimeBy(Duration.ofMinutes(2));
        assertThat(done).as("every topic taken: %s", topicsPerCall).isTrue();
        assertThat(b.peerStatesView()).hasSize(3000);
        assertThat(topicsPerCall.get(0)).as("the first call carried every topic").isEqualTo(3000);
        int timedOut = (int) a.metrics().failures("b");
        assertThat(timedOut).as("timed out and cut, a few times: %s", topicsPerCall).isBetween(2, 4);
        assertThat(topicsPerCall.subList(timedOut, topicsPerCall.size())).as("then calls the peer folds in time")
                .allMatch(n -> n < 1000);
    }

    /** Timeouts of a partition must not leave the calls small for good: quick answers let them grow back. */
    @Test
    void theLimitATimeoutTaughtGrowsBackOnceCallsAreAnsweredQuickly() {
        Controller a = controller("a", "b", 3000);
        Controller b = controller("b", "a", 3000);
        List<Integer> topicsPerCall = new CopyOnWriteArrayList<>();
        AtomicBoolean partitioned = new AtomicBoolean(true);
        ExchangeTransport link = (peer, request) -> {
            topicsPerCall.add(request.getTopicsCount());
            return partitioned.get() ? Mono.never() : b.receive(request);
        };
        Pusher pusher = new Pusher(a, link, config.withRequestTimeout(Duration.ofSeconds(1)), clock);
        int full = pusher.limit("b");
        pusher.pushUntilAcknowledged("b").subscribe();
        clock.advanceTimeBy(Duration.ofSeconds(30));
        assertThat(pusher.limit("b")).as("halved at every timeout").isLessThan(full / 8);
        int healedAt = topicsPerCall.size();
        partitioned.set(false);
        clock.advanceTimeBy(Duration.ofSeconds(30));
        assertThat(b.peerStatesView()).hasSize(3000);
        List<Integer> after = topicsPerCall.subList(healedAt, topicsPerCall.size());
        assertThat(after.get(0)).as("small at first: %s", after).isLessThan(30);
        assertThat(after.stream().mapToInt(Integer::intValue).max().orElseThrow()).as("then doubling: %s", after)
                .isGreaterThan(1000);
        assertThat(pusher.limit("b")).as("doubled back past the whole state").isGreaterThan(
                a.stateFor("b").block().getSerializedSize());
        topicsPerCall.clear();
        pusher.pushUntilAcknowledged("b").block();
        assertThat(topicsPerCall).as("the next push goes whole again").containsExactly(3000);
    }

    @Test
    void cutKeepsEveryCallUnderTheLimitAndPutsAnOversizedTopicAlone() {
        Controller a = controller("a", "b", 50);
        ExchangeRequest all = a.stateFor("b").block();
        List<List<String>> calls = Pusher.cut(all, 1024);
        assertThat(calls.stream().mapToInt(List::size).sum()).isEqualTo(50);
        for (List<String> call : calls) {
            assertThat(a.statesFor("b", call).block().getSerializedSize()).isLessThanOrEqualTo(1024);
        }
        assertThat(Pusher.cut(all, 10)).hasSize(50);
        assertThat(Pusher.cut(ExchangeRequest.newBuilder().setCluster("a").build(), 1024)).containsExactly(List.of());
    }

    @Test
    void aStateTooLargeForThePeerEvenAloneIsReportedAndLeftOut() {
        Controller a = controller("a", "b");
        ExchangeTransport refusing = (peer, request) -> Mono.error(new ExchangeException(413, "too large"));
        new Pusher(a, refusing, config, clock).pushUntilAcknowledged("b").block();
        assertThat(a.metrics().oversizedStates()).isEqualTo(1);
    }

    @Test
    void aRefusalThatRetryingCannotFixIsRetriedAtTheAntiEntropyCadenceNotHotLooped() {
        Controller a = controller("a", "b");
        AtomicInteger calls = new AtomicInteger();
        ExchangeTransport forbidden = (peer, request) -> {
            calls.incrementAndGet();
            return Mono.error(new ExchangeException(403, "role 'operator' may not call the exchange"));
        };
        Pusher pusher = new Pusher(a, forbidden, config, clock).start();
        clock.advanceTimeBy(Duration.ofSeconds(95));
        assertThat(calls.get()).as("at 0, 30, 60 and 90 s").isEqualTo(4);
        assertThat(a.metrics().lastFailure("b")).contains("403", "operator");
        pusher.dispose();
    }

    @Test
    void aPeerWithoutTheEndpointIsProbedEveryAntiEntropyIntervalAndTakenOnceItAnswers() {
        Controller a = controller("a", "b");
        Controller b = controller("b", "a");
        AtomicInteger calls = new AtomicInteger();
        ExchangeTransport late = (peer, request) -> calls.incrementAndGet() <= 2
                ? Mono.error(new ExchangeException(404, "no such endpoint")) : b.receive(request);
        List<Boolean> verdicts = new ArrayList<>();
        a.verdicts("b").subscribe(verdicts::add);
        Pusher pusher = new Pusher(a, late, config, clock).start();
        assertThat(a.isUnsupported("b")).isTrue();
        clock.advanceTimeBy(Duration.ofSeconds(29));
        assertThat(calls.get()).as("no hot loop on a 404").isEqualTo(1);
        clock.advanceTimeBy(Duration.ofSeconds(2));
        assertThat(calls.get()).as("probed again after the anti-entropy interval").isEqualTo(2);
        assertThat(a.isUnsupported("b")).isTrue();
        clock.advanceTimeBy(Duration.ofSeconds(30));
        assertThat(calls.get()).isGreaterThanOrEqualTo(3);
        assertThat(a.isUnsupported("b")).isFalse();
        assertThat(verdicts).containsExactly(false, true);
        pusher.dispose();
    }
}
