package io.verbatim.pulsar.standalone;

import java.nio.file.Path;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The standalone broker's command line, parsed and validated.
 *
 * <pre>
 * --data DIR            required; RocksDB metadata and bookie data, kept across restarts (never wiped)
 * --bind ADDRESS        default 127.0.0.1; also the advertised address
 * --broker-port N       default 0 (a free port)
 * --web-port N          default 0 (a free port)
 * --cluster NAME        default standalone
 * --conf key=value      repeatable; a ServiceConfiguration property by name, applied last
 * </pre>
 *
 * @param conf broker properties in the order given; checked against ServiceConfiguration by {@link BrokerConfig}
 */
public record BrokerArgs(Path dataDir, String bindAddress, int brokerPort, int webPort, String cluster,
                         Map<String, String> conf) {
    public static final String DEFAULT_BIND = "127.0.0.1";
    public static final String DEFAULT_CLUSTER = "standalone";

    public BrokerArgs {
        if (bindAddress.isBlank()) {
            throw new IllegalArgumentException("--bind: an address is required, got '" + bindAddress + "'");
        }
        if (cluster.isBlank()) {
            throw new IllegalArgumentException("--cluster: a name is required, got '" + cluster + "'");
        }
        checkPort("--broker-port", brokerPort);
        checkPort("--web-port", webPort);
        conf = Collections.unmodifiableMap(new LinkedHashMap<>(conf));
    }

    /** Defaults for everything but the data directory. */
    public static BrokerArgs of(Path dataDir) {
        return new BrokerArgs(dataDir, DEFAULT_BIND, 0, 0, DEFAULT_CLUSTER, Map.of());
    }

    public BrokerArgs withPorts(int brokerPort, int webPort) {
        return new BrokerArgs(dataDir, bindAddress, brokerPort, webPort, cluster, conf);
    }

    public BrokerArgs withConf(String key, String value) {
        Map<String, String> more = new LinkedHashMap<>(conf);
        more.put(key, value);
        return new BrokerArgs(dataDir, bindAddress, brokerPort, webPort, cluster, more);
    }

    /**
     * Parses a command line; a missing, unknown or malformed argument is an {@link IllegalArgumentException}
     * whose message names it.
     */
    public static BrokerArgs parse(String... args) {
        Path data = null;
        String bind = DEFAULT_BIND;
        String cluster = DEFAULT_CLUSTER;
        int brokerPort = 0;
        int webPort = 0;
        Map<String, String> conf = new LinkedHashMap<>();
        for (int i = 0; i < args.length; i++) {
            String name = args[i];
            if (i + 1 >= args.length) {
                throw new IllegalArgumentException(name + ": a value is required");
            }
            String value = args[++i];
            switch (name) {
                case "--data" -> data = Path.of(value).toAbsolutePath().normalize();
                case "--bind" -> bind = value;
                case "--broker-port" -> brokerPort = parsePort(name, value);
                case "--web-port" -> webPort = parsePort(name, value);
                case "--cluster" -> cluster = value;
                case "--conf" -> {
                    int eq = value.indexOf('=');
                    if (eq <= 0) {
                        throw new IllegalArgumentException("--conf: expected key=value, got '" + value + "'");
                    }
                    conf.put(value.substring(0, eq), value.substring(eq + 1));
                }
                default -> throw new IllegalArgumentException("unknown argument " + name
                        + " (expected --data, --bind, --broker-port, --web-port, --cluster, --conf)");
            }
        }
        if (data == null) {
            throw new IllegalArgumentException("--data: required (the broker's data directory, kept across restarts)");
        }
        return new BrokerArgs(data, bind, brokerPort, webPort, cluster, conf);
    }

    private static int parsePort(String name, String value) {
        try {
            return Integer.parseInt(value);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(name + ": not a port number: '" + value + "'");
        }
    }

    private static void checkPort(String name, int port) {
        if (port < 0 || port > 65535) {
            throw new IllegalArgumentException(name + ": must be 0 (a free port) to 65535, got " + port);
        }
    }
}
