package io.verbatim.runtime.controller;

import static org.assertj.core.api.Assertions.assertThat;

import io.verbatim.config.AutoScaleConfig.Rates;
import io.verbatim.config.AutoScaleConfig;
import io.verbatim.exchange.Caps;
import io.verbatim.model.Layout;
import io.verbatim.model.Mutation;
import io.verbatim.runtime.broker.LoadSample;
import io.verbatim.runtime.broker.LoadTracker;
import io.verbatim.runtime.controller.AutoScaler.Clocks;
import io.verbatim.runtime.controller.AutoScaler.Decision;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** PIP-483's decisions, with Pulsar's defaults unless a test says otherwise. */
class AutoScalerTest {
    private static final AutoScaleConfig PULSAR = AutoScaleConfig.pulsarDefaults();
    private static final Caps CAPS = Caps.PULSAR_DEFAULTS;
    private static final long NOW = 1_000_000;

    private static LoadSample hot(double msgIn, double bytesIn) {
        return new LoadSample(new Rates(msgIn, bytesIn, 0, 0), -1);
    }

    private static LoadSample coldSince(long ms) {
        return new LoadSample(new Rates(1, 10, 0, 0), ms);
    }

    @Test
    void theSegmentWithTheHighestScoreAboveOneSplitsNamingTheDominantRate() {
        Layout layout = Layout.initial(3, 3, 0);
        Map<Long, LoadSample> load = Map.of(0L, hot(12_000, 0), 1L, hot(0, 80_000_000), 2L, hot(9_000, 0));
        assertThat(AutoScaler.decide(layout, load, 0, PULSAR, CAPS, NOW, Clocks.NEVER))
                .isEqualTo(new Decision.Split(1, "bytesRateIn"));
    }

    @Test
    void nothingSplitsBelowTheThresholdsWithinTheCooldownOrAtTheCap() {
        Layout layout = Layout.initial(2, 2, 0);
        Map<Long, LoadSample> busy = Map.of(0L, hot(20_000, 0), 1L, hot(0, 0));
        assertThat(AutoScaler.decide(layout, Map.of(0L, hot(9_999, 0)), 0, PULSAR, CAPS, NOW, Clocks.NEVER))
                .isInstanceOf(Decision.NoAction.class);
        assertThat(AutoScaler.decide(layout, busy, 0, PULSAR, CAPS, NOW,
                new Clocks(NOW - 59_999, Long.MIN_VALUE, Long.MIN_VALUE))).isInstanceOf(Decision.NoAction.class);
        assertThat(AutoScaler.decide(layout, busy, 0, PULSAR, CAPS, NOW,
                new Clocks(NOW - 60_000, Long.MIN_VALUE, Long.MIN_VALUE))).isInstanceOf(Decision.Split.class);
        assertThat(AutoScaler.decide(layout, busy, 0, PULSAR, new Caps(2, 1024), NOW, Clocks.NEVER))
                .isInstanceOf(Decision.NoAction.class);
    }

    @Test
    void moreConsumersThanSegmentsSplitTheBusiestOrRaiseTheBucketCountBelowTheRateFloor() {
        Layout layout = Layout.initial(2, 2, 0); // N = 1 each
        Map<Long, LoadSample> busy = Map.of(0L, hot(500, 0), 1L, hot(1_500, 0));
        assertThat(AutoScaler.decide(layout, busy, 3, PULSAR, CAPS, NOW, Clocks.NEVER))
                .isEqualTo(new Decision.Split(1, "consumer-count"));
        Map<Long, LoadSample> quiet = Map.of(0L, hot(10, 0), 1L, hot(20, 0));
        // 5 consumers over 2 segments: ceil(5/2) = 3 → N = 4 for both, ids sorted.
        assertThat(AutoScaler.decide(layout, quiet, 5, PULSAR, CAPS, NOW, Clocks.NEVER))
                .isEqualTo(new Decision.Rebucket(List.of(0L, 1L), 4, "below-split-rate-floor"));
        assertThat(AutoScaler.decide(layout, busy, 5, PULSAR, new Caps(2, 2), NOW, Clocks.NEVER))
                .isEqualTo(new Decision.Rebucket(List.of(0L, 1L), 2, "at-max-segments"));
        // Within the rebucket cooldown nothing happens; capacity already enough: nothing either.
        assertThat(AutoScaler.decide(layout, quiet, 5, PULSAR, CAPS, NOW,
                new Clocks(Long.MIN_VALUE, Long.MIN_VALUE, NOW - 1_000))).isInstanceOf(Decision.NoAction.class);
        assertThat(AutoScaler.decide(Layout.initial(2, 8, 0), quiet, 5, PULSAR, CAPS, NOW, Clocks.NEVER))
                .isInstanceOf(Decision.NoAction.class);
    }

