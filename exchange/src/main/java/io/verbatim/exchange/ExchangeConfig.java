package io.verbatim.exchange;

import io.verbatim.model.Backoff;
import java.time.Duration;

/**
 * The exchange's settings; each check names its key.
 *
 * @param antiEntropyInterval how often every peer gets the whole state, change or not
 * @param retry the backoff between attempts of a push
 * @param requestTimeout how long one push may take
 * @param maxBodyBytes the largest request body the endpoint reads
 */
public record ExchangeConfig(Duration antiEntropyInterval, Backoff retry, Duration requestTimeout,
        int maxBodyBytes) {

    public ExchangeConfig {
        positive("exchange.antiEntropyInterval", antiEntropyInterval);
        positive("exchange.requestTimeout", requestTimeout);
        if (retry == null) {
            throw new IllegalArgumentException("exchange.retry must be set");
        }
        if (maxBodyBytes < 1024) {
            throw new IllegalArgumentException("exchange.maxBodyBytes is " + maxBodyBytes + ": must be at least 1024");
        }
    }

    public static ExchangeConfig defaults() {
        return new ExchangeConfig(Duration.ofSeconds(30), new Backoff(Duration.ofMillis(100), Duration.ofSeconds(30), 0.5),
                Duration.ofSeconds(10), 4 << 20);
    }

    public ExchangeConfig withAntiEntropyInterval(Duration value) {
        return new ExchangeConfig(value, retry, requestTimeout, maxBodyBytes);
    }

    public ExchangeConfig withRetry(Duration initial, Duration max, double jitter) {
        return new ExchangeConfig(antiEntropyInterval, new Backoff(initial, max, jitter), requestTimeout, maxBodyBytes);
    }

    public ExchangeConfig withMaxBodyBytes(int value) {
        return new ExchangeConfig(antiEntropyInterval, retry, requestTimeout, value);
    }

    private static void positive(String key, Duration d) {
        if (d == null || d.isZero() || d.isNegative()) {
            throw new IllegalArgumentException(key + " is " + d + ": must be a positive duration");
        }
    }
}
