package io.verbatim.net;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The replay cache against a model that remembers everything: it answers alike on random calls (nonces
 * drawn from a small set so that replays happen, times that wander and step back), and never holds more
 * than its bound per caller. {@code -Dverbatim.seed=N} replays a failing seed.
 */
class ReplayCacheTest {
    private static final long WINDOW = 1_000;
    private static final int MAX = 8;

    /** Every call ever admitted, with what the cache must conclude from it. */
    private record Taken(String caller, String nonce, long issuedMs) {
    }

    @Test
    void theCacheAnswersAsAModelThatForgetsNothingAndStaysWithinItsBound() {
        long seed = Long.getLong("verbatim.seed", System.nanoTime());
        Random random = new Random(seed);
        try {
            for (int run = 0; run < 200; run++) {
                ReplayCache cache = new ReplayCache(MAX, WINDOW);
                List<Taken> taken = new ArrayList<>();
                long now = 10_000;
                long latest = Long.MIN_VALUE;
                for (int step = 0; step < 300; step++) {
                    now += random.nextInt(10) == 0 ? -random.nextInt(3_000) : random.nextInt(200);
                    latest = Math.max(latest, now);
                    String caller = random.nextBoolean() ? "a" : "b";
                    String nonce = String.format("%032x", random.nextInt(40));
                    long issued = now - WINDOW + random.nextInt((int) (2 * WINDOW + 1));
                    ReplayCache.Admission got = cache.admit(caller, nonce, issued, now);
                    long horizon = latest;
                    ReplayCache.Admission expected;
                    if (issued + WINDOW < horizon) {
                        expected = new ReplayCache.Admission.Forgotten(horizon);
                    } else if (taken.stream().anyMatch(t -> t.caller.equals(caller) && t.nonce.equals(nonce)
                            && t.issuedMs + WINDOW >= horizon)) {
                        expected = new ReplayCache.Admission.Replayed();
                    } else if (taken.stream().filter(t -> t.caller.equals(caller) && t.issuedMs + WINDOW >= horizon)
                            .count() >= MAX) {
                        expected = new ReplayCache.Admission.Full(MAX);
                    } else {
                        expected = new ReplayCache.Admission.Fresh();
                        taken.add(new Taken(caller, nonce, issued));
                    }
                    assertThat(got).as("run %d step %d: %s %s issued %d at %d", run, step, caller, nonce, issued, now)
                            .isEqualTo(expected);
                    assertThat(cache.held(caller)).isLessThanOrEqualTo(MAX);
                }
            }
        } catch (AssertionError | RuntimeException e) {
            throw new AssertionError("seed " + seed + " (-Dverbatim.seed=" + seed + " replays it): " + e.getMessage(), e);
        }
    }

    @Test
    void aFullCallerIsRefusedNotForgottenAndTakesCallsAgainOnceOlderOnesLeaveTheWindow() {
        ReplayCache cache = new ReplayCache(2, WINDOW);
        assertThat(cache.admit("a", nonce(1), 0, 0)).isEqualTo(new ReplayCache.Admission.Fresh());
        assertThat(cache.admit("a", nonce(2), 500, 500)).isEqualTo(new ReplayCache.Admission.Fresh());
        assertThat(cache.admit("a", nonce(3), 600, 600)).isEqualTo(new ReplayCache.Admission.Full(2));
        assertThat(cache.admit("a", nonce(1), 0, 600)).as("still remembered while full").isEqualTo(new ReplayCache.Admission.Replayed());
        assertThat(cache.admit("a", nonce(3), 1_001, 1_001)).isEqualTo(new ReplayCache.Admission.Fresh());
        assertThat(cache.held("a")).isEqualTo(2);
    }

    private static String nonce(int i) {
        return String.format("%032x", i);
    }
}
