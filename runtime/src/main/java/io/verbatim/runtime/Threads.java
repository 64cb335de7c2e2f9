package io.verbatim.runtime;

import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/** The schedulers a runtime's clusters share: one clock, and a bounded pool for the slow path's CPU work. */
final class Threads {
    private Threads() {
    }

    /** The clock everything timed reads, and where timers fire. */
    static Scheduler timer() {
        return Schedulers.newParallel("verbatim-timer", 2, true);
    }

    /** Decompression, regrouping and compression of re-batched entries. */
    static Scheduler cpu() {
        return Schedulers.newBoundedElastic(2, 10_000, "verbatim-rebatch", 60, true);
    }
}
