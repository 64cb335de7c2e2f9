package io.verbatim.metadatalog.transport;

import java.net.InetSocketAddress;

/** A peer's {@code host:port} ({@code [v6]:port} for an IPv6 literal), checked, left unresolved. */
final class PeerAddress {
    private PeerAddress() {
    }

    /** @throws IllegalArgumentException naming the member and the value */
    static InetSocketAddress parse(String member, String address) {
        int colon = address == null ? -1 : address.lastIndexOf(':');
        if (colon <= 0 || colon == address.length() - 1) {
            throw new IllegalArgumentException("peer " + member + "'s address '" + address + "' is not host:port");
        }
        String host = address.substring(0, colon);
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
        }
        int port;
        try {
            port = Integer.parseInt(address.substring(colon + 1));
        } catch (NumberFormatException e) {
            port = -1;
        }
        if (port < 1 || port > 65535 || host.isEmpty()) {
            throw new IllegalArgumentException("peer " + member + "'s address '" + address
                    + "' is not host:port with a port in 1..65535");
        }
        return InetSocketAddress.createUnresolved(host, port);
    }
}
