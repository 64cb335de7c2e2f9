package io.verbatim.budget;

import io.verbatim.model.Compression;
import java.util.EnumMap;
import java.util.Map;

/**
 * The slow-path budget's settings. Every check names the configuration key it guards.
 *
 * @param bytesPerSecond the sustained rate, in weighted bytes per second; never zero
 * @param burstBytes the bucket's capacity: how much may go at once after a quiet spell
 * @param maxConcurrentRebatches slots: re-batches that may hold a decompressed batch at the same time
 * @param codecWeights cost per compressed byte, by codec (1 when absent): budget CPU, not bytes
 */
public record BudgetConfig(long bytesPerSecond, long burstBytes, int maxConcurrentRebatches,
        Map<Compression, Double> codecWeights) {
    public static final String PREFIX = "slowPath.";
    /** A terabyte a second (and of burst) of weighted bytes: far above any broker's decompression rate. */
    public static final long MAX_BYTES_PER_SECOND = 1_000_000_000_000L;
    public static final int MAX_CONCURRENT_REBATCHES = 1024;
    /** A codec costs a thousandth to a thousand times an uncompressed byte: beyond, a cost rounds to 1 or overflows. */
    public static final double MIN_WEIGHT = 0.001;
    public static final double MAX_WEIGHT = 1000;

    public BudgetConfig {
        if (bytesPerSecond < 1) {
            throw new IllegalArgumentException(PREFIX + "bytesPerSecond is " + bytesPerSecond
                    + ": the rate must be at least 1 (a zero budget would stall convergence forever)");
        }
        if (bytesPerSecond > MAX_BYTES_PER_SECOND) {
            throw new IllegalArgumentException(PREFIX + "bytesPerSecond is " + bytesPerSecond + ": must be at most "
                    + MAX_BYTES_PER_SECOND);
        }
        if (burstBytes < 1 || burstBytes > MAX_BYTES_PER_SECOND) {
            throw new IllegalArgumentException(PREFIX + "burstBytes is " + burstBytes + ": must be within 1.."
                    + MAX_BYTES_PER_SECOND);
        }
        if (maxConcurrentRebatches < 1 || maxConcurrentRebatches > MAX_CONCURRENT_REBATCHES) {
            throw new IllegalArgumentException(PREFIX + "maxConcurrentRebatches is " + maxConcurrentRebatches
                    + ": must be within 1.." + MAX_CONCURRENT_REBATCHES);
        }
        EnumMap<Compression, Double> weights = new EnumMap<>(Compression.class);
        for (Map.Entry<Compression, Double> w : codecWeights.entrySet()) {
            Double value = w.getValue();
            if (value == null || !(value >= MIN_WEIGHT && value <= MAX_WEIGHT)) {
                throw new IllegalArgumentException(PREFIX + "codecWeights." + w.getKey() + " is " + value
                        + ": a weight must be within " + MIN_WEIGHT + ".." + MAX_WEIGHT);
            }
            weights.put(w.getKey(), value);
        }
        codecWeights = Map.copyOf(weights);
    }

    /** {@code bytesPerSecond} with a one-second burst, 4 slots, every codec weighing 1. */
    public static BudgetConfig of(long bytesPerSecond) {
        return new BudgetConfig(bytesPerSecond, bytesPerSecond, 4, Map.of());
    }

    public BudgetConfig withMaxConcurrentRebatches(int value) {
        return new BudgetConfig(bytesPerSecond, burstBytes, value, codecWeights);
    }

    public BudgetConfig withBurstBytes(long value) {
        return new BudgetConfig(bytesPerSecond, value, maxConcurrentRebatches, codecWeights);
    }

    public BudgetConfig withCodecWeights(Map<Compression, Double> value) {
        return new BudgetConfig(bytesPerSecond, burstBytes, maxConcurrentRebatches, value);
    }

    public double weight(Compression codec) {
        return codecWeights.getOrDefault(codec, 1.0);
    }

    /** The tokens a re-batch of {@code bytes} compressed bytes of {@code codec} costs: at least 1. */
    public long cost(long bytes, Compression codec) {
        return Math.max(1, (long) Math.ceil(bytes * weight(codec)));
    }
}
