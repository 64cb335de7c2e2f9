package io.verbatim.pipeline;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.verbatim.budget.InFlightBudget;
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

    @Test
    void theDefaultWindowIsInBytesAndCoversAWanBandwidthDelayProduct() {
        // 1 Gbit/s over 250 ms: 31.25 MB in flight
        assertThat(DEFAULTS.maxInFlightBytes()).isGreaterThanOrEqualTo(125_000_000L / 4);
        // no entry count binds first: even entries of nothing are charged their overhead
        assertThat((long) DEFAULTS.maxInFlight() * InFlightBudget.ENTRY_OVERHEAD_BYTES)
                .isGreaterThan(DEFAULTS.maxInFlightBytes());
        assertThatThrownBy(() -> DEFAULTS.withMaxInFlightBytes(0))
                .hasMessage("maxInFlightBytes 0 must be within 1..17179869184");
        assertThatThrownBy(() -> DEFAULTS.withMaxInFlightBytes(ReplicatorConfig.MAX_IN_FLIGHT_BYTES + 1))
                .hasMessageStartingWith("maxInFlightBytes 17179869185 must be within");
    }
}
