package io.verbatim.metadatalog.transport;

import static org.assertj.core.api.Assertions.fail;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

/** Waits for real I/O: polls a condition, with a bound generous enough for a loaded machine. */
final class Poll {
    static final long BOUND_SECONDS = 30;

    private Poll() {
    }

    static void until(String what, BooleanSupplier done) {
        until(what, done, () -> { });
    }

    /** Runs {@code eachRound} and polls every 5 ms until {@code done}, or fails after 30 s naming {@code what}. */
    static void until(String what, BooleanSupplier done, Runnable eachRound) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(BOUND_SECONDS);
        while (true) {
            eachRound.run();
            if (done.getAsBoolean()) {
                return;
            }
            if (System.nanoTime() - deadline > 0) {
                fail("not within " + BOUND_SECONDS + "s: " + what);
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
        }
    }
}