    @Test
    void onlyColdSiblingsColdForTheWholeWindowAreOfferedForMerging() {
        Layout split = Layout.initial(1, 2, 0).apply(Mutation.split(0), 0, 0).layoutOrThrow(); // siblings 1, 2
        Map<Long, LoadSample> cold = Map.of(1L, coldSince(NOW - 300_000), 2L, coldSince(NOW - 400_000));
        assertThat(AutoScaler.decide(split, cold, 0, PULSAR, CAPS, NOW, Clocks.NEVER))
                .isEqualTo(new Decision.MarkCold(0x8000, "cold"));
        Map<Long, LoadSample> notLongEnough = Map.of(1L, coldSince(NOW - 299_999), 2L, coldSince(NOW - 400_000));
        assertThat(AutoScaler.decide(split, notLongEnough, 0, PULSAR, CAPS, NOW, Clocks.NEVER))
                .isInstanceOf(Decision.NoAction.class);
        assertThat(AutoScaler.decide(split, cold, 0, PULSAR, CAPS, NOW,
                new Clocks(Long.MIN_VALUE, NOW - 1_000, Long.MIN_VALUE))).isInstanceOf(Decision.NoAction.class);
        // Thirds of the ring are not halves of one split: never merged automatically.
        Map<Long, LoadSample> coldRoots = Map.of(0L, coldSince(0), 1L, coldSince(0), 2L, coldSince(0));
        assertThat(AutoScaler.decide(Layout.initial(3, 3, 0), coldRoots, 0, PULSAR, CAPS, NOW, Clocks.NEVER))
                .isInstanceOf(Decision.NoAction.class);
        // A lineage that already merged maxDagDepth times is not merged again.
        Layout merged = split.apply(Mutation.mergeSiblings(1, 2), 1, 0).layoutOrThrow()
                .apply(Mutation.split(3), 2, 0).layoutOrThrow(); // 4, 5: halves of merge child 3
        assertThat(AutoScaler.mergeDepth(merged, 4)).isEqualTo(1);
        Map<Long, LoadSample> coldHalves = Map.of(4L, coldSince(0), 5L, coldSince(0));
        assertThat(AutoScaler.decide(merged, coldHalves, 0, PULSAR, CAPS, NOW, Clocks.NEVER))
                .isInstanceOf(Decision.MarkCold.class);
        AutoScaleConfig depthOne = new AutoScaleConfig(true, PULSAR.interval(), 1, 1, PULSAR.splitCooldown(),
                PULSAR.rebucketCooldown(), PULSAR.mergeCooldown(), PULSAR.mergeWindow(),
                PULSAR.splitVsRebucketMinMsgRateIn(), PULSAR.split(), PULSAR.merge());
        assertThat(AutoScaler.decide(merged, coldHalves, 0, depthOne, CAPS, NOW, Clocks.NEVER))
                .isInstanceOf(Decision.NoAction.class);
        // A missing sample is never cold.
        Map<Long, LoadSample> missing = new HashMap<>(cold);
        missing.remove(2L);
        assertThat(AutoScaler.decide(split, missing, 0, PULSAR, CAPS, NOW, Clocks.NEVER))
                .isInstanceOf(Decision.NoAction.class);
    }

    @Test
    void theLoadTrackerTurnsCountsIntoRatesAndRemembersSinceWhenASegmentIsCold() {
        LoadTracker tracker = new LoadTracker();
        assertThat(tracker.sample(List.of(0L), PULSAR, 0).get(0L).rates().msgRateIn()).isZero();
        tracker.produced(0, 20_000, 2_000_000);
        LoadSample busy = tracker.sample(List.of(0L), PULSAR, 2_000).get(0L);
        assertThat(busy.rates().msgRateIn()).isEqualTo(10_000);
        assertThat(busy.rates().bytesRateIn()).isEqualTo(1_000_000);
        assertThat(busy.coldSinceMs()).isEqualTo(-1);
        assertThat(tracker.sample(List.of(0L), PULSAR, 3_000).get(0L).coldSinceMs()).isEqualTo(3_000);
        assertThat(tracker.sample(List.of(0L), PULSAR, 9_000).get(0L).coldSinceMs()).isEqualTo(3_000);
    }

    @Test
    void coldMarksAreReDerivedOnEveryEvaluationAndWithdrawnWhenARangeTurnsHot() {
        Layout split = Layout.initial(1, 4, 0).apply(Mutation.split(0), 0, 0).layoutOrThrow();
        split = split.apply(Mutation.split(1), 1, 0).layoutOrThrow(); // 0000-3fff, 4000-7fff, 8000-ffff
        Map<Long, LoadSample> allCold = Map.of(3L, coldSince(0), 4L, coldSince(0), 2L, coldSince(0));
        assertThat(AutoScaler.coldBoundaries(split, allCold, 0, PULSAR, CAPS, NOW, Clocks.NEVER, Set.of()))
                .containsExactly(0x4000);
        Map<Long, LoadSample> oneHot = Map.of(3L, coldSince(0), 4L, hot(9_999, 0), 2L, coldSince(0));
        assertThat(AutoScaler.coldBoundaries(split, oneHot, 0, PULSAR, CAPS, NOW, Clocks.NEVER, Set.of(0x4000)))
                .as("the mark goes as soon as a side is hot").isEmpty();
        Clocks cooling = new Clocks(Long.MIN_VALUE, NOW - 1, Long.MIN_VALUE);
        assertThat(AutoScaler.coldBoundaries(split, allCold, 0, PULSAR, CAPS, NOW, cooling, Set.of()))
                .as("no new mark within the merge cooldown").isEmpty();
        assertThat(AutoScaler.coldBoundaries(split, allCold, 0, PULSAR, CAPS, NOW, cooling, Set.of(0x4000)))
                .as("but a standing one that is still cold stays").containsExactly(0x4000);
        assertThat(AutoScaler.coldBoundaries(split, allCold, 4, PULSAR, new Caps(64, 1), NOW, Clocks.NEVER,
                Set.of())).as("not when the consumers need every bucket the cap would cut").isEmpty();
    }
}
