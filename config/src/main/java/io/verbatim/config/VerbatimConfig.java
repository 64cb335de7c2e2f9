package io.verbatim.config;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.verbatim.budget.BudgetConfig;
import io.verbatim.exchange.Caps;
import io.verbatim.exchange.ExchangeConfig;
import io.verbatim.model.Backoff;
import io.verbatim.model.Buckets;
import io.verbatim.model.proto.CompressionType;
import io.verbatim.net.NetworkLimits;
import io.verbatim.pipeline.PartsCodec;
import io.verbatim.pipeline.StartAt;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.EnumMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * Everything an embedded multi-cluster runtime is configured with, as immutable values. Built only by
 * {@link #parse}/{@link #load}, which validate the whole file before returning and name the key, the
 * value and what was expected when something is wrong; an unknown key is an error, never ignored.
 *
 * @param subscriptions how PIP-486 subscriptions dispatch (each consumer's bounded queue)
 * @param security each cluster's broker credential, the admin token, whether status is open, TLS
 * @param rtt a simulated network round trip added to replication traffic between clusters (0: none)
 * @param storage how segments are kept in memory: retention of consumed entries, garbage collection
 * @param network what keeps every listening port standing: timeouts, connections per port, header and frame sizes
 */
public record VerbatimConfig(List<ClusterConfig> clusters, List<TopicConfig> topics, ReplicationConfig replication,
        ExchangeConfig exchange, BudgetConfig slowPath, Caps caps, AutoScaleConfig autoScale,
        MetadataLogConfig metadataLog, SubscriptionConfig subscriptions, SecurityConfig security, Duration rtt,
        StorageConfig storage, NetworkLimits network) {

    private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());

    public VerbatimConfig {
        clusters = List.copyOf(clusters);
        topics = List.copyOf(topics);
    }

    /** The cluster named {@code name}. */
    public ClusterConfig cluster(String name) {
        return clusters.stream().filter(c -> c.name().equals(name)).findFirst()
                .orElseThrow(() -> new IllegalArgumentException("no cluster named '" + name + "' in the config"));
    }

    public VerbatimConfig withRtt(Duration value) {
        return new VerbatimConfig(clusters, topics, replication, exchange, slowPath, caps, autoScale, metadataLog,
                subscriptions, security, value, storage, network);
    }

    public VerbatimConfig withTopics(List<TopicConfig> value) {
        return new VerbatimConfig(clusters, value, replication, exchange, slowPath, caps, autoScale, metadataLog,
                subscriptions, security, rtt, storage, network);
    }

    public VerbatimConfig withStorage(StorageConfig value) {
        return new VerbatimConfig(clusters, topics, replication, exchange, slowPath, caps, autoScale, metadataLog,
                subscriptions, security, rtt, value, network);
    }

    public static VerbatimConfig load(Path file) {
        try {
            return parse(Files.readString(file), System::getenv);
        } catch (NoSuchFileException e) {
            throw new ConfigException("", "file " + file + " does not exist");
        } catch (IOException e) {
            throw new ConfigException("", "file " + file + " cannot be read: " + e.getMessage());
        }
    }

    public static VerbatimConfig parse(String yaml) {
        return parse(yaml, System::getenv);
    }

    /**
     * @param env where {@code env:NAME} values are looked up (secrets stay out of the file)
     */
    public static VerbatimConfig parse(String yaml, Function<String, String> env) {
        JsonNode root;
        try {
            root = YAML.readTree(yaml);
        } catch (JacksonException e) {
            String where = e.getLocation() == null ? "" : " at line " + e.getLocation().getLineNr() + ", column "
                    + e.getLocation().getColumnNr();
            throw new ConfigException("", "is not valid YAML" + where + ": " + e.getOriginalMessage());
        }
        if (root == null || root.isMissingNode() || root.isNull()) {
            throw new ConfigException("", "is empty (expected at least 'clusters', each with its 'token')");
        }
        return read(new Section("", root), env);
    }

    private static VerbatimConfig read(Section root, Function<String, String> env) {
        Caps caps = caps(root.section("caps"), Caps.PULSAR_DEFAULTS);
        List<Section> clusterSections = root.sections("clusters");
        List<SecurityConfig.ClusterCredentials> credentials = new java.util.ArrayList<>();
        List<Security.OwnFiles> ownTls = new java.util.ArrayList<>();
        List<ClusterConfig> clusters = new java.util.ArrayList<>();
        for (Section s : clusterSections) {
            clusters.add(cluster(s, caps));
            credentials.add(Security.credentials(s, env));
            ownTls.add(Security.ownTls(s.section("tls")));
            s.done();
        }
        if (clusters.size() < 2) {
            throw new ConfigException("clusters", clusters.size() + " cluster(s) listed (expected at least 2: "
                    + "replication needs a remote)");
        }
        Set<String> names = new HashSet<>();
        for (int i = 0; i < clusters.size(); i++) {
            if (!names.add(clusters.get(i).name())) {
                throw new ConfigException("clusters[" + i + "].name", "'" + clusters.get(i).name()
                        + "' is listed twice (expected unique cluster names)");
            }
        }
        List<TopicConfig> topics = root.sections("topics").stream().map(s -> topic(s, caps)).toList();
        if (topics.isEmpty()) {
            topics = List.of(new TopicConfig("persistent://public/default/orders", 1, 4));
        }
        ReplicationConfig replication = replication(root.section("replication"));
        ExchangeConfig exchange = exchange(root.section("exchange"));
        BudgetConfig slowPath = slowPath(root.section("slowPath"));
        AutoScaleConfig autoScale = autoScale(root.section("autoScale"));
        MetadataLogConfig metadataLog = metadataLog(root.section("metadataLog"));
        SubscriptionConfig subscriptions = subscriptions(root.section("subscriptions"));
        SecurityConfig security = Security.read(root.section("security"), clusters, credentials, ownTls, env);
        Section networkSection = root.section("network");
        Duration rtt = networkSection.duration("rtt", Duration.ZERO, Duration.ZERO);
        NetworkLimits network = network(networkSection);
        networkSection.done();
        StorageConfig storage = storage(root.section("storage"));
        root.done();
        return new VerbatimConfig(clusters, topics, replication, exchange, slowPath, caps, autoScale, metadataLog,
                subscriptions, security, rtt, storage, network);
    }

    private static NetworkLimits network(Section s) {
        NetworkLimits d = NetworkLimits.defaults();
        Duration idle = timeout(s, "idleTimeout", d.idleTimeout());
        Duration request = timeout(s, "requestTimeout", d.requestTimeout());
        int connections = s.integer("maxConnectionsPerPort", d.maxConnectionsPerPort(), 1, NetworkLimits.MAX_CONNECTIONS);
        int headers = (int) s.bytes("maxHeaderBytes", d.maxHeaderBytes(), NetworkLimits.MIN_HEADER_BYTES,
                NetworkLimits.MAX_HEADER_BYTES);
        int frames = (int) s.bytes("maxFrameBytes", d.maxFrameBytes(), NetworkLimits.MIN_FRAME_BYTES,
                NetworkLimits.MAX_FRAME_BYTES);
        return build(s, () -> new NetworkLimits(idle, request, connections, headers, frames));
    }

    /** A timeout within [100ms, 1h]. */
    private static Duration timeout(Section s, String name, Duration fallback) {
        Duration d = s.duration(name, fallback, NetworkLimits.MIN_TIMEOUT);
        if (d.compareTo(NetworkLimits.MAX_TIMEOUT) > 0) {
            throw new ConfigException(s.key(name), Section.pretty(d) + " is too long (expected at most 1h)");
        }
        return d;
    }

    private static ClusterConfig cluster(Section s, Caps defaults) {
        String name = s.requiredString("name", "the cluster's name");
        int brokers = s.integer("brokers", 1, 1, 16);
        int port = s.integer("adminPort", 0, 0, 65535);
        Caps caps = caps(s.section("caps"), defaults);
        return build(s, () -> new ClusterConfig(name, brokers, port, caps)); // the caller reads the rest, then done()
    }

    private static TopicConfig topic(Section s, Caps caps) {
        String name = s.requiredString("name", "the topic's name");
        int segments = s.integer("initialSegments", 1, 1, caps.maxSegments());
        int budget = s.integer("bucketBudget", 4, 1, Buckets.MAX_COUNT);
        s.done();
        return new TopicConfig(name, segments, budget);
    }

    private static Caps caps(Section s, Caps defaults) {
        int maxSegments = s.integer("maxSegments", defaults.maxSegments(), 1, 1 << 16);
        int maxBuckets = s.integer("maxEntryBucketsPerSegment", defaults.maxEntryBucketsPerSegment(), 1,
                Buckets.MAX_COUNT);
        s.done();
        return build(s, () -> new Caps(maxSegments, maxBuckets));
    }

    private static ReplicationConfig replication(Section s) {
        ReplicationConfig d = ReplicationConfig.defaults();
        StartAt startAt = s.choice("startAt", d.startAt(), StartAt.class);
        Duration ttl = s.duration("messageTtl", d.messageTtl(), Duration.ZERO);
        int window = s.integer("maxInFlight", d.maxInFlight(), 1, 1_000_000);
        Duration sendTimeout = s.duration("sendTimeout", d.sendTimeout(), Duration.ofMillis(1));
        Backoff retry = backoff(s.section("retry"), d.retry());
        PartsCodec parts = s.choice("partsCodec", d.partsCodec(), PartsCodec.class);
        Duration sealWait = s.duration("sealWait", d.sealWait(), Duration.ofMillis(1));
        s.done();
        return build(s, () -> new ReplicationConfig(startAt, ttl, window, sendTimeout, retry, parts, sealWait));
    }

    private static ExchangeConfig exchange(Section s) {
        ExchangeConfig d = ExchangeConfig.defaults();
        Duration antiEntropy = s.duration("antiEntropyInterval", d.antiEntropyInterval(), Duration.ofMillis(1));
        Backoff retry = backoff(s.section("retry"), d.retry());
        Duration timeout = s.duration("requestTimeout", d.requestTimeout(), Duration.ofMillis(1));
        int maxBody = (int) s.bytes("maxBodyBytes", d.maxBodyBytes(), 1024, Integer.MAX_VALUE);
        s.done();
        return build(s, () -> new ExchangeConfig(antiEntropy, retry, timeout, maxBody));
    }

    /** A {@code retry} mapping: exponential backoff from {@code initial} to {@code max}, with jitter. */
    private static Backoff backoff(Section s, Backoff defaults) {
        Duration initial = s.duration("initial", defaults.initial(), Duration.ofMillis(1));
        Duration max = s.duration("max", defaults.max(), Duration.ofMillis(1));
        double jitter = s.number("jitter", defaults.jitter(), 0, 1);
        s.done();
        return build(s, () -> new Backoff(initial, max, jitter));
    }

    private static BudgetConfig slowPath(Section s) {
        long rate = s.bytes("bytesPerSecond", 50_000_000, 1, Long.MAX_VALUE / 4);
        long burst = s.bytes("burstBytes", rate, 1, Long.MAX_VALUE / 4);
        int slots = s.integer("maxConcurrentRebatches", 4, 1, 1024);
        Map<CompressionType, Double> weights = new EnumMap<>(CompressionType.class);
        s.entries("codecWeights", e -> {
            CompressionType codec;
            try {
                codec = CompressionType.valueOf(e.name().toUpperCase(Locale.ROOT));
            } catch (IllegalArgumentException unknown) {
                throw new ConfigException(e.key(), "is not a codec (expected one of NONE, LZ4, ZLIB, ZSTD, SNAPPY)");
            }
            JsonNode v = e.value();
            if (v == null || !v.isNumber() || !(v.asDouble() > 0) || Double.isInfinite(v.asDouble())) {
                throw new ConfigException(e.key(), (v == null ? "null" : Section.shown(v))
                        + " is not a weight (expected a positive number: the cost of one compressed byte)");
            }
            return weights.put(codec, v.asDouble());
        });
        s.done();
        return build(s, () -> new BudgetConfig(rate, burst, slots, weights));
    }

    private static AutoScaleConfig autoScale(Section s) {
        AutoScaleConfig d = AutoScaleConfig.pulsarDefaults();
        boolean enabled = s.bool("enabled", d.enabled());
        Duration interval = s.duration("interval", d.interval(), Duration.ofMillis(10));
        int minSegments = s.integer("minSegments", d.minSegments(), 1, 1 << 16);
        int maxDagDepth = s.integer("maxDagDepth", d.maxDagDepth(), 1, 1 << 16);
        Duration splitCooldown = s.duration("splitCooldown", d.splitCooldown(), Duration.ZERO);
        Duration rebucketCooldown = s.duration("rebucketCooldown", d.rebucketCooldown(), Duration.ZERO);
        Duration mergeCooldown = s.duration("mergeCooldown", d.mergeCooldown(), Duration.ZERO);
        Duration mergeWindow = s.duration("mergeWindow", d.mergeWindow(), Duration.ZERO);
        double floor = s.number("splitVsRebucketMinMsgRateIn", d.splitVsRebucketMinMsgRateIn(), 0, Double.MAX_VALUE);
        AutoScaleConfig.Rates split = rates(s.section("split"), d.split());
        AutoScaleConfig.Rates merge = rates(s.section("merge"), d.merge());
        s.done();
        return build(s, () -> new AutoScaleConfig(enabled, interval, minSegments, maxDagDepth, splitCooldown, rebucketCooldown,
                mergeCooldown, mergeWindow, floor, split, merge));
    }

    private static AutoScaleConfig.Rates rates(Section s, AutoScaleConfig.Rates d) {
        double msgIn = s.number("msgRateIn", d.msgRateIn(), 0, Double.MAX_VALUE);
        double bytesIn = s.number("bytesRateIn", d.bytesRateIn(), 0, Double.MAX_VALUE);
        double msgOut = s.number("msgRateOut", d.msgRateOut(), 0, Double.MAX_VALUE);
        double bytesOut = s.number("bytesRateOut", d.bytesRateOut(), 0, Double.MAX_VALUE);
        s.done();
        return new AutoScaleConfig.Rates(msgIn, bytesIn, msgOut, bytesOut);
    }

    private static StorageConfig storage(Section s) {
        StorageConfig d = StorageConfig.defaults();
        boolean deleteConsumed = s.bool("deleteConsumed", d.deleteConsumed());
        boolean pruneSealed = s.bool("pruneSealed", d.pruneSealed());
        Duration gcInterval = s.duration("gcInterval", d.gcInterval(), Duration.ofMillis(10));
        s.done();
        return build(s, () -> new StorageConfig(deleteConsumed, pruneSealed, gcInterval));
    }

    private static MetadataLogConfig metadataLog(Section s) {
        MetadataLogConfig d = MetadataLogConfig.defaults();
        boolean enabled = s.bool("enabled", d.enabled());
        int perFollower = s.integer("maxListenersPerFollower", d.maxListenersPerFollower(), 1, 1024);
        int lag = s.integer("followerLagThreshold", d.followerLagThreshold(), 0, Integer.MAX_VALUE);
        Duration reassign = s.duration("reassignmentInterval", d.reassignmentInterval(), Duration.ofMillis(1));
        s.done();
        return new MetadataLogConfig(enabled, perFollower, lag, reassign);
    }

    private static SubscriptionConfig subscriptions(Section s) {
        int queue = s.integer("receiverQueueSize", SubscriptionConfig.DEFAULT_RECEIVER_QUEUE_SIZE, 1,
                SubscriptionConfig.MAX_RECEIVER_QUEUE_SIZE);
        s.done();
        return build(s, () -> new SubscriptionConfig(queue));
    }

    /** Runs a record's own validation, naming the section when it refuses. */
    private static <T> T build(Section s, Supplier<T> constructor) {
        try {
            return constructor.get();
        } catch (IllegalArgumentException e) {
            throw new ConfigException(s.path(), e.getMessage());
        }
    }
}
