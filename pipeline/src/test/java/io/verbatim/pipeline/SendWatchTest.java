package io.verbatim.pipeline;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import reactor.test.scheduler.VirtualTimeScheduler;

class SendWatchTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    @Test
    void aSendWithoutAnswerFailsThePassOneTimeoutAfterItStartedNotEarlier() {
        VirtualTimeScheduler time = VirtualTimeScheduler.create();
        SendWatch watch = new SendWatch(time, TIMEOUT);
        AtomicReference<Throwable> failed = new AtomicReference<>();
        watch.expired().subscribe(v -> { }, failed::set);

        watch.start().finish();
        time.advanceTimeBy(Duration.ofSeconds(10));
        watch.start(); // never answered: started at 10 s
        watch.start().finish();
        time.advanceTimeBy(Duration.ofSeconds(29)); // 39 s: the first task found it 20 s old and waits for it
        assertThat(failed.get()).isNull();
        time.advanceTimeBy(Duration.ofSeconds(1)); // 40 s: due
        assertThat(failed.get()).isInstanceOf(TimeoutException.class).hasMessageContaining("PT30S");
    }

    @Test
    void answeredSendsNeverFailItAndAClosedWatchCompletesAndLeavesNoTimerTask() {
        VirtualTimeScheduler time = VirtualTimeScheduler.create();
        SendWatch watch = new SendWatch(time, TIMEOUT);
        AtomicReference<Throwable> failed = new AtomicReference<>();
        AtomicReference<Boolean> completed = new AtomicReference<>(false);
        watch.expired().subscribe(v -> { }, failed::set, () -> completed.set(true));

        for (int i = 0; i < 1000; i++) {
            watch.start().finish();
            time.advanceTimeBy(Duration.ofSeconds(1));
        }
        assertThat(failed.get()).isNull();
        SendWatch.Send late = watch.start();
        watch.close();
        time.advanceTimeBy(Duration.ofMinutes(5));
        assertThat(failed.get()).as("a closed watch times nothing").isNull();
        assertThat(completed.get()).isTrue();
        late.finish();
    }
}
