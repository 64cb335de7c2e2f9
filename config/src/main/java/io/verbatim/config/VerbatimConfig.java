package io.verbatim.config;

import static io.verbatim.config.Ranges.MAX_INTERVAL;
import static io.verbatim.config.Ranges.MAX_RTT;
import static io.verbatim.config.Ranges.MS;
import static io.verbatim.config.Ranges.TEN_MS;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonStreamContext;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.core.exc.StreamReadException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.verbatim.budget.BudgetConfig;
import io.verbatim.exchange.Caps;
import io.verbatim.exchange.ExchangeConfig;
import io.verbatim.model.Backoff;
import io.verbatim.model.Buckets;
import io.verbatim.model.Compression;
import io.verbatim.net.NetworkLimits;
import io.verbatim.pipeline.PartsCodec;
import io.verbatim.pipeline.ReplicatorConfig;
import io.verbatim.pipeline.StartAt;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * Everything an embedded multi-cluster runtime is configured with, as immutable values. Built only by
 * {@link #parse}/{@link #load}, which validate the whole file before returning and name the key, the
 * value and what was expected when something is wrong; an unknown key is an error, never ignored.
 *
 * @param subscriptions how PIP-486 subscriptions dispatch (each consumer's bounded queue)
 * @param security each cluster's key, the admin token, whether status is open, signatures' window, TLS
 * @param rtt a simulated network round trip added to replication traffic between clusters (0: none)
 * @param storage how segments are kept in memory: retention of consumed entries, garbage collection
 * @param network what keeps every listening port standing: timeouts, connections per port, header and frame sizes
 * @param ownership how a cluster's broker processes share its segments (leases, balancing)
 */
public record VerbatimConfig(List<ClusterConfig> clusters, List<TopicConfig> topics, ReplicationConfig replication,
        ExchangeConfig exchange, BudgetConfig slowPath, Caps caps, AutoScaleConfig autoScale,
        MetadataLogConfig metadataLog, SubscriptionConfig subscriptions, SecurityConfig security, Duration rtt,
        StorageConfig storage, NetworkLimits network, OwnershipConfig ownership) {

    /** A key given twice in one mapping is an error (the later would silently win), named with its line. */
    static final ObjectMapper YAML = new ObjectMapper(YAMLFactory.builder()
            .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION).build());
    /**
     * The largest file read, checked before parsing. SnakeYAML's reader takes 1024 characters at a time and copies
     * what it holds of the token being scanned each time, so one long token (a comment, a scalar) costs the square
     * of its length: 1 Mi characters on one line take 0.5 s, 3 Mi 3.4 s, and a 4 MiB comment took 13 s only for
     * SnakeYAML's own limit of 3 Mi code points to call it "not valid YAML at line 1, column 1". A mebibyte holds
     * thousands of topics; a configuration is never larger.
     */
    static final int MAX_FILE_CHARS = 1 << 20;

    // The ranges (the records' own, durations of this package in Ranges): what a real deployment never leaves,
    // and nothing downstream can overflow within.
    /** Every cluster replicates to every other: a mesh of more is not one geo-replicated namespace. */
    static final int MAX_CLUSTERS = 64;
    /** Topics the file lists (every one has replicators per segment and remote in this process). */
    static final int MAX_TOPICS = 10_000;
    static final double MAX_MSG_RATE = 1e9;
    static final double MAX_BYTES_RATE = 1e12;

    public VerbatimConfig(List<ClusterConfig> clusters, List<TopicConfig> topics, ReplicationConfig replication,
            ExchangeConfig exchange, BudgetConfig slowPath, Caps caps, AutoScaleConfig autoScale,
            MetadataLogConfig metadataLog, SubscriptionConfig subscriptions, SecurityConfig security, Duration rtt,
            StorageConfig storage, NetworkLimits network) {
        this(clusters, topics, replication, exchange, slowPath, caps, autoScale, metadataLog, subscriptions, security,
                rtt, storage, network, OwnershipConfig.defaults());
    }

    public VerbatimConfig {
        if (ownership == null) {
            throw new ConfigException("ownership", "is null (expected OwnershipConfig.defaults() when not set)");
        }
        clusters = List.copyOf(clusters);
        topics = List.copyOf(topics);
        if (rtt == null || rtt.isNegative() || rtt.compareTo(MAX_RTT) > 0) {
            throw new ConfigException("network.rtt", (rtt == null ? "null" : Section.pretty(rtt))
                    + " is out of range (expected a duration within [0ms, " + Section.pretty(MAX_RTT) + "])");
        }
        if (storage.onPulsar()) {
            checkPulsar(clusters, storage);
        } else {
            checkOneBrokerProcess(clusters);
        }
    }

    /**
     * The embedded storage keeps a cluster's segments in one process (issue 25's design, §6): a cluster on it
     * runs one broker process.
     */
    static void checkOneBrokerProcess(List<ClusterConfig> clusters) {
        for (int i = 0; i < clusters.size(); i++) {
            List<BrokerMember> members = clusters.get(i).brokerMembers();
            if (members.size() > 1) {
                throw new ConfigException("clusters[" + i + "].brokerMembers", "names " + members.size() + " broker "
                        + "members " + members.stream().map(BrokerMember::id).toList() + ", but the embedded storage "
                        + "keeps a cluster's segments in one process's memory and data directory (its journal has one "
                        + "writer), so it runs one broker process; name one broker member or use storage.type: pulsar");
            }
        }
    }

    /**
     * On Pulsar every cluster has its Pulsar, no other cluster is named, and no two clusters share a namespace of
     * one broker (their segment topics would be the same topics).
     */
    static void checkPulsar(List<ClusterConfig> clusters, StorageConfig storage) {
        Map<String, Integer> namespaces = new HashMap<>();
        for (int i = 0; i < clusters.size(); i++) {
            String name = clusters.get(i).name();
            String key = "clusters[" + i + "].pulsar";
            PulsarConfig p = storage.pulsar(name).orElseThrow(() -> new ConfigException(key,
                    "is missing (expected the cluster's Pulsar: serviceUrl, adminUrl, namespace; storage.type is pulsar)"));
            String where = hostPort(p.adminUrl()) + "/" + p.namespace();
            Integer other = namespaces.putIfAbsent(where, i);
            if (other != null) {
                throw new ConfigException("clusters[" + i + "].pulsar.namespace", "'" + p.namespace() + "' on "
                        + p.adminUrl() + " is clusters[" + other + "]'s too (expected a namespace of its own per cluster: "
                        + "the segment topics would be the same)");
            }
        }
        Set<String> known = new HashSet<>();
        clusters.forEach(c -> known.add(c.name()));
        for (String name : storage.pulsar().keySet()) {
            if (!known.contains(name)) {
                throw new ConfigException("storage", "names the Pulsar of '" + name + "', which is no cluster of the file");
            }
        }
    }

    static String hostPort(String url) {
        URI uri = URI.create(url);
        return String.valueOf(uri.getHost()).toLowerCase(Locale.ROOT) + ":" + uri.getPort();
    }

    /** The cluster named {@code name}. */
    public ClusterConfig cluster(String name) {
        return clusters.stream().filter(c -> c.name().equals(name)).findFirst()
                .orElseThrow(() -> new IllegalArgumentException("no cluster named '" + name + "' in the config"));
    }

    /** This configuration with {@code value} in place of the cluster of the same name. */
    public VerbatimConfig withCluster(ClusterConfig value) {
        cluster(value.name());
        List<ClusterConfig> list = clusters.stream().map(c -> c.name().equals(value.name()) ? value : c).toList();
        return new VerbatimConfig(list, topics, replication, exchange, slowPath, caps, autoScale, metadataLog,
                subscriptions, security, rtt, storage, network, ownership);
    }

    public VerbatimConfig withRtt(Duration value) {
        return new VerbatimConfig(clusters, topics, replication, exchange, slowPath, caps, autoScale, metadataLog,
                subscriptions, security, value, storage, network, ownership);
    }

    public VerbatimConfig withTopics(List<TopicConfig> value) {
        return new VerbatimConfig(clusters, value, replication, exchange, slowPath, caps, autoScale, metadataLog,
                subscriptions, security, rtt, storage, network, ownership);
    }

    public VerbatimConfig withStorage(StorageConfig value) {
        return new VerbatimConfig(clusters, topics, replication, exchange, slowPath, caps, autoScale, metadataLog,
                subscriptions, security, rtt, value, network, ownership);
    }

    /**
     * Reads and parses {@code file}. At most {@value #MAX_FILE_CHARS} bytes are read, and one more to know it is
     * over, from any path: a device ({@code /dev/zero}), a FIFO or a file whose size the file system reports as
     * 0 is refused once it passes the limit, never read whole.
     */
    public static VerbatimConfig load(Path file) {
        byte[] bytes;
        try (InputStream in = Files.newInputStream(file)) {
            bytes = in.readNBytes(MAX_FILE_CHARS + 1);
        } catch (NoSuchFileException e) {
            throw new ConfigException("", "file " + file + " does not exist");
        } catch (IOException e) {
            throw new ConfigException("", "file " + file + " cannot be read: " + e.getMessage());
        }
        if (bytes.length > MAX_FILE_CHARS) {
            throw new ConfigException("", "file " + file + " is more than " + MAX_FILE_CHARS + " bytes long (expected at "
                    + "most " + MAX_FILE_CHARS + " bytes: a configuration, not data)");
        }
        String yaml;
        try {
            yaml = StandardCharsets.UTF_8.newDecoder().decode(ByteBuffer.wrap(bytes)).toString();
        } catch (CharacterCodingException e) {
            throw new ConfigException("", "file " + file + " is not UTF-8 text (" + e.getMessage() + ")");
        }
        return parse(yaml, System::getenv);
    }

    public static VerbatimConfig parse(String yaml) {
        return parse(yaml, System::getenv);
    }

    /**
     * @param env where {@code env:NAME} values are looked up (secrets stay out of the file)
     */
    public static VerbatimConfig parse(String yaml, Function<String, String> env) {
        if (yaml.length() > MAX_FILE_CHARS) {
            throw new ConfigException("", "is " + yaml.length() + " characters long (expected at most " + MAX_FILE_CHARS
                    + " characters: a configuration, not data)");
        }
        JsonNode root;
        try {
            root = YAML.readTree(yaml);
        } catch (StreamReadException e) {
            if (e.getProcessor() != null && e.getOriginalMessage().startsWith("Duplicate field")) {
                throw duplicate(e.getProcessor().getParsingContext(), e.getLocation());
            }
            throw invalid(e);
        } catch (JacksonException e) {
            throw invalid(e);
        }
        if (root == null || root.isMissingNode() || root.isNull()) {
            throw new ConfigException("", "is empty (expected at least 'clusters', each with its 'token')");
        }
        return read(new Section("", root), env);
    }

    static ConfigException invalid(JacksonException e) {
        String where = e.getLocation() == null ? "" : " at line " + e.getLocation().getLineNr() + ", column "
                + e.getLocation().getColumnNr();
        return new ConfigException("", "is not valid YAML" + where + ": " + e.getOriginalMessage());
    }

    /** The duplicated key as a full path ({@code clusters[0].name}), where it is given again. */
    static ConfigException duplicate(JsonStreamContext context, JsonLocation where) {
        StringBuilder key = new StringBuilder();
        for (JsonStreamContext c = context; c != null && !c.inRoot(); c = c.getParent()) {
            key.insert(0, c.inArray() ? "[" + c.getCurrentIndex() + "]" : (c.getParent().inRoot() ? "" : ".")
                    + c.getCurrentName());
        }
        return new ConfigException(key.toString(), "is given twice" + (where == null ? "" : ", again at line "
                + where.getLineNr()) + " (expected each key once in its mapping: the later one would silently win)");
    }

    static VerbatimConfig read(Section root, Function<String, String> env) {
        Caps caps = caps(root.section("caps"), Caps.PULSAR_DEFAULTS);
        List<Section> clusterSections = root.sections("clusters");
        if (clusterSections.size() < 2 || clusterSections.size() > MAX_CLUSTERS) {
            throw new ConfigException("clusters", clusterSections.size() + " cluster(s) listed (expected at least 2: "
                    + "replication needs a remote; at most " + MAX_CLUSTERS + ")");
        }
        List<SecurityConfig.ClusterCredentials> credentials = new ArrayList<>();
        List<Optional<Security.OwnFiles>> ownTls = new ArrayList<>();
        List<ClusterConfig> clusters = new ArrayList<>();
        StorageConfig.Type storageType = StorageSections.storageType(root);
        Map<String, PulsarConfig> pulsar = new LinkedHashMap<>();
        for (Section s : clusterSections) {
            ClusterConfig cluster = ClusterSections.cluster(s, caps);
            clusters.add(cluster);
            Section pulsarSection = s.section("pulsar");
            if (storageType == StorageConfig.Type.PULSAR) {
                if (s.has("pulsar")) {
                    pulsar.put(cluster.name(), pulsar(pulsarSection, cluster.name(), env));
                }
            } else if (s.has("pulsar")) {
                throw new ConfigException(s.key("pulsar"), "is given while storage.type is memory (expected "
                        + "storage.type: pulsar to keep segments on it, or no pulsar section)");
            }
            credentials.add(Security.credentials(s, env));
            ownTls.add(Security.ownTls(s.section("tls")));
            s.done();
        }
        Set<String> names = new HashSet<>();
        for (int i = 0; i < clusters.size(); i++) {
            if (!names.add(clusters.get(i).name())) {
                throw new ConfigException("clusters[" + i + "].name", "'" + clusters.get(i).name()
                        + "' is listed twice (expected unique cluster names)");
            }
        }
        ClusterSections.distinctPorts(clusters);
        List<Section> topicSections = root.sections("topics");
        if (topicSections.size() > MAX_TOPICS) {
            throw new ConfigException("topics", topicSections.size() + " topics listed (expected at most " + MAX_TOPICS
                    + ")");
        }
        List<TopicConfig> topics = topicSections.stream().map(s -> topic(s, caps)).toList();
        Map<String, Integer> topicNames = new HashMap<>();
        for (int i = 0; i < topics.size(); i++) {
            Integer first = topicNames.putIfAbsent(topics.get(i).pulsarName(), i);
            if (first != null) {
                throw new ConfigException("topics[" + i + "].name", Section.quoted(topics.get(i).name())
                        + " is listed twice (as topics[" + first + "].name " + Section.quoted(topics.get(first).name())
                        + "; expected unique topic names)");
            }
        }
        if (topics.isEmpty()) {
            topics = List.of(new TopicConfig("persistent://public/default/orders", 1, 4));
        }
        ReplicationConfig replication = replication(root.section("replication"));
        ExchangeConfig exchange = exchange(root.section("exchange"));
        BudgetConfig slowPath = slowPath(root.section("slowPath"));
        AutoScaleConfig autoScale = autoScale(root.section("autoScale"));
        MetadataLogConfig metadataLog = metadataLog(root.section("metadataLog"));
        checkDelegations(clusters, metadataLog);
        SubscriptionConfig subscriptions = subscriptions(root.section("subscriptions"));
        SecurityConfig security = Security.read(root.section("security"), clusters, credentials, ownTls, env);
        Section networkSection = root.section("network");
        Duration rtt = networkSection.duration("rtt", Duration.ZERO, Duration.ZERO, MAX_RTT);
        NetworkLimits network = network(networkSection);
        networkSection.done();
        StorageConfig storage = StorageSections.storage(root, storageType, pulsar);
        OwnershipConfig ownership = ownership(root.section("ownership"));
        root.done();
        return new VerbatimConfig(clusters, topics, replication, exchange, slowPath, caps, autoScale, metadataLog,
                subscriptions, security, rtt, storage, network, ownership);
    }

    static NetworkLimits network(Section s) {
        NetworkLimits d = NetworkLimits.defaults();
        Duration idle = timeout(s, "idleTimeout", d.idleTimeout());
        Duration request = timeout(s, "requestTimeout", d.requestTimeout());
        Duration firstRequest = timeout(s, "firstRequestTimeout", d.firstRequestTimeout());
        int connections = s.integer("maxConnectionsPerPort", d.maxConnectionsPerPort(), 1, NetworkLimits.MAX_CONNECTIONS);
        int perAddress = s.integer("maxConnectionsPerAddress", d.maxConnectionsPerAddress(), 1,
                NetworkLimits.MAX_CONNECTIONS);
        int headers = (int) s.bytes("maxHeaderBytes", d.maxHeaderBytes(), NetworkLimits.MIN_HEADER_BYTES,
                NetworkLimits.MAX_HEADER_BYTES);
        int frames = (int) s.bytes("maxFrameBytes", d.maxFrameBytes(), NetworkLimits.MIN_FRAME_BYTES,
                NetworkLimits.MAX_FRAME_BYTES);
        return build(s, () -> new NetworkLimits(idle, request, firstRequest, connections, perAddress, headers, frames));
    }

    /** A timeout within [100ms, 1h]. */
    static Duration timeout(Section s, String name, Duration fallback) {
        return s.duration(name, fallback, NetworkLimits.MIN_TIMEOUT, NetworkLimits.MAX_TIMEOUT);
    }

    /** A controller replica: its host defaults to the cluster's, its ports are required (other processes dial them). */
    static TopicConfig topic(Section s, Caps caps) {
        String name = s.requiredString("name", "the topic's name");
        TopicConfig.nameProblem(name).ifPresent(problem -> {
            throw new ConfigException(s.key("name"), problem);
        });
        int segments = s.integer("initialSegments", 1, 1, caps.maxSegments());
        int budget = s.integer("bucketBudget", 4, 1, Buckets.MAX_COUNT);
        s.done();
        return build(s, () -> new TopicConfig(name, segments, budget));
    }

    static Caps caps(Section s, Caps defaults) {
        int maxSegments = s.integer("maxSegments", defaults.maxSegments(), 1, 1 << 16);
        int maxBuckets = s.integer("maxEntryBucketsPerSegment", defaults.maxEntryBucketsPerSegment(), 1,
                Buckets.MAX_COUNT);
        s.done();
        return build(s, () -> new Caps(maxSegments, maxBuckets));
    }

    static ReplicationConfig replication(Section s) {
        ReplicationConfig d = ReplicationConfig.defaults();
        StartAt startAt = s.choice("startAt", d.startAt(), StartAt.class);
        Duration ttl = s.duration("messageTtl", d.messageTtl(), Duration.ZERO, ReplicatorConfig.MAX_MESSAGE_TTL);
        int window = s.integer("maxInFlight", d.maxInFlight(), 1, ReplicatorConfig.MAX_IN_FLIGHT);
        long windowBytes = s.bytes("maxInFlightBytes", d.maxInFlightBytes(), 1,
                ReplicatorConfig.MAX_IN_FLIGHT_BYTES);
        long brokerBytes = s.bytes("brokerInFlightBytes", d.brokerInFlightBytes(), 1,
                ReplicationConfig.MAX_BROKER_IN_FLIGHT_BYTES);
        Duration sendTimeout = s.duration("sendTimeout", d.sendTimeout(), MS, ReplicatorConfig.MAX_TIMEOUT);
        Backoff retry = backoff(s.section("retry"), d.retry());
        PartsCodec parts = s.choice("partsCodec", d.partsCodec(), PartsCodec.class);
        Duration sealWait = s.duration("sealWait", d.sealWait(), MS, ReplicatorConfig.MAX_TIMEOUT);
        Duration pingInterval = s.duration("pingInterval", d.pingInterval(), ReplicationConfig.MIN_PING,
                ReplicatorConfig.MAX_TIMEOUT);
        Duration pingTimeout = s.duration("pingTimeout", d.pingTimeout(), ReplicationConfig.MIN_PING,
                ReplicatorConfig.MAX_TIMEOUT);
        Duration stallAfter = s.duration("stallAfter", d.stallAfter(), MS, ReplicatorConfig.MAX_TIMEOUT);
        s.done();
        if (pingTimeout.compareTo(pingInterval) <= 0) {
            throw new ConfigException(s.key("pingTimeout"), Section.pretty(pingTimeout)
                    + (s.has("pingTimeout") ? "" : " (the default)") + " is not above " + s.key("pingInterval") + " "
                    + Section.pretty(pingInterval) + " (expected a silence longer than the time between pings)");
        }
        return build(s, () -> new ReplicationConfig(startAt, ttl, window, windowBytes, brokerBytes, sendTimeout,
                retry, parts, sealWait, pingInterval, pingTimeout, stallAfter));
    }

    static ExchangeConfig exchange(Section s) {
        ExchangeConfig d = ExchangeConfig.defaults();
        Duration antiEntropy = s.duration("antiEntropyInterval", d.antiEntropyInterval(), MS,
                ExchangeConfig.MAX_ANTI_ENTROPY_INTERVAL);
        Backoff retry = backoff(s.section("retry"), d.retry());
        Duration timeout = s.duration("requestTimeout", d.requestTimeout(), MS, ExchangeConfig.MAX_REQUEST_TIMEOUT);
        int maxBody = (int) s.bytes("maxBodyBytes", d.maxBodyBytes(), 1024, ExchangeConfig.MAX_BODY_BYTES);
        s.done();
        return build(s, () -> new ExchangeConfig(antiEntropy, retry, timeout, maxBody));
    }

    /** A {@code retry} mapping: exponential backoff from {@code initial} to {@code max}, with jitter. */
    static Backoff backoff(Section s, Backoff defaults) {
        Duration initial = s.duration("initial", defaults.initial(), MS, Backoff.MAX_DELAY);
        Duration max = s.duration("max", defaults.max(), MS, Backoff.MAX_DELAY);
        double jitter = s.number("jitter", defaults.jitter(), 0, 1);
        s.done();
        if (max.compareTo(initial) < 0) {
            throw new ConfigException(s.key("max"), Section.pretty(max) + (s.has("max") ? "" : " (the default)")
                    + " is below " + s.key("initial") + " " + Section.pretty(initial) + " (expected a largest delay of"
                    + " at least the first)");
        }
        return build(s, () -> new Backoff(initial, max, jitter));
    }

    static BudgetConfig slowPath(Section s) {
        long rate = s.bytes("bytesPerSecond", 50_000_000, 1, BudgetConfig.MAX_BYTES_PER_SECOND);
        long burst = s.bytes("burstBytes", rate, 1, BudgetConfig.MAX_BYTES_PER_SECOND);
        int slots = s.integer("maxConcurrentRebatches", 4, 1, BudgetConfig.MAX_CONCURRENT_REBATCHES);
        Map<Compression, Double> weights = new EnumMap<>(Compression.class);
        s.entries("codecWeights", e -> {
            Compression codec;
            try {
                codec = Compression.valueOf(e.name().toUpperCase(Locale.ROOT));
            } catch (IllegalArgumentException unknown) {
                throw new ConfigException(e.key(), "is not a codec (expected one of NONE, LZ4, ZLIB, ZSTD, SNAPPY)");
            }
            JsonNode v = e.value();
            if (v == null || !v.isNumber() || !(v.asDouble() >= BudgetConfig.MIN_WEIGHT
                    && v.asDouble() <= BudgetConfig.MAX_WEIGHT)) {
                throw new ConfigException(e.key(), (v == null ? "null" : Section.shown(v)) + " is not a weight "
                        + "(expected a positive number within [" + BudgetConfig.MIN_WEIGHT + ", " + BudgetConfig.MAX_WEIGHT
                        + "]: the cost of one compressed byte)");
            }
            return weights.put(codec, v.asDouble());
        });
        s.done();
        return build(s, () -> new BudgetConfig(rate, burst, slots, weights));
    }

    static AutoScaleConfig autoScale(Section s) {
        AutoScaleConfig d = AutoScaleConfig.pulsarDefaults();
        boolean enabled = s.bool("enabled", d.enabled());
        Duration interval = s.duration("interval", d.interval(), TEN_MS, MAX_INTERVAL);
        int minSegments = s.integer("minSegments", d.minSegments(), 1, 1 << 16);
        int maxDagDepth = s.integer("maxDagDepth", d.maxDagDepth(), 1, 1 << 16);
        Duration splitCooldown = s.duration("splitCooldown", d.splitCooldown(), Duration.ZERO, MAX_INTERVAL);
        Duration rebucketCooldown = s.duration("rebucketCooldown", d.rebucketCooldown(), Duration.ZERO, MAX_INTERVAL);
        Duration mergeCooldown = s.duration("mergeCooldown", d.mergeCooldown(), Duration.ZERO, MAX_INTERVAL);
        Duration mergeWindow = s.duration("mergeWindow", d.mergeWindow(), Duration.ZERO, MAX_INTERVAL);
        double floor = s.number("splitVsRebucketMinMsgRateIn", d.splitVsRebucketMinMsgRateIn(), 0, MAX_MSG_RATE);
        AutoScaleConfig.Rates split = rates(s.section("split"), d.split());
        AutoScaleConfig.Rates merge = rates(s.section("merge"), d.merge());
        s.done();
        above(s, "msgRateIn", split.msgRateIn(), merge.msgRateIn());
        above(s, "bytesRateIn", split.bytesRateIn(), merge.bytesRateIn());
        above(s, "msgRateOut", split.msgRateOut(), merge.msgRateOut());
        above(s, "bytesRateOut", split.bytesRateOut(), merge.bytesRateOut());
        return build(s, () -> new AutoScaleConfig(enabled, interval, minSegments, maxDagDepth, splitCooldown, rebucketCooldown,
                mergeCooldown, mergeWindow, floor, split, merge));
    }

    static void above(Section s, String rate, double split, double merge) {
        if (!(split > merge)) {
            throw new ConfigException(s.key("split." + rate), split + " is not above " + s.key("merge." + rate) + " "
                    + merge + " (expected a split threshold above the matching merge threshold, or segments would "
                    + "split and merge back and forth)");
        }
    }

    static AutoScaleConfig.Rates rates(Section s, AutoScaleConfig.Rates d) {
        double msgIn = s.number("msgRateIn", d.msgRateIn(), 0, MAX_MSG_RATE);
        double bytesIn = s.number("bytesRateIn", d.bytesRateIn(), 0, MAX_BYTES_RATE);
        double msgOut = s.number("msgRateOut", d.msgRateOut(), 0, MAX_MSG_RATE);
        double bytesOut = s.number("bytesRateOut", d.bytesRateOut(), 0, MAX_BYTES_RATE);
        s.done();
        return new AutoScaleConfig.Rates(msgIn, bytesIn, msgOut, bytesOut);
    }

    /** {@code storage: pulsar} (or {@code memory}), or {@code storage.type} in the mapping; memory when not given. */
    /** {@code storage.flush}: {@code batch}, {@code never}, or an interval ({@code 100ms}). */
    /** A cluster's {@code pulsar}: URLs, namespace (default {@code public/<cluster>}), token, trust file. */
    static PulsarConfig pulsar(Section s, String cluster, Function<String, String> env) {
        String serviceUrl = s.requiredString("serviceUrl", "the broker's pulsar://host:port or pulsar+ssl://host:port");
        PulsarConfig.urlProblem(serviceUrl, "pulsar", "pulsar+ssl").ifPresent(p -> {
            throw new ConfigException(s.key("serviceUrl"), p);
        });
        String adminUrl = s.requiredString("adminUrl", "the broker's http://host:port or https://host:port");
        PulsarConfig.urlProblem(adminUrl, "http", "https").ifPresent(p -> {
            throw new ConfigException(s.key("adminUrl"), p);
        });
        String namespace = s.string("namespace", "public/" + cluster);
        PulsarConfig.namespaceProblem(namespace).ifPresent(p -> {
            throw new ConfigException(s.key("namespace"), p);
        });
        Optional<String> token = s.optionalString("token").map(t -> {
            if (!t.startsWith("env:")) {
                return t;
            }
            String value = env.apply(t.substring(4));
            if (value == null || value.isBlank()) {
                throw new ConfigException(s.key("token"), "'" + t + "' names an environment variable that is not set "
                        + "(expected the broker's JWT in it)");
            }
            return value.trim();
        });
        Optional<Path> trust = s.optionalString("trustCertsFile").map(f -> {
            Path p = Path.of(f);
            if (!Files.isRegularFile(p) || !Files.isReadable(p)) {
                throw new ConfigException(s.key("trustCertsFile"), "file " + p + " does not exist or cannot be read "
                        + "(expected the PEM file of the CA that signed the broker's certificate)");
            }
            return p;
        });
        s.done();
        return build(s, () -> new PulsarConfig(serviceUrl, adminUrl, namespace, token, trust));
    }


    /** Each cluster's delegations need delegation on, and give no follower more listeners than the cap. */
    static void checkDelegations(List<ClusterConfig> clusters, MetadataLogConfig log) {
        for (int i = 0; i < clusters.size(); i++) {
            Map<String, String> delegations = clusters.get(i).delegations();
            if (delegations.isEmpty()) {
                continue;
            }
            if (!log.enabled()) {
                throw new ConfigException("clusters[" + i + "].delegations", "assigns listeners " + delegations.keySet()
                        + " but metadataLog.enabled is false (expected metadataLog.enabled: true to delegate)");
            }
            Map<String, Integer> perFollower = new TreeMap<>();
            delegations.values().forEach(f -> perFollower.merge(f, 1, Integer::sum));
            for (Map.Entry<String, Integer> e : perFollower.entrySet()) {
                if (e.getValue() > log.maxListenersPerFollower()) {
                    throw new ConfigException("clusters[" + i + "].delegations", "assigns " + e.getValue()
                            + " listeners to " + e.getKey() + " (expected at most metadataLog.maxListenersPerFollower: "
                            + log.maxListenersPerFollower() + ")");
                }
            }
        }
    }

    static OwnershipConfig ownership(Section s) {
        OwnershipConfig d = OwnershipConfig.defaults();
        Duration lease = s.duration("lease", d.lease(), OwnershipConfig.MIN_LEASE, OwnershipConfig.MAX_LEASE);
        Duration interval = s.duration("interval", d.interval(), Duration.ofMillis(100), OwnershipConfig.MAX_LEASE);
        int maxMoves = s.integer("maxMoves", d.maxMoves(), 0, OwnershipConfig.MAX_MOVES);
        Duration moveInterval = s.duration("moveInterval", d.moveInterval(), Duration.ofSeconds(1), Duration.ofHours(1));
        Duration minTenure = s.duration("minTenure", d.minTenure(), Duration.ZERO, Duration.ofHours(1));
        double imbalance = s.number("imbalance", d.imbalance(), 0, OwnershipConfig.MAX_IMBALANCE);
        Duration drainTimeout = s.duration("drainTimeout", d.drainTimeout(), Duration.ZERO, Duration.ofHours(1));
        s.done();
        return build(s, () -> new OwnershipConfig(lease, interval, maxMoves, moveInterval, minTenure, imbalance,
                drainTimeout));
    }

    static MetadataLogConfig metadataLog(Section s) {
        MetadataLogConfig d = MetadataLogConfig.defaults();
        boolean enabled = s.bool("enabled", d.enabled());
        // RATIS-2599 names them max-listeners-per-follower, follower-lag-threshold, reassignment-interval: either
        // spelling, not both
        int perFollower = s.integer(spelling(s, "maxListenersPerFollower", "max-listeners-per-follower"),
                d.maxListenersPerFollower(), 1, MetadataLogConfig.MAX_LISTENERS_PER_FOLLOWER);
        int lag = s.integer(spelling(s, "followerLagThreshold", "follower-lag-threshold"), d.followerLagThreshold(), 1,
                MetadataLogConfig.MAX_FOLLOWER_LAG);
        Duration reassign = s.duration(spelling(s, "reassignmentInterval", "reassignment-interval"),
                d.reassignmentInterval(), MS, MAX_INTERVAL);
        MetadataLogConfig.Timing t = d.timing();
        Duration tick = s.duration("tick", t.tick(), MS, Duration.ofSeconds(10));
        int election = s.integer("electionTicks", t.electionTicks(), 2, MetadataLogConfig.Timing.MAX_TICKS);
        int heartbeat = s.integer("heartbeatTicks", t.heartbeatTicks(), 1, MetadataLogConfig.Timing.MAX_TICKS);
        long snapshotEvery = s.integer("snapshotEvery", (int) t.snapshotEvery(), 1, Integer.MAX_VALUE);
        Duration readTimeout = s.duration("readTimeout", t.readTimeout(), MS, MAX_INTERVAL);
        long logTail = s.integer("logTailEntries", (int) t.logTailEntries(), 0,
                (int) MetadataLogConfig.Timing.MAX_LOG_TAIL_ENTRIES);
        s.done();
        MetadataLogConfig.Timing timing = build(s, () -> new MetadataLogConfig.Timing(tick, election, heartbeat,
                snapshotEvery, readTimeout, logTail));
        return build(s, () -> new MetadataLogConfig(enabled, perFollower, lag, reassign, timing));
    }

    /** The key as the file spells it: {@code camel} (the house's), or {@code kebab} (the seed's); both is an error. */
    static String spelling(Section s, String camel, String kebab) {
        if (s.has(camel) && s.has(kebab)) {
            throw new ConfigException(s.key(kebab), "is given twice, also as " + camel + " (expected one spelling)");
        }
        return s.has(kebab) ? kebab : camel;
    }

    static SubscriptionConfig subscriptions(Section s) {
        int queue = s.integer("receiverQueueSize", SubscriptionConfig.DEFAULT_RECEIVER_QUEUE_SIZE, 1,
                SubscriptionConfig.MAX_RECEIVER_QUEUE_SIZE);
        s.done();
        return build(s, () -> new SubscriptionConfig(queue));
    }

    /** Runs a record's own validation, naming the section when it refuses. */
    static <T> T build(Section s, Supplier<T> constructor) {
        try {
            return constructor.get();
        } catch (IllegalArgumentException e) {
            throw new ConfigException(s.path(), String.valueOf(e.getMessage()));
        }
    }
}
