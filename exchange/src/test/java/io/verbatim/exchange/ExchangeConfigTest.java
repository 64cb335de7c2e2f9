package io.verbatim.exchange;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class ExchangeConfigTest {
    @Test
    void eachValueAboveItsMaximumIsRefusedNamingTheKey() {
        ExchangeConfig d = ExchangeConfig.defaults();
        assertThatThrownBy(() -> d.withAntiEntropyInterval(Duration.ofDays(2)))
                .hasMessage("exchange.antiEntropyInterval is PT48H: must be a positive duration, at most PT24H");
        assertThatThrownBy(() -> new ExchangeConfig(d.antiEntropyInterval(), d.retry(), Duration.ofHours(2),
                d.maxBodyBytes()))
                .hasMessage("exchange.requestTimeout is PT2H: must be a positive duration, at most PT1H");
        assertThatThrownBy(() -> d.withMaxBodyBytes(Integer.MAX_VALUE))
                .hasMessage("exchange.maxBodyBytes is 2147483647: must be within 1024..268435456");
    }
}
