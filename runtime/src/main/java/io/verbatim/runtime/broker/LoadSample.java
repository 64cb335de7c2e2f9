package io.verbatim.runtime.broker;

import io.verbatim.config.AutoScaleConfig.Rates;

/**
 * One segment's load, as a broker measured it and the leader's policy reads it.
 *
 * @param coldSinceMs since when every rate has been below the merge thresholds, {@code -1} if not now
 */
public record LoadSample(Rates rates, long coldSinceMs) {
}
