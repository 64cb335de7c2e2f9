package io.verbatim.net;

import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * Who of a port's connections stays: the port's count of connections and, among them, those that have not
 * authenticated yet, oldest first, and how many of those each remote address holds.
 *
 * <p>The rule ({@link #decide}): a connection from an address that holds {@code maxConnectionsPerAddress}
 * connections not yet authenticated is refused; one below {@code maxConnectionsPerPort} is admitted; at the
 * limit it takes the room of the oldest connection not yet authenticated, which is closed; only when every
 * connection of the port has authenticated is it refused. So connections that never authenticate (idle,
 * trickling, anonymous status) can fill the port only until someone else needs the room, and an
 * authenticated peer is never starved: its new connection is admitted and its open ones are never closed
 * for room. Thread-safe: connections of one port open and close on several event loops.
 *
 * @param <C> a connection
 */
final class Admission<C> {
    /** What happens to a new connection. */
    enum Decision {
        ADMIT, ADMIT_EVICTING_OLDEST, REFUSE_ADDRESS_FULL, REFUSE_PORT_FULL
    }

    /** A decision, and the connection that makes room for the new one (to be closed), if any. */
    record Outcome<C>(Decision decision, @Nullable C evicted) {
    }

    private final NetworkLimits limits;
    private final Set<C> admitted = new HashSet<>();
    /** Connections not yet authenticated, oldest first, with their address. */
    private final LinkedHashMap<C, String> unauthenticated = new LinkedHashMap<>();
    private final Map<String, Integer> unauthenticatedByAddress = new HashMap<>();

    Admission(NetworkLimits limits) {
        this.limits = limits;
    }

    /** The rule, on counts alone. */
    static Decision decide(int open, int unauthenticated, int unauthenticatedFromAddress, NetworkLimits limits) {
        if (unauthenticatedFromAddress >= limits.maxConnectionsPerAddress()) {
            return Decision.REFUSE_ADDRESS_FULL;
        }
        if (open < limits.maxConnectionsPerPort()) {
            return Decision.ADMIT;
        }
        return unauthenticated > 0 ? Decision.ADMIT_EVICTING_OLDEST : Decision.REFUSE_PORT_FULL;
    }

    /** A new connection from {@code address}: admitted (counted as not yet authenticated) or refused. */
    synchronized Outcome<C> open(C connection, String address) {
        Decision d = decide(admitted.size(), unauthenticated.size(), unauthenticatedByAddress.getOrDefault(address, 0),
                limits);
        C evicted = null;
        if (d == Decision.ADMIT_EVICTING_OLDEST) {
            Iterator<C> oldest = unauthenticated.keySet().iterator();
            evicted = oldest.next();
            closed(evicted);
        }
        if (d == Decision.ADMIT || d == Decision.ADMIT_EVICTING_OLDEST) {
            admitted.add(connection);
            unauthenticated.put(connection, address);
            unauthenticatedByAddress.merge(address, 1, Integer::sum);
        }
        return new Outcome<>(d, evicted);
    }

    /** {@code connection} authenticated: it no longer counts against its address, and is never evicted. */
    synchronized void authenticated(C connection) {
        forget(connection);
    }

    /** {@code connection} closed (or was evicted): its room is free. */
    synchronized void closed(C connection) {
        if (admitted.remove(connection)) {
            forget(connection);
        }
    }

    private void forget(C connection) {
        String address = unauthenticated.remove(connection);
        if (address != null) {
            unauthenticatedByAddress.computeIfPresent(address, (a, n) -> n == 1 ? null : n - 1);
        }
    }

    synchronized int open() {
        return admitted.size();
    }

    synchronized int unauthenticated() {
        return unauthenticated.size();
    }

    /** The connections not yet authenticated, oldest first. */
    synchronized List<C> unauthenticatedConnections() {
        return List.copyOf(unauthenticated.keySet());
    }

    synchronized int unauthenticatedFrom(String address) {
        return unauthenticatedByAddress.getOrDefault(address, 0);
    }
}
