package io.verbatim.pipeline;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.jspecify.annotations.Nullable;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Scheduler;

/**
 * The send timeout of one replication pass, kept by one timer task for all its sends rather than one per
 * send (a per-send {@code timeout} operator scheduled and cancelled a timer task, and named itself, for
 * every entry: a tenth of the fast path's time in memory). Sends are started in cursor order, so the oldest
 * one still out is the first unfinished in start order; the task wakes when that one is due, and
 * {@link #expired()} fails as soon as it is, exactly one send timeout after it started, as the operator did.
 * Pulsar's producer keeps its send timeout the same way, one timer over its pending queue.
 */
final class SendWatch {
    private final Scheduler timer;
    private final long timeoutNanos;
    private final Duration timeout;
    /** Sends started and not yet known finished, oldest first. Guarded by {@code this}. */
    private final ArrayDeque<Send> started = new ArrayDeque<>();
    private final Sinks.Empty<Void> expired = Sinks.empty();
    private @Nullable Disposable wake;
    private boolean closed;

    SendWatch(Scheduler timer, Duration timeout) {
        this.timer = timer;
        this.timeout = timeout;
        this.timeoutNanos = timeout.toNanos();
    }

    /** One send under the watch. */
    static final class Send {
        final long startedAt;
        volatile boolean finished;

        Send(long startedAt) {
            this.startedAt = startedAt;
        }

        /** It got its answer (or failed on its own): it is no longer timed. */
        void finish() {
            finished = true;
        }
    }

    /** Starts timing one send; call {@link Send#finish()} when it is answered or fails. */
    Send start() {
        Send send = new Send(timer.now(TimeUnit.NANOSECONDS));
        synchronized (this) {
            dropFinished(); // sends mostly finish in order: the queue stays about as long as what is in flight
            started.addLast(send);
            if (wake == null && !closed) {
                wake = timer.schedule(this::check, timeoutNanos, TimeUnit.NANOSECONDS);
            }
        }
        return send;
    }

    /**
     * Fails with a {@link TimeoutException} once a send is out for the send timeout; completes when the watch is
     * closed first.
     */
    Mono<Void> expired() {
        return expired.asMono();
    }

    /** Stops the timer task (the pass ended); {@link #expired()} completes, unless it failed already. */
    void close() {
        synchronized (this) {
            closed = true;
            if (wake != null) {
                wake.dispose();
                wake = null;
            }
        }
        expired.tryEmitEmpty();
    }

    private void dropFinished() {
        while (!started.isEmpty() && started.peekFirst().finished) {
            started.pollFirst();
        }
    }

    private void check() {
        long now = timer.now(TimeUnit.NANOSECONDS);
        synchronized (this) {
            wake = null;
            if (closed) {
                return;
            }
            dropFinished();
            Send oldest = started.peekFirst();
            if (oldest == null) {
                return; // the next send arms it again
            }
            long due = oldest.startedAt + timeoutNanos;
            if (due > now) {
                wake = timer.schedule(this::check, due - now, TimeUnit.NANOSECONDS);
                return;
            }
            closed = true;
        }
        expired.tryEmitError(new TimeoutException("a send got no answer within " + timeout));
    }
}
