package io.verbatim.runtime.broker;

import java.time.Duration;

/**
 * When a connection that should hear from its peer is dead: the pure rule of a replication session's and a
 * layout stream's liveness ({@code replication.pingInterval}, {@code replication.pingTimeout}). The client pings
 * every {@code interval}; a connection that heard nothing at all (no receipt, no layout, no pong; from its
 * opening on: the handshake's answer counts) for {@code timeout} is dead. A partition that drops packets
 * without a reset or a FIN leaves a socket open for minutes (TCP retransmits with a growing delay); this
 * bounds how long a session waits on it.
 *
 * @param interval how often a ping goes out
 * @param timeout the silence after which the connection is dead; above {@code interval}, so a ping can answer
 */
record Heartbeat(Duration interval, Duration timeout) {
    /** The shortest interval and timeout: below, a loaded machine's pauses look like dead peers. */
    static final Duration MIN = Duration.ofMillis(10);
    /** The longest: beyond, a dead connection waits longer than any send timeout. */
    static final Duration MAX = Duration.ofHours(1);
    /** A ping each second, dead after 3 s of silence: {@code replication.pingInterval} and {@code pingTimeout}'s defaults. */
    static final Heartbeat DEFAULT = new Heartbeat(Duration.ofSeconds(1), Duration.ofSeconds(3));

    public Heartbeat {
        within("replication.pingInterval", interval);
        within("replication.pingTimeout", timeout);
        if (timeout.compareTo(interval) <= 0) {
            throw new IllegalArgumentException("replication.pingTimeout " + timeout + " must be above "
                    + "replication.pingInterval " + interval + " (a ping needs time to be answered)");
        }
    }

    /**
     * The same, pinging at least every {@code serverIdle / 3}: the other side closes a connection it hears
     * nothing from for its idle timeout.
     */
    Heartbeat within(Duration serverIdle) {
        Duration third = serverIdle.dividedBy(3);
        return third.compareTo(interval) >= 0 || third.compareTo(MIN) < 0 ? this : new Heartbeat(third, timeout);
    }

    /** What to do now. */
    sealed interface Next {
    }

    /** Send a ping, then decide again in {@code inNanos}. */
    record Ping(long inNanos) implements Next {
    }

    /** Nothing to do for {@code nanos}. */
    record Wait(long nanos) implements Next {
    }

    /** Heard nothing for {@code silentNanos}, at least the timeout. */
    record Dead(long silentNanos) implements Next {
    }

    /**
     * @param lastHeardNanos when anything last came in (or the connection began to open)
     * @param lastPingNanos when the last ping went out (or the connection began to open)
     */
    Next next(long nowNanos, long lastHeardNanos, long lastPingNanos) {
        long silent = nowNanos - lastHeardNanos;
        long timeoutNanos = timeout.toNanos();
        if (silent >= timeoutNanos) {
            return new Dead(silent);
        }
        long untilDead = timeoutNanos - silent;
        long sincePing = nowNanos - lastPingNanos;
        long intervalNanos = interval.toNanos();
        if (sincePing >= intervalNanos) {
            return new Ping(Math.min(intervalNanos, untilDead));
        }
        return new Wait(Math.min(intervalNanos - sincePing, untilDead));
    }

    private static void within(String key, Duration d) {
        if (d == null || d.compareTo(MIN) < 0 || d.compareTo(MAX) > 0) {
            throw new IllegalArgumentException(key + " " + d + " must be within " + MIN.toMillis() + "ms.." + MAX);
        }
    }
}
