package io.verbatim.pulsar;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.apache.pulsar.PulsarStandalone;
import org.apache.pulsar.PulsarStandaloneBuilder;
import org.apache.pulsar.broker.ServiceConfiguration;
import org.apache.pulsar.client.admin.PulsarAdmin;
import org.apache.pulsar.client.api.PulsarClient;

/**
 * A Pulsar 4.0.7 standalone broker inside the test JVM: RocksDB metadata, one embedded bookie, no
 * ZooKeeper, no functions worker, no stream storage, ports picked free on 127.0.0.1. Its data lives
 * under the working directory (surefire runs in {@code target/}), wiped at start.
 */
final class EmbeddedPulsar implements AutoCloseable {
    static final String CLUSTER = "standalone";

    private final PulsarStandalone standalone;
    private final ServiceConfiguration conf;
    private final long startMillis;
    private long stopMillis = -1;

    private EmbeddedPulsar(PulsarStandalone standalone, ServiceConfiguration conf, long startMillis) {
        this.standalone = standalone;
        this.conf = conf;
        this.startMillis = startMillis;
    }

    static EmbeddedPulsar start() throws Exception {
        int brokerPort = freePort();
        int webPort = freePort();
        int bookiePort = freePort();

        ServiceConfiguration conf = new ServiceConfiguration();
        conf.setClusterName(CLUSTER);
        conf.setAdvertisedAddress("127.0.0.1");
        conf.setBindAddress("127.0.0.1");
        conf.setBrokerServicePort(Optional.of(brokerPort));
        conf.setWebServicePort(Optional.of(webPort));
        conf.setManagedLedgerDefaultEnsembleSize(1);
        conf.setManagedLedgerDefaultWriteQuorum(1);
        conf.setManagedLedgerDefaultAckQuorum(1);
        conf.setFunctionsWorkerEnabled(false);
        conf.setTransactionCoordinatorEnabled(false);
        // no __change_events system topics: namespace policies are enough here and start faster
        conf.setSystemTopicEnabled(false);
        conf.setTopicLevelPoliciesEnabled(false);
        conf.setLoadBalancerEnabled(false);
        conf.setAllowAutoTopicCreation(true);
        conf.setBrokerDeduplicationEnabled(false); // on per namespace, as Verbatim's destination namespaces will be
        conf.setBrokerShutdownTimeoutMs(3000);
        conf.setManagedLedgerCacheSizeMB(16);

        Path bkConf = Path.of("pulsar-spike-bookkeeper.conf").toAbsolutePath();
        Files.writeString(bkConf, "allowLoopback=true\nhttpServerEnabled=false\n");

        PulsarStandalone standalone = PulsarStandaloneBuilder.instance()
                .withWipeData(true)
                .withNumOfBk(1)
                .withBkPort(bookiePort)
                .withNoStreamStorage(true)
                .withAdvertisedAddress("127.0.0.1")
                .build();
        // 4.0.x: build() replaces the configuration with a fresh one; put ours back after it
        conf.setRunningStandalone(true);
        standalone.setConfig(conf);
        standalone.setConfigFile(bkConf.toString());
        standalone.setNoFunctionsWorker(true);

        long t0 = System.nanoTime();
        standalone.start();
        long startMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
        return new EmbeddedPulsar(standalone, conf, startMillis);
    }

    String brokerUrl() {
        return standalone.getBrokerServiceUrl();
    }

    String webUrl() {
        return standalone.getWebServiceUrl();
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
        return conf;
    }

    long startMillis() {
        return startMillis;
    }

    long stopMillis() {
        return stopMillis;
    }

    @Override
    public void close() {
        long t0 = System.nanoTime();
        standalone.close();
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

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            s.setReuseAddress(true);
            return s.getLocalPort();
        }
    }
}
