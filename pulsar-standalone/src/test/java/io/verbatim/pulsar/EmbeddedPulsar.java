package io.verbatim.pulsar;

import io.verbatim.pulsar.standalone.BrokerArgs;
import io.verbatim.pulsar.standalone.LocalBroker;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.pulsar.broker.ServiceConfiguration;
import org.apache.pulsar.client.admin.PulsarAdmin;
import org.apache.pulsar.client.api.PulsarClient;

/**
 * The standalone broker ({@link LocalBroker}, the code the broker's own process runs) inside the test JVM, on a data
 * directory under the working directory (surefire runs in {@code target/}) wiped at start. It keeps Pulsar's
 * default of one dedup snapshot per 1000 entries, which the spike's test 6 pins; test 7 lowers it to 1, the
 * launcher's default.
 */
final class EmbeddedPulsar implements AutoCloseable {
    static final String CLUSTER = BrokerArgs.DEFAULT_CLUSTER;

    private final LocalBroker broker;
    private final long startMillis;
    private long stopMillis = -1;

    private EmbeddedPulsar(LocalBroker broker, long startMillis) {
        this.broker = broker;
        this.startMillis = startMillis;
    }

    static EmbeddedPulsar start() throws Exception {
        Path data = Path.of("pulsar-spike-data").toAbsolutePath();
        deleteRecursively(data);
        BrokerArgs args = BrokerArgs.of(data).withConf("brokerDeduplicationEntriesInterval", "1000");
        long t0 = System.nanoTime();
        LocalBroker broker = LocalBroker.start(args);
        return new EmbeddedPulsar(broker, TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0));
    }

    String brokerUrl() {
        return broker.serviceUrl();
    }

    String webUrl() {
        return broker.webUrl();
    }

    PulsarClient newClient() throws Exception {
        return PulsarClient.builder().serviceUrl(brokerUrl()).build();
    }

    PulsarAdmin newAdmin() throws Exception {
        return PulsarAdmin.builder().serviceHttpUrl(webUrl()).build();
    }

    /**
     * The broker's live configuration object. Static settings read when a topic loads (such as
     * {@code brokerDeduplicationEntriesInterval}) take effect for topics loaded after a change: a test-only
     * shortcut for "a broker started with that setting".
     */
    ServiceConfiguration config() {
        return broker.config();
    }

    long startMillis() {
        return startMillis;
    }

    long stopMillis() {
        return stopMillis;
    }

    @Override
    public void close() throws Exception {
        long t0 = System.nanoTime();
        broker.close();
        stopMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
    }

    /** The JVM's peak resident set (VmHWM from /proc/self/status), or -1 where there is none. */
    static long peakRssKb() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
                if (line.startsWith("VmHWM:")) {
                    return Long.parseLong(line.replaceAll("[^0-9]", ""));
                }
            }
        } catch (IOException | NumberFormatException e) {
            return -1;
        }
        return -1;
    }

    private static void deleteRecursively(Path dir) throws IOException {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(dir)) {
            for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(p);
            }
        }
    }
}
