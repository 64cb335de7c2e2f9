package io.verbatim.pulsar.standalone;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.apache.bookkeeper.bookie.BookieImpl;
import org.apache.bookkeeper.conf.ServerConfiguration;
import org.apache.pulsar.broker.PulsarService;
import org.apache.pulsar.broker.ServiceConfiguration;
import org.apache.pulsar.client.admin.PulsarAdmin;
import org.apache.pulsar.client.admin.PulsarAdminBuilder;
import org.apache.pulsar.client.api.ClientBuilder;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.impl.PulsarClientImpl;
import org.apache.pulsar.common.naming.TopicName;
import org.apache.pulsar.common.naming.TopicVersion;
import org.apache.pulsar.common.policies.data.ClusterData;
import org.apache.pulsar.common.policies.data.TenantInfo;
import org.apache.pulsar.functions.worker.WorkerConfig;
import org.apache.pulsar.metadata.bookkeeper.BKCluster;

/**
 * One bookie and one broker on a data directory that is kept: {@code DIR/metadata} (RocksDB), {@code
 * DIR/bookkeeper} (journal and ledgers). Started again on the same directory it finds its topics, subscriptions
 * and data; the bookie keeps the port its cookie names (BookKeeper ties a bookie's identity to host:port), chosen
 * free the first time.
 *
 * <p>Used by {@link StandaloneBroker} in a process of its own, and in-JVM by this module's tests.
 */
public final class LocalBroker implements AutoCloseable {
    private static final String DEFAULT_NAMESPACE = "public/default";
    private static final Duration READY_TIMEOUT = Duration.ofSeconds(60);
    private static final Duration REGISTER_TIMEOUT = Duration.ofSeconds(30);

    private final BKCluster bookie;
    private final PulsarService broker;
    private final ServiceConfiguration conf;
    private final String serviceUrl;
    private final String webUrl;
    private final Optional<String> serviceUrlTls;
    private final Optional<String> webUrlTls;
    private boolean closed;

    private LocalBroker(BKCluster bookie, PulsarService broker, ServiceConfiguration conf) {
        this.bookie = bookie;
        this.broker = broker;
        this.conf = conf;
        String host = conf.getAdvertisedAddress();
        this.serviceUrl = "pulsar://" + host + ":" + conf.getBrokerServicePort().orElseThrow();
        this.webUrl = "http://" + host + ":" + conf.getWebServicePort().orElseThrow();
        this.serviceUrlTls = conf.getBrokerServicePortTls().map(port -> "pulsar+ssl://" + host + ":" + port);
        this.webUrlTls = conf.getWebServicePortTls().map(port -> "https://" + host + ":" + port);
    }

    /**
     * Starts the bookie and the broker and returns once the broker answers a topic lookup on its binary port and
     * lists {@code public/default} on its admin API. Ports given as 0 are chosen free.
     */
    public static LocalBroker start(BrokerArgs args) throws Exception {
        Path data = Files.createDirectories(args.dataDir());
        Path bkDir = Files.createDirectories(data.resolve("bookkeeper"));
        String metadataUrl = "rocksdb://" + data.resolve("metadata");
        int brokerPort = args.brokerPort() != 0 ? args.brokerPort() : freePort(args.bindAddress());
        int webPort = args.webPort() != 0 ? args.webPort() : freePort(args.bindAddress());
        ServiceConfiguration conf = BrokerConfig.of(args, brokerPort, webPort, metadataUrl);
        // TLS ports given as 0 (--conf brokerServicePortTls=0) are chosen free too, so the ready line can name them
        if (conf.getBrokerServicePortTls().filter(port -> port == 0).isPresent()) {
            conf.setBrokerServicePortTls(Optional.of(freePort(args.bindAddress())));
        }
        if (conf.getWebServicePortTls().filter(port -> port == 0).isPresent()) {
            conf.setWebServicePortTls(Optional.of(freePort(args.bindAddress())));
        }

        ServerConfiguration bkConf = new ServerConfiguration();
        bkConf.setAllowLoopback(true);
        bkConf.setHttpServerEnabled(false);
        // an entry is acknowledged once it is in the journal and the journal is synced (so it survives a kill -9);
        // these are ServerConfiguration's defaults, said here because BKCluster's own base configuration, used
        // when none is given, turns journalWriteData off
        bkConf.setJournalWriteData(true);
        bkConf.setJournalSyncData(true);
        bkConf.setProperty("dbStorage_writeCacheMaxSizeMb", 16);
        bkConf.setProperty("dbStorage_readAheadCacheMaxSizeMb", 16);
        BKCluster bookie = BKCluster.builder()
                .baseServerConfiguration(bkConf)
                .metadataServiceUri(metadataUrl)
                .numBookies(1)
                .dataDir(bkDir.toString())
                .clearOldData(false)
                .build();
        PulsarService broker = null;
        try {
            awaitRegistered(bookie);
            broker = new PulsarService(conf, new WorkerConfig(), Optional.empty(), LocalBroker::halt);
            broker.start();
            LocalBroker local = new LocalBroker(bookie, broker, conf);
            local.createDefaultNamespace();
            local.awaitReady();
            return local;
        } catch (Exception | Error e) {
            if (broker != null) {
                closeQuietly(broker);
            }
            bookie.close();
            throw e;
        }
    }

    /** {@code pulsar://host:port}. */
    public String serviceUrl() {
        return serviceUrl;
    }

    /** {@code http://host:port}. */
    public String webUrl() {
        return webUrl;
    }

