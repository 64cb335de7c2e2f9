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
    /** The longest anti-entropy interval: a day. */
    public static final Duration MAX_ANTI_ENTROPY_INTERVAL = Duration.ofDays(1);
    /** The longest request timeout: an hour. */
    public static final Duration MAX_REQUEST_TIMEOUT = Duration.ofHours(1);
    /** The largest body an endpoint reads into memory: calls are cut under the peer's limit anyway. */
    public static final int MAX_BODY_BYTES = 256 << 20;

    public ExchangeConfig {
        positive("exchange.antiEntropyInterval", antiEntropyInterval, MAX_ANTI_ENTROPY_INTERVAL);
        positive("exchange.requestTimeout", requestTimeout, MAX_REQUEST_TIMEOUT);
        if (retry == null) {
            throw new IllegalArgumentException("exchange.retry must be set");
        }
        if (maxBodyBytes < 1024 || maxBodyBytes > MAX_BODY_BYTES) {
            throw new IllegalArgumentException("exchange.maxBodyBytes is " + maxBodyBytes + ": must be within 1024.."
                    + MAX_BODY_BYTES);
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

    public ExchangeConfig withRequestTimeout(Duration value) {
        return new ExchangeConfig(antiEntropyInterval, retry, value, maxBodyBytes);
    }

    public ExchangeConfig withMaxBodyBytes(int value) {
        return new ExchangeConfig(antiEntropyInterval, retry, requestTimeout, value);
    }

    private static void positive(String key, Duration d, Duration max) {
        if (d == null || d.isZero() || d.isNegative() || d.compareTo(max) > 0) {
            throw new IllegalArgumentException(key + " is " + d + ": must be a positive duration, at most " + max);
        }
    }
}
