package io.verbatim.net;

import java.time.Duration;

/**
 * What keeps a listening port standing, each check naming its key ({@code network.*}).
 *
 * @param idleTimeout how long an authenticated connection may wait for its next request (and a WebSocket
 *        for a frame: healthy clients ping at a third of it, so only a half-open session is closed)
 * @param requestTimeout how long a request may take to arrive whole, headers and body, from its first byte
 * @param firstRequestTimeout how long a connection that has not authenticated may take to send a request
 *        whole, from the moment it opened (or its previous answer ended): a connection that never sent a
 *        request that authenticated holds a port's room for at most this long at a time
 * @param maxConnectionsPerPort connections a port holds at once; when it holds that many, a new one takes
 *        the room of the oldest that has not authenticated, and is refused only when every one has
 * @param maxConnectionsPerAddress connections that have not authenticated a port holds from one remote
 *        address (an IPv6 address by its /64) at once; one more from there is refused
 * @param maxHeaderBytes the largest request line and header block read; a larger one is answered 431
 * @param maxFrameBytes the largest ingest WebSocket frame (an entry with its envelope)
 */
public record NetworkLimits(Duration idleTimeout, Duration requestTimeout, Duration firstRequestTimeout,
        int maxConnectionsPerPort, int maxConnectionsPerAddress, int maxHeaderBytes, int maxFrameBytes) {
    public static final Duration MIN_TIMEOUT = Duration.ofMillis(100);
    public static final Duration MAX_TIMEOUT = Duration.ofHours(1);
    public static final int MAX_CONNECTIONS = 1_000_000;
    public static final int MIN_HEADER_BYTES = 1024;
    public static final int MAX_HEADER_BYTES = 1 << 20;
    public static final int MIN_FRAME_BYTES = 64 << 10;
    public static final int MAX_FRAME_BYTES = 256 << 20;

    public NetworkLimits {
        within("network.idleTimeout", idleTimeout);
        within("network.requestTimeout", requestTimeout);
        within("network.firstRequestTimeout", firstRequestTimeout);
        within("network.maxConnectionsPerPort", maxConnectionsPerPort, 1, MAX_CONNECTIONS);
        within("network.maxConnectionsPerAddress", maxConnectionsPerAddress, 1, MAX_CONNECTIONS);
        within("network.maxHeaderBytes", maxHeaderBytes, MIN_HEADER_BYTES, MAX_HEADER_BYTES);
        within("network.maxFrameBytes", maxFrameBytes, MIN_FRAME_BYTES, MAX_FRAME_BYTES);
    }

    /**
     * 60 s idle, 10 s per request, 5 s for a connection's first request, 4,096 connections per port, 256 not
     * yet authenticated per address, 16 KiB of headers, 8 MiB frames.
     */
    public static NetworkLimits defaults() {
        return new NetworkLimits(Duration.ofSeconds(60), Duration.ofSeconds(10), Duration.ofSeconds(5), 4096, 256,
                16 << 10, 8 << 20);
    }

    public NetworkLimits withIdleTimeout(Duration value) {
        return new NetworkLimits(value, requestTimeout, firstRequestTimeout, maxConnectionsPerPort,
                maxConnectionsPerAddress, maxHeaderBytes, maxFrameBytes);
    }

    public NetworkLimits withRequestTimeout(Duration value) {
        return new NetworkLimits(idleTimeout, value, firstRequestTimeout, maxConnectionsPerPort,
                maxConnectionsPerAddress, maxHeaderBytes, maxFrameBytes);
    }

    public NetworkLimits withFirstRequestTimeout(Duration value) {
        return new NetworkLimits(idleTimeout, requestTimeout, value, maxConnectionsPerPort, maxConnectionsPerAddress,
                maxHeaderBytes, maxFrameBytes);
    }

    public NetworkLimits withMaxConnectionsPerPort(int value) {
        return new NetworkLimits(idleTimeout, requestTimeout, firstRequestTimeout, value, maxConnectionsPerAddress,
                maxHeaderBytes, maxFrameBytes);
    }

    public NetworkLimits withMaxConnectionsPerAddress(int value) {
        return new NetworkLimits(idleTimeout, requestTimeout, firstRequestTimeout, maxConnectionsPerPort, value,
                maxHeaderBytes, maxFrameBytes);
    }

    /** How often a WebSocket client pings: a third of the idle timeout, so two pings may be lost. */
    public Duration pingInterval() {
        return idleTimeout.dividedBy(3);
    }

    private static void within(String key, Duration d) {
        if (d == null || d.compareTo(MIN_TIMEOUT) < 0 || d.compareTo(MAX_TIMEOUT) > 0) {
            throw new IllegalArgumentException(key + " is " + d + ": must be within [100ms, 1h]");
        }
    }

    private static void within(String key, int n, int min, int max) {
        if (n < min || n > max) {
            throw new IllegalArgumentException(key + " is " + n + ": must be within [" + min + ", " + max + "]");
        }
    }
}
