package io.verbatim.net;

import java.time.Duration;
import java.util.Locale;

/**
 * Why a port closed a connection or cut a request before answering it: each is counted
 * ({@code verbatim.net.connections.refused{port, reason}}) and logged at most once a minute per port.
 */
public enum Refusal {
    /** A new connection when every connection of the port ({@code network.maxConnectionsPerPort}) authenticated. */
    PORT_FULL,
    /** A new connection from an address that holds {@code network.maxConnectionsPerAddress} not yet authenticated. */
    ADDRESS_FULL,
    /** A connection not yet authenticated, closed to make room for a new one on a full port. */
    EVICTED,
    /** A connection not yet authenticated that sent no request whole within {@code network.firstRequestTimeout}. */
    FIRST_REQUEST_TIMEOUT,
    /** A request that did not arrive whole within {@code network.requestTimeout} of its first byte. */
    REQUEST_TIMEOUT;

    /** The metric's {@code reason} tag: {@code port_full}, …. */
    public String tag() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** What happened, for a log line, with the limit's value. */
    String describe(NetworkLimits limits) {
        return switch (this) {
            case PORT_FULL -> "refused: the port holds network.maxConnectionsPerPort (" + limits.maxConnectionsPerPort()
                    + ") connections, all authenticated";
            case ADDRESS_FULL -> "refused: the address holds network.maxConnectionsPerAddress ("
                    + limits.maxConnectionsPerAddress() + ") connections not yet authenticated";
            case EVICTED -> "closed, not yet authenticated, to make room on a port at network.maxConnectionsPerPort ("
                    + limits.maxConnectionsPerPort() + ")";
            case FIRST_REQUEST_TIMEOUT -> "closed, not yet authenticated, without a whole request within "
                    + "network.firstRequestTimeout (" + shown(limits.firstRequestTimeout()) + ")";
            case REQUEST_TIMEOUT -> "cut: a request did not arrive whole within network.requestTimeout ("
                    + shown(limits.requestTimeout()) + ")";
        };
    }

    private static String shown(Duration d) {
        return d.toMillis() % 1000 == 0 ? d.toSeconds() + "s" : d.toMillis() + "ms";
    }
}
