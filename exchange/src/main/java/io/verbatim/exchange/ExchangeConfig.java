package io.verbatim.exchange;

import java.time.Duration;

/**
 * The exchange's settings; each check names its key.
 *
 * @param antiEntropyInterval how often every peer gets the whole state, change or not
 * @param retryInitial first delay after a failed push
 * @param retryMax largest delay between attempts
 * @param retryJitter randomization of the backoff, {@code 0..1}
 * @param requestTimeout how long one push may take
 * @param maxBodyBytes the largest request body the endpoint reads
 */
public record ExchangeConfig(Duration antiEntropyInterval, Duration retryInitial, Duration retryMax,
        double retryJitter, Duration requestTimeout, int maxBodyBytes) {

    public ExchangeConfig {
        positive("exchange.antiEntropyInterval", antiEntropyInterval);
        positive("exchange.retryInitial", retryInitial);
        positive("exchange.retryMax", retryMax);
        positive("exchange.requestTimeout", requestTimeout);
        if (retryMax.compareTo(retryInitial) < 0) {
            throw new IllegalArgumentException("exchange.retryMax " + retryMax + " is below exchange.retryInitial "
                    + retryInitial);
        }
        if (!(retryJitter >= 0 && retryJitter < 1)) {
            throw new IllegalArgumentException("exchange.retryJitter is " + retryJitter + ": must be within [0, 1)");
        }
        if (maxBodyBytes < 1024) {
            throw new IllegalArgumentException("exchange.maxBodyBytes is " + maxBodyBytes + ": must be at least 1024");
        }
    }

    public static ExchangeConfig defaults() {
        return new ExchangeConfig(Duration.ofSeconds(30), Duration.ofMillis(100), Duration.ofSeconds(30), 0.5,
                Duration.ofSeconds(10), 4 << 20);
    }

    public ExchangeConfig withAntiEntropyInterval(Duration value) {
        return new ExchangeConfig(value, retryInitial, retryMax, retryJitter, requestTimeout, maxBodyBytes);
    }

    public ExchangeConfig withRetry(Duration initial, Duration max, double jitter) {
        return new ExchangeConfig(antiEntropyInterval, initial, max, jitter, requestTimeout, maxBodyBytes);
    }

    public ExchangeConfig withMaxBodyBytes(int value) {
        return new ExchangeConfig(antiEntropyInterval, retryInitial, retryMax, retryJitter, requestTimeout, value);
    }

    private static void positive(String key, Duration d) {
        if (d == null || d.isZero() || d.isNegative()) {
            throw new IllegalArgumentException(key + " is " + d + ": must be a positive duration");
        }
    }
}
