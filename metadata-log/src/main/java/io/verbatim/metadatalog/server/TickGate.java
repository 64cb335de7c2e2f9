package io.verbatim.metadatalog.server;

/**
 * Which of a member's clock ticks count. A periodic task at a fixed rate runs the ticks a stalled thread
 * missed (a GC pause, an overloaded machine) back to back, before the replies that arrived during the stall
 * are stepped: counted, they would make a stall of half a second look like ten ticks of silence, and revoke
 * a healthy delegate or start an election. A tick due less than half a period after the last counted one is
 * such a catch-up and is dropped; a stall therefore counts as the one tick of time it took.
 */
final class TickGate {
    private final long periodNanos;
    private long lastNanos;
    private boolean started;

    TickGate(long periodNanos) {
        if (periodNanos < 1) {
            throw new IllegalArgumentException("a tick period must be positive, was " + periodNanos + " ns");
        }
        this.periodNanos = periodNanos;
    }

    /** Whether a tick run at {@code nowNanos} counts (it then is the last counted one). */
    boolean admit(long nowNanos) {
        if (started && nowNanos - lastNanos < periodNanos / 2) {
            return false;
        }
        started = true;
        lastNanos = nowNanos;
        return true;
    }
}
