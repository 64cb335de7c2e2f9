package io.verbatim.config;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.Collections;
import java.util.List;
import java.util.regex.Pattern;

/**
 * Where a cluster listens and where its peers reach it, kept apart the way Pulsar separates
 * {@code bindAddress} from {@code advertisedAddress}: a process binds {@code bindAddress} (a wildcard such
 * as {@code 0.0.0.0} is allowed) and tells its peers {@code advertisedAddress} in the URLs it hands out.
 *
 * @param bindAddress the host or IP the controller's admin port and the brokers' ingest ports bind
 * @param advertisedAddress the host or IP peers reach those ports at
 * @param adminPort the controller's HTTP port (exchange, admin, status, metrics); 0 picks a free one
 * @param brokerPorts each broker's ingest port, in broker order; 0 picks a free one
 * @param raftPort the brokers' port on the cluster's metadata log (their listener's transport), used when the
 *        cluster's controller replicas run as processes of their own; 0 otherwise
 */
public record Addresses(String bindAddress, String advertisedAddress, int adminPort, List<Integer> brokerPorts,
        int raftPort) {
    /** The loopback address every cluster binds unless told otherwise: nothing is reachable from outside. */
    public static final String LOOPBACK = "127.0.0.1";
    private static final Pattern HOST = Pattern.compile("[A-Za-z0-9]([A-Za-z0-9.-]{0,251}[A-Za-z0-9])?|[0-9A-Fa-f:.]{2,45}");

    public Addresses {
        host("bindAddress", bindAddress);
        host("advertisedAddress", advertisedAddress);
        if (isWildcard(advertisedAddress)) {
            throw new IllegalArgumentException("advertisedAddress '" + advertisedAddress + "' is a wildcard: peers "
                    + "need an address they can reach (a host name or an IP)");
        }
        port("adminPort", adminPort);
        brokerPorts = List.copyOf(brokerPorts);
        if (brokerPorts.isEmpty()) {
            throw new IllegalArgumentException("brokerPorts is empty: a cluster has at least one broker");
        }
        for (int i = 0; i < brokerPorts.size(); i++) {
            port("brokerPorts[" + i + "]", brokerPorts.get(i));
        }
        port("raftPort", raftPort);
    }

    /** Without a metadata log port (the controller replicas run in the brokers' process). */
    public Addresses(String bindAddress, String advertisedAddress, int adminPort, List<Integer> brokerPorts) {
        this(bindAddress, advertisedAddress, adminPort, brokerPorts, 0);
    }

    /** Loopback, free ports: what the demo and the embedded runtime's tests use. */
    public static Addresses loopback(int brokers) {
        return new Addresses(LOOPBACK, LOOPBACK, 0, Collections.nCopies(brokers, 0));
    }

    /**
     * The address advertised when none is given: the bind address, or for a wildcard this host's name (as
     * Pulsar's broker advertises its canonical host name).
     */
    public static String defaultAdvertised(String bindAddress) {
        if (!isWildcard(bindAddress)) {
            return bindAddress;
        }
        try {
            return InetAddress.getLocalHost().getCanonicalHostName();
        } catch (UnknownHostException e) {
            return LOOPBACK;
        }
    }

    public static boolean isWildcard(String host) {
        return host.equals("0.0.0.0") || host.equals("::") || host.equals("[::]");
    }

    /** Whether every port is named (no free port picked at start): what peers in other processes need. */
    public boolean fixedPorts() {
        return adminPort != 0 && brokerPorts.stream().allMatch(p -> p != 0);
    }

    /** {@code scheme://advertisedAddress:port}, an IPv6 literal in brackets. */
    public String advertisedUrl(String scheme, int port) {
        String host = advertisedAddress.contains(":") && !advertisedAddress.startsWith("[")
                ? "[" + advertisedAddress + "]" : advertisedAddress;
        return scheme + "://" + host + ":" + port;
    }

    private static void host(String key, String value) {
        if (value == null || !HOST.matcher(value).matches() && !value.equals("[::]")) {
            throw new IllegalArgumentException(key + " '" + value + "' is not a host name or an IP address");
        }
    }

    private static void port(String key, int value) {
        if (value < 0 || value > 65535) {
            throw new IllegalArgumentException(key + " " + value + " is not a port (expected 0..65535, 0 picks a free one)");
        }
    }
}