    /** {@code pulsar+ssl://host:port}, when {@code brokerServicePortTls} is set. */
    public Optional<String> serviceUrlTls() {
        return serviceUrlTls;
    }

    /** {@code https://host:port}, when {@code webServicePortTls} is set. */
    public Optional<String> webUrlTls() {
        return webUrlTls;
    }

    /**
     * The live configuration. Settings read when a topic loads take effect for topics loaded after a change: a
     * test-only shortcut for "a broker started with that setting".
     */
    public ServiceConfiguration config() {
        return conf;
    }

    /** Closes the broker, then the bookie; idempotent. */
    @Override
    public synchronized void close() throws Exception {
        if (closed) {
            return;
        }
        closed = true;
        try {
            broker.close();
        } finally {
            bookie.close();
        }
    }

    private void createDefaultNamespace() throws Exception {
        PulsarAdmin admin = broker.getAdminClient();
        String cluster = conf.getClusterName();
        if (!admin.clusters().getClusters().contains(cluster)) {
            admin.clusters().createCluster(cluster, ClusterData.builder()
                    .serviceUrl(webUrl).brokerServiceUrl(serviceUrl).build());
        }
        if (!admin.tenants().getTenants().contains(TopicName.PUBLIC_TENANT)) {
            admin.tenants().createTenant(TopicName.PUBLIC_TENANT, TenantInfo.builder()
                    .adminRoles(Set.copyOf(conf.getSuperUserRoles())).allowedClusters(Set.of(cluster)).build());
        }
        if (!admin.namespaces().getNamespaces(TopicName.PUBLIC_TENANT).contains(DEFAULT_NAMESPACE)) {
            admin.namespaces().createNamespace(DEFAULT_NAMESPACE, conf.getDefaultNumberOfNamespaceBundles());
        }
    }

    /**
     * Polls, within {@link #READY_TIMEOUT}, a lookup on the binary port, the admin API over HTTP and the broker's
     * health check (a write and a read through the bookie), with the broker's own client credentials ({@code
     * brokerClientAuthenticationPlugin}) when authentication is on.
     */
    private void awaitReady() throws Exception {
        long deadline = System.nanoTime() + READY_TIMEOUT.toNanos();
        TopicName probe = TopicName.get("persistent://" + DEFAULT_NAMESPACE + "/verbatim-ready-probe");
        ClientBuilder clientBuilder = PulsarClient.builder().serviceUrl(serviceUrl);
        PulsarAdminBuilder adminBuilder = PulsarAdmin.builder().serviceHttpUrl(webUrl);
        String plugin = conf.getBrokerClientAuthenticationPlugin();
        if (conf.isAuthenticationEnabled() && plugin != null && !plugin.isBlank()) {
            String params = conf.getBrokerClientAuthenticationParameters();
            clientBuilder.authentication(plugin, params == null ? "" : params);
            adminBuilder.authentication(plugin, params == null ? "" : params);
        }
        try (PulsarClient client = clientBuilder.build();
             PulsarAdmin admin = adminBuilder.build()) {
            Exception last = null;
            while (System.nanoTime() < deadline) {
                try {
                    List<String> namespaces = admin.namespaces().getNamespaces(TopicName.PUBLIC_TENANT);
                    ((PulsarClientImpl) client).getLookup().getBroker(probe).get(5, TimeUnit.SECONDS);
                    if (namespaces.contains(DEFAULT_NAMESPACE)) {
                        // and a write and read through the bookie: after a restart the bookie may not be registered yet,
                        // and a read of a ledger it holds fails then (the dispatcher tries again only 15 s later)
                        admin.brokers().healthcheck(TopicVersion.V2);
                        return;
                    }
                } catch (Exception e) {
                    last = e;
                }
                Thread.sleep(100);
            }
            throw new IllegalStateException("the broker did not answer a lookup and list " + DEFAULT_NAMESPACE
                    + " within " + READY_TIMEOUT.toSeconds() + " s; last error: " + last, last);
        }
    }

    /** Pulsar asks this on a fatal error (its metadata session lost, say): a process that stops is better. */
    private static void halt(int code) {
        System.err.println("[verbatim] the broker asked to terminate with code " + code);
        Runtime.getRuntime().halt(code);
    }

    /**
     * Waits until the bookie's registration is in the metadata store. A broker whose BookKeeper client asks for the
     * bookie before it registered can keep it unresolvable for minutes: seen once on a restart after a kill, the
     * broker's own health check could not read its schema ledger ("Cannot resolve bookieId", "Bookie handle is not
     * available") and the broker never became ready.
     */
    private static void awaitRegistered(BKCluster bookie) throws Exception {
        String id = BookieImpl.getBookieId(bookie.getBsConfs().get(0)).toString();
        String path = "/ledgers/available/" + id;
        long deadline = System.nanoTime() + REGISTER_TIMEOUT.toNanos();
        while (!bookie.getStore().exists(path).get(REGISTER_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("the bookie " + id + " did not register (" + path + ") within "
                        + REGISTER_TIMEOUT.toSeconds() + " s");
            }
            Thread.sleep(20);
        }
    }

    private static void closeQuietly(PulsarService broker) {
        try {
            broker.close();
        } catch (Exception e) {
            System.err.println("[verbatim] closing the broker after a failed start: " + e);
        }
    }

    private static int freePort(String bindAddress) throws IOException {
        try (ServerSocket s = new ServerSocket()) {
            s.setReuseAddress(true);
            s.bind(new InetSocketAddress(InetAddress.getByName(bindAddress), 0));
            return s.getLocalPort();
        }
    }
}
