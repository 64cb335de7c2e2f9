package io.verbatim.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The notation the command line shares ({@code --duration}, {@code --rtt}, {@code --outage}). */
class DurationsTest {
    @Test
    void parsesTheNotationExactly() {
        assertThat(Durations.parse("--rtt", "80ms")).isEqualTo(Duration.ofMillis(80));
        assertThat(Durations.parse("--duration", "1.5s")).isEqualTo(Duration.ofMillis(1500));
        assertThat(Durations.parse("--duration", "0.000001ms")).isEqualTo(Duration.ofNanos(1));
        assertThat(Durations.parse("--duration", "PT30S")).isEqualTo(Duration.ofSeconds(30));
        assertThat(Durations.parse("--duration", "0")).isZero();
        assertThat(Durations.parse("--duration", "106751d")).isEqualTo(Duration.ofDays(106_751));
    }

    /** 99999999999999999999d used to saturate to 292 years without a word. */
    @ParameterizedTest
    @ValueSource(strings = {"99999999999999999999d", "106752d", "P1000000D", "PT99999999999999999999S",
        "P999999999999999999D"})
    void aDurationWhoseNanosecondsOverflowIsRefused(String text) {
        assertThatThrownBy(() -> Durations.parse("--outage", text)).isInstanceOf(ConfigException.class)
                .hasMessage("--outage: '" + text + "' is too long (expected at most 106751d: durations are counted in "
                        + "nanoseconds)");
    }

    @Test
    void whatIsNoDurationIsNamed() {
        assertThatThrownBy(() -> Durations.parse("--duration", "soon"))
                .hasMessage("--duration: 'soon' is not a duration (expected a number with a unit: 250ms, 30s, 5m, 1h, "
                        + "or 0)");
        assertThatThrownBy(() -> Durations.parse("--duration", "-PT5S")).hasMessageStartingWith(
                "--duration: '-PT5S' is not a duration");
        assertThatThrownBy(() -> Durations.parse("--duration", null)).hasMessageStartingWith(
                "--duration: null is not a duration");
    }
}
