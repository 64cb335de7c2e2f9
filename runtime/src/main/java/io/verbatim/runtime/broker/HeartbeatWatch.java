package io.verbatim.runtime.broker;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.jspecify.annotations.Nullable;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Scheduler;

/**
 * One connection's {@link Heartbeat}, kept by one timer task on the injected clock: started as the connection
 * begins to open (so a handshake that is never answered is dead too), told of every frame that comes in, and
 * pinging once the connection is open. {@link #expired()} fails when the connection is dead.
 */
final class HeartbeatWatch implements Disposable {
    private final Heartbeat beat;
    private final Scheduler timer;
    private final String what;
    private final Sinks.Empty<Void> expired = Sinks.empty();
    private volatile long lastHeard;
    private long lastPing;
    private @Nullable Runnable ping;
    private @Nullable Disposable wake;
    private boolean disposed;

    /** @param what the connection, as the failure names it */
    HeartbeatWatch(Heartbeat beat, Scheduler timer, String what) {
        this.beat = beat;
        this.timer = timer;
        this.what = what;
        long now = timer.now(TimeUnit.NANOSECONDS);
        this.lastHeard = now;
        this.lastPing = now;
        synchronized (this) {
            wake = timer.schedule(this::check, beat.interval().toNanos(), TimeUnit.NANOSECONDS);
        }
    }

    /** Something came in: the connection lives. */
    void heard() {
        lastHeard = timer.now(TimeUnit.NANOSECONDS);
    }

    /** The connection is open: from now on {@code send} sends a ping (fire and forget). */
    synchronized void pingWith(Runnable send) {
        ping = send;
    }

    /** Fails with a {@link TimeoutException} naming the silence once the connection is dead; completes on dispose. */
    Mono<Void> expired() {
        return expired.asMono();
    }

    private void check() {
        Runnable send;
        long now = timer.now(TimeUnit.NANOSECONDS);
        Heartbeat.Next next;
        boolean opened;
        synchronized (this) {
            opened = ping != null;
            wake = null;
            if (disposed) {
                return;
            }
            next = beat.next(now, lastHeard, lastPing);
            if (next instanceof Heartbeat.Dead) {
                disposed = true;
            } else {
                long in;
                if (next instanceof Heartbeat.Ping p) {
                    lastPing = now;
                    in = p.inNanos();
                } else {
                    in = ((Heartbeat.Wait) next).nanos();
                }
                wake = timer.schedule(this::check, in, TimeUnit.NANOSECONDS);
            }
            send = next instanceof Heartbeat.Ping ? ping : null;
        }
        if (next instanceof Heartbeat.Dead dead) {
            expired.tryEmitError(new TimeoutException(what + " heard nothing for " + dead.silentNanos() / 1_000_000
                    + " ms" + (opened ? "" : ", its opening unanswered") + " (replication.pingTimeout "
                    + beat.timeout().toMillis() + " ms): the connection is dead"));
        } else if (send != null) {
            send.run();
        }
    }

    @Override
    public void dispose() {
        synchronized (this) {
            disposed = true;
            if (wake != null) {
                wake.dispose();
                wake = null;
            }
        }
        expired.tryEmitEmpty();
    }

    @Override
    public synchronized boolean isDisposed() {
        return disposed;
    }
}
