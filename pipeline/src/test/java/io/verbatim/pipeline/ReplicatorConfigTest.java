package io.verbatim.pipeline;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class ReplicatorConfigTest {
    private static final ReplicatorConfig DEFAULTS = ReplicatorConfig.defaults("a");

    /** P1000000D passed and then overflowed the send timeout's nanoseconds, stopping every replicator. */
    @Test
    void aTimeoutAboveAnHourIsRefusedNamingTheValue() {
        assertThatThrownBy(() -> DEFAULTS.withSendTimeout(Duration.ofDays(1_000_000)))
                .hasMessage("sendTimeout PT24000000H must be a positive duration, at most PT1H");
        assertThat(DEFAULTS.withSendTimeout(ReplicatorConfig.MAX_TIMEOUT).sendTimeout()).isEqualTo(Duration.ofHours(1));
    }

    @Test
    void aMessageTtlAboveTenYearsAndAWindowAboveAMillionAreRefused() {
        assertThatThrownBy(() -> DEFAULTS.withMessageTtl(Duration.ofDays(3651)))
                .hasMessage("messageTtl PT87624H must be zero (none) or positive, at most PT87600H");
        assertThatThrownBy(() -> DEFAULTS.withMaxInFlight(1_000_001))
                .hasMessage("maxInFlight 1000001 must be within 1..1000000");
    }
}
