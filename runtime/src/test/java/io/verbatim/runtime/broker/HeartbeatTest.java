package io.verbatim.runtime.broker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import reactor.test.StepVerifier;
import reactor.test.scheduler.VirtualTimeScheduler;

/** The liveness rule of a session or layout stream, and its one timer task, in virtual time. */
class HeartbeatTest {
    private static final long MS = 1_000_000;
    private static final Heartbeat BEAT = new Heartbeat(Duration.ofMillis(100), Duration.ofMillis(300));

    @Test
    void aConnectionThatHeardNothingForTheTimeoutIsDeadWhateverItsPings() {
        assertThat(BEAT.next(300 * MS, 0, 250 * MS)).isEqualTo(new Heartbeat.Dead(300 * MS));
        assertThat(BEAT.next(299 * MS, 0, 250 * MS)).isEqualTo(new Heartbeat.Wait(MS));
    }

    @Test
    void itPingsEveryIntervalAndWakesNoLaterThanItWouldBeDead() {
        assertThat(BEAT.next(100 * MS, 0, 0)).isEqualTo(new Heartbeat.Ping(100 * MS));
        assertThat(BEAT.next(250 * MS, 0, 200 * MS)).isEqualTo(new Heartbeat.Wait(50 * MS));
        assertThat(BEAT.next(260 * MS, 0, 150 * MS)).isEqualTo(new Heartbeat.Ping(40 * MS));
        assertThat(BEAT.next(150 * MS, 120 * MS, 100 * MS)).isEqualTo(new Heartbeat.Wait(50 * MS));
    }

    @Test
    void aTimeoutNotAboveTheIntervalIsRefusedNamingBothKeys() {
        assertThatThrownBy(() -> new Heartbeat(Duration.ofSeconds(1), Duration.ofSeconds(1)))
                .hasMessageContaining("replication.pingTimeout PT1S must be above replication.pingInterval PT1S");
        assertThatThrownBy(() -> new Heartbeat(Duration.ofMillis(1), Duration.ofSeconds(1)))
                .hasMessageContaining("replication.pingInterval PT0.001S must be within 10ms..PT1H");
    }

    @Test
    void itPingsAtLeastEveryThirdOfTheRemotesIdleTimeout() {
        assertThat(Heartbeat.DEFAULT.within(Duration.ofMillis(600)).interval()).isEqualTo(Duration.ofMillis(200));
        assertThat(Heartbeat.DEFAULT.within(Duration.ofSeconds(60))).isEqualTo(Heartbeat.DEFAULT);
    }

    @Test
    void anOpeningNeverAnsweredExpiresOneTimeoutAfterItBegan() {
        VirtualTimeScheduler clock = VirtualTimeScheduler.create();
        HeartbeatWatch watch = new HeartbeatWatch(BEAT, clock, "the session");
        StepVerifier.withVirtualTime(watch::expired, () -> clock, 1).expectSubscription()
                .expectNoEvent(Duration.ofMillis(299))
                .then(() -> clock.advanceTimeBy(Duration.ofMillis(1)))
                .expectErrorSatisfies(e -> assertThat(e).isInstanceOf(TimeoutException.class)
                        .hasMessage("the session heard nothing for 300 ms, its opening unanswered "
                                + "(replication.pingTimeout 300 ms): the connection is dead"))
                .verify(Duration.ofSeconds(5));
    }

    @Test
    void anOpenConnectionPingsAndLivesAsLongAsItHearsAndDiesOneTimeoutAfterItStopsHearing() {
        VirtualTimeScheduler clock = VirtualTimeScheduler.create();
        HeartbeatWatch watch = new HeartbeatWatch(BEAT, clock, "the stream");
        AtomicInteger pings = new AtomicInteger();
        watch.heard();
        watch.pingWith(pings::incrementAndGet);
        StepVerifier.withVirtualTime(watch::expired, () -> clock, 1).expectSubscription()
                .then(() -> {
                    for (int i = 0; i < 10; i++) { // a pong after every ping: a second of life
                        clock.advanceTimeBy(Duration.ofMillis(100));
                        watch.heard();
                    }
                })
                .then(() -> assertThat(pings.get()).isEqualTo(10))
                .expectNoEvent(Duration.ofMillis(299))
                .then(() -> assertThat(pings.get()).as("still pinging while silent").isEqualTo(12))
                .then(() -> clock.advanceTimeBy(Duration.ofMillis(1)))
                .expectErrorMessage("the stream heard nothing for 300 ms (replication.pingTimeout 300 ms): the "
                        + "connection is dead")
                .verify(Duration.ofSeconds(5));
    }

    @Test
    void aDisposedWatchCompletesAndNeitherPingsNorExpires() {
        VirtualTimeScheduler clock = VirtualTimeScheduler.create();
        HeartbeatWatch watch = new HeartbeatWatch(BEAT, clock, "the session");
        AtomicInteger pings = new AtomicInteger();
        watch.pingWith(pings::incrementAndGet);
        watch.dispose();
        StepVerifier.create(watch.expired()).verifyComplete();
        clock.advanceTimeBy(Duration.ofSeconds(5));
        assertThat(pings.get()).isZero();
        assertThat(watch.isDisposed()).isTrue();
    }
}
