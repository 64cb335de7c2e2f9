package io.verbatim.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import reactor.test.scheduler.VirtualTimeScheduler;

class RateWindowTest {
    private final VirtualTimeScheduler clock = VirtualTimeScheduler.create();
    private final AtomicLong verbatim = new AtomicLong();
    private final AtomicLong rebatched = new AtomicLong();
    private final RateWindow window = new RateWindow(clock);

    /** Every second of virtual time: 100 verbatim entries toward b, and 10 re-batched after the first minute. */
    private void run(Duration d) {
        for (long s = 0; s < d.toSeconds(); s++) {
            verbatim.addAndGet(100);
            if (clock.now(TimeUnit.SECONDS) >= 60) {
                rebatched.addAndGet(10);
            }
            clock.advanceTimeBy(Duration.ofSeconds(1));
        }
    }

    @Test
    void keepsOneStepASecondForTheLastTenMinutesAndTheTableAveragesTheLastFiveSeconds() {
        window.start(() -> Map.of("b", new long[] {verbatim.get(), rebatched.get()}));
        assertThat(window.snapshot()).isEmpty();
        assertThat(window.history().atMillis()).isEmpty();

        run(Duration.ofSeconds(30));
        RateWindow.History early = window.history();
        assertThat(early.atMillis()).hasSize(30).first().isEqualTo(1_000L);
        assertThat(early.verbatim().get("b")).containsOnly(100.0);
        assertThat(early.rebatched().get("b")).containsOnly(0.0);

        run(Duration.ofMinutes(12));
        RateWindow.History h = window.history();
        assertThat(h.atMillis()).hasSize(RateWindow.HISTORY_SECONDS);
        assertThat(h.atMillis().get(h.atMillis().size() - 1)).isEqualTo(clock.now(TimeUnit.MILLISECONDS));
        assertThat(h.atMillis().get(1) - h.atMillis().get(0)).isEqualTo(RateWindow.STEP_MILLIS);
        assertThat(h.verbatim().get("b")).hasSize(RateWindow.HISTORY_SECONDS).containsOnly(100.0);
        assertThat(h.rebatched().get("b")).containsOnly(10.0);
        assertThat(window.snapshot()).containsEntry("b", new RateWindow.Rate(100, 10));
        window.dispose();
    }

    @Test
    void aRemoteThatAppearsLateCountsZeroBefore() {
        AtomicLong toC = new AtomicLong(-1);
        window.start(() -> toC.get() < 0 ? Map.of("b", new long[] {verbatim.get(), 0})
                : Map.of("b", new long[] {verbatim.get(), 0}, "c", new long[] {toC.get(), 0}));
        run(Duration.ofSeconds(3));
        toC.set(0);
        clock.advanceTimeBy(Duration.ofSeconds(1));
        toC.set(50);
        clock.advanceTimeBy(Duration.ofSeconds(1));
        RateWindow.History h = window.history();
        assertThat(h.verbatim().keySet()).containsExactly("b", "c");
        assertThat(h.verbatim().get("c")).containsExactly(0, 0, 0, 0, 50);
        window.dispose();
    }
}
