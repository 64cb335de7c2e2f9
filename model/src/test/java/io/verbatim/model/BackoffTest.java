package io.verbatim.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.Random;
import org.junit.jupiter.api.Test;

class BackoffTest {
    private static final Backoff STEADY = new Backoff(Duration.ofMillis(100), Duration.ofSeconds(1), 0);

    @Test
    void doublesFromTheInitialDelayUpToTheMaximum() {
        Random unused = new Random(1);
        assertThat(STEADY.delay(1, unused)).isEqualTo(Duration.ofMillis(100));
        assertThat(STEADY.delay(2, unused)).isEqualTo(Duration.ofMillis(200));
        assertThat(STEADY.delay(4, unused)).isEqualTo(Duration.ofMillis(800));
        assertThat(STEADY.delay(5, unused)).isEqualTo(Duration.ofSeconds(1));
        assertThat(STEADY.delay(Long.MAX_VALUE, unused)).isEqualTo(Duration.ofSeconds(1));
    }

    @Test
    void jitterSpreadsWithinBoundsAndASeedReplaysIt() {
        Backoff jittered = new Backoff(Duration.ofMillis(100), Duration.ofSeconds(10), 0.5);
        Random a = new Random(42);
        Random b = new Random(42);
        for (int attempt = 1; attempt < 40; attempt++) {
            Duration d = jittered.delay(attempt, a);
            assertThat(d).isEqualTo(jittered.delay(attempt, b));
            assertThat(d).isBetween(Duration.ofMillis(100), Duration.ofSeconds(10));
            long nominal = Math.min(10_000, 100L << Math.min(attempt - 1, 20));
            assertThat(d.toMillis()).isBetween((long) (nominal * 0.5) - 1, (long) (nominal * 1.5) + 1);
        }
    }

    @Test
    void aBadScheduleIsRefusedNamingTheValue() {
        assertThatThrownBy(() -> new Backoff(Duration.ZERO, Duration.ofSeconds(1), 0))
                .hasMessageContaining("initial PT0S must be a positive duration");
        assertThatThrownBy(() -> new Backoff(Duration.ofSeconds(5), Duration.ofSeconds(1), 0))
                .hasMessageContaining("max PT1S is below initial PT5S");
        assertThatThrownBy(() -> new Backoff(Duration.ofSeconds(1), Duration.ofSeconds(1), 1.5))
                .hasMessageContaining("jitter 1.5 is outside 0..1");
        assertThatThrownBy(() -> new Backoff(Duration.ofSeconds(1), Duration.ofDays(1_000_000), 0))
                .hasMessageContaining("max PT24000000H is above PT1H, the longest delay");
        assertThat(new Backoff(Duration.ofHours(1), Backoff.MAX_DELAY, 1).delay(Long.MAX_VALUE, new Random()))
                .isEqualTo(Duration.ofHours(1));
        assertThatThrownBy(() -> STEADY.delay(0, new Random())).hasMessageContaining("attempt 0");
    }
}
