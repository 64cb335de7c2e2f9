package io.verbatim.config;

import java.time.Duration;

/**
 * The local split / merge / rebucket policy in the spirit of PIP-483, with Pulsar's defaults. Merges of a
 * replicated topic are not done locally: the policy marks the boundary cold and the exchange merges it
 * once every peer agrees (PIP-495).
 *
 * @param enabled the master switch
 * @param interval how often the policy looks at the load
 * @param minSegments merges stop here
 * @param maxDagDepth a segment whose lineage already holds this many merges is not merged again
 * @param splitCooldown no split sooner than this after the last one (manual ones count)
 * @param rebucketCooldown no rebucket sooner than this after the last one
 * @param mergeCooldown no cold mark sooner than this after the last one
 * @param mergeWindow a segment must have been cold this long to be marked
 * @param splitVsRebucketMinMsgRateIn below this rate, more consumers than segments rebucket instead of split
 * @param split the load above which a segment splits (any one rate)
 * @param merge the load below which a segment is cold (every rate)
 */
public record AutoScaleConfig(boolean enabled, Duration interval, int minSegments, int maxDagDepth,
        Duration splitCooldown,
        Duration rebucketCooldown, Duration mergeCooldown, Duration mergeWindow, double splitVsRebucketMinMsgRateIn,
        Rates split, Rates merge) {

    /** Load of a segment: messages and bytes per second, in (produced) and out (dispatched). */
    public record Rates(double msgRateIn, double bytesRateIn, double msgRateOut, double bytesRateOut) {
        /** The largest of this load's ratios to {@code threshold}'s: above 1, one rate exceeds its threshold. */
        public double score(Rates threshold) {
            return Math.max(Math.max(msgRateIn / threshold.msgRateIn, bytesRateIn / threshold.bytesRateIn),
                    Math.max(msgRateOut / threshold.msgRateOut, bytesRateOut / threshold.bytesRateOut));
        }

        /** Every rate strictly below {@code threshold}'s. */
        public boolean below(Rates threshold) {
            return msgRateIn < threshold.msgRateIn && bytesRateIn < threshold.bytesRateIn
                    && msgRateOut < threshold.msgRateOut && bytesRateOut < threshold.bytesRateOut;
        }
    }

    public AutoScaleConfig {
        Ranges.check("interval", interval, Ranges.TEN_MS, Ranges.MAX_INTERVAL);
        Ranges.check("splitCooldown", splitCooldown, Duration.ZERO, Ranges.MAX_INTERVAL);
        Ranges.check("rebucketCooldown", rebucketCooldown, Duration.ZERO, Ranges.MAX_INTERVAL);
        Ranges.check("mergeCooldown", mergeCooldown, Duration.ZERO, Ranges.MAX_INTERVAL);
        Ranges.check("mergeWindow", mergeWindow, Duration.ZERO, Ranges.MAX_INTERVAL);
        if (split == null || merge == null) {
            throw new IllegalArgumentException("split and merge thresholds must be set");
        }
        if (minSegments < 1) {
            throw new IllegalArgumentException("minSegments is " + minSegments + ": must be at least 1");
        }
        if (maxDagDepth < 1) {
            throw new IllegalArgumentException("maxDagDepth is " + maxDagDepth + ": must be at least 1");
        }
        check("split.msgRateIn", split.msgRateIn, merge.msgRateIn);
        check("split.bytesRateIn", split.bytesRateIn, merge.bytesRateIn);
        check("split.msgRateOut", split.msgRateOut, merge.msgRateOut);
        check("split.bytesRateOut", split.bytesRateOut, merge.bytesRateOut);
    }

    private static void check(String key, double split, double merge) {
        if (!(split > merge)) {
            throw new IllegalArgumentException(key + " is " + split + ": a split threshold must be above the matching"
                    + " merge threshold (" + merge + "), or segments would split and merge back and forth");
        }
    }

    /** PIP-483's defaults (broker.conf). */
    public static AutoScaleConfig pulsarDefaults() {
        return new AutoScaleConfig(true, Duration.ofSeconds(60), 1, 10, Duration.ofSeconds(60), Duration.ofSeconds(60),
                Duration.ofSeconds(300), Duration.ofSeconds(300), 1000,
                new Rates(10_000, 50_000_000, 50_000, 250_000_000), new Rates(1_000, 5_000_000, 5_000, 25_000_000));
    }
}
