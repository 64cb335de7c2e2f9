package io.verbatim.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.verbatim.model.Compression;
import io.verbatim.net.Authenticator;
import io.verbatim.net.CallClaims;
import io.verbatim.net.NetworkLimits;
import io.verbatim.net.Principal;
import io.verbatim.net.Role;
import io.verbatim.net.SignedCall;
import io.verbatim.net.SigningKey;
import io.verbatim.net.Token;
import io.verbatim.net.Verdict;
import io.verbatim.pipeline.PartsCodec;
import io.verbatim.pipeline.StartAt;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class VerbatimConfigTest {
    private static final String BASE = """
            clusters:
              - name: a
                token: ta
              - name: b
                token: tb
            """;

    @ParameterizedTest
    @ValueSource(strings = {"demo.yaml", "minimal.yaml", "autoscale.yaml", "nodes.yaml", "controllers.yaml", "pulsar.yaml",
        "brokers.yaml"})
    void everySampleLoads(String name) {
        VerbatimConfig c = VerbatimConfig.parse(Samples.text(name), Map.ofEntries(
                Map.entry("VERBATIM_EAST_TOKEN", "s3cret"), Map.entry("VERBATIM_WEST_TOKEN", "s3cret2"),
                Map.entry("VERBATIM_TOKEN_US_EAST", "e"), Map.entry("VERBATIM_TOKEN_EU_WEST", "w"),
                Map.entry("VERBATIM_TOKEN_AP_SOUTH", "s"), Map.entry("VERBATIM_ADMIN_TOKEN", "admin"),
                Map.entry("VERBATIM_SECRET_US_EAST_C1", "c1"), Map.entry("VERBATIM_SECRET_US_EAST_C2", "c2"),
                Map.entry("VERBATIM_SECRET_US_EAST_C3", "c3"), Map.entry("VERBATIM_SECRET_US_EAST_BROKERS", "b"),
                Map.entry("VERBATIM_SECRET_US_EAST_BROKER_1", "b1"), Map.entry("VERBATIM_SECRET_US_EAST_BROKER_2", "b2"),
                Map.entry("VERBATIM_SECRET_US_EAST_BROKER_3", "b3"), Map.entry("PULSAR_US_EAST_JWT", "eyJ.u.e"),
                Map.entry("PULSAR_EAST_JWT", "eyJ.e.j"))::get);
        assertThat(c.clusters()).hasSizeGreaterThanOrEqualTo(2);
        for (ClusterConfig cluster : c.clusters()) {
            assertThat(c.security().signingKey(cluster.name())).isNotNull();
            if (cluster.separateControllers()) {
                for (String member : c.security().members(cluster, cluster.brokerMembers().get(0).id()).keySet()) {
                    assertThat(c.security().members(cluster, member).get(member).signing()).isPresent();
                }
            }
        }
    }

    @Test
    void theDemoSampleBindsEveryKnob() {
        VerbatimConfig c = Samples.demo();
        assertThat(c.clusters()).extracting(ClusterConfig::name).containsExactly("us-east", "eu-west", "ap-south");
        assertThat(c.cluster("us-east").brokers()).isEqualTo(2);
        assertThat(c.topics().get(0)).isEqualTo(new TopicConfig("persistent://public/default/orders", 2, 4));
        assertThat(c.replication().startAt()).isEqualTo(StartAt.EARLIEST);
        assertThat(c.replication().messageTtl()).isZero();
        assertThat(c.replication().retry().initial()).isEqualTo(Duration.ofMillis(50));
        assertThat(c.replication().partsCodec()).isEqualTo(PartsCodec.SOURCE);
        assertThat(c.replication().maxInFlightBytes()).isEqualTo(64L << 20);
        assertThat(c.replication().brokerInFlightBytes()).isEqualTo(512L << 20);
        assertThat(c.replication().forCluster("us-east").maxInFlightBytes()).isEqualTo(64L << 20);
        assertThat(c.replication().forCluster("us-east").localCluster()).isEqualTo("us-east");
        assertThat(c.replication().pingInterval()).isEqualTo(Duration.ofSeconds(1));
        assertThat(c.replication().pingTimeout()).isEqualTo(Duration.ofSeconds(3));
        assertThat(c.replication().stallAfter()).isEqualTo(Duration.ofSeconds(5));
        assertThat(c.exchange().antiEntropyInterval()).isEqualTo(Duration.ofSeconds(2));
        assertThat(c.exchange().maxBodyBytes()).isEqualTo(4 << 20);
        assertThat(c.slowPath().bytesPerSecond()).isEqualTo(50_000_000);
        assertThat(c.slowPath().weight(Compression.ZLIB)).isEqualTo(20.0);
        assertThat(c.caps().maxEntryBucketsPerSegment()).isEqualTo(1024);
        assertThat(c.autoScale().enabled()).isFalse();
        assertThat(c.metadataLog()).isEqualTo(new MetadataLogConfig(true, 5, 100, Duration.ofSeconds(5)));
        assertThat(c.cluster("us-east").delegations()).isEqualTo(Map.of("b0", "c2", "b1", "c3"));
        assertThat(c.cluster("ap-south").delegations()).isEqualTo(Map.of("b0", "c3"));
        assertThat(c.subscriptions().receiverQueueSize()).isEqualTo(1000);
        assertThat(c.security().signingKey("eu-west").verifying())
                .isEqualTo(SigningKey.fromSecret("demo-eu-west-token").verifying());
        assertThat(c.security().signatureWindow()).isEqualTo(Duration.ofSeconds(60));
        assertThat(c.security().maxCallsPerWindow()).isEqualTo(100_000);
        assertThat(c.security().adminToken().orElseThrow().matches("demo-admin-token")).isTrue();
        assertThat(c.security().openStatus()).isTrue();
        assertThat(c.security().tls("us-east")).isEmpty();
        assertThat(c.network()).isEqualTo(NetworkLimits.defaults());
    }

    @Test
    void leftOutKeysTakePulsarsDefaults() {
        VerbatimConfig c = VerbatimConfig.parse(BASE);
        assertThat(c.autoScale()).isEqualTo(AutoScaleConfig.pulsarDefaults());
        assertThat(c.replication()).isEqualTo(ReplicationConfig.defaults());
        assertThat(c.subscriptions()).isEqualTo(SubscriptionConfig.defaults());
        assertThat(c.topics()).hasSize(1);
        assertThat(c.rtt()).isZero();
    }

    /** Each bad file, the key the error must name, and words of what was expected. */
    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "replication: {retry: {jitter: 1.5}}|replication.retry.jitter: 1.5 is out of range|within [0.0, 1.0]",
        "replication: {sendTimeout: soon}|replication.sendTimeout: 'soon' is not a duration|250ms, 30s",
        "replication: {startAt: yesterday}|replication.startAt: 'yesterday' is not one of|earliest, latest",
        "replication: {maxInFlight: 0}|replication.maxInFlight: 0 is out of range|[1, 1000000]",
        "replication: {maxInFlightBytes: 0}|replication.maxInFlightBytes: 0 is out of range|size within [1, 17179869184]",
        "replication: {maxInFlightBytes: lots}|replication.maxInFlightBytes: 'lots' is not a size|512KiB",
        "replication: {maxInFlightBytes: 17GiB}|replication.maxInFlightBytes: '17GiB' is out of range|[1, 17179869184]",
        "replication: {brokerInFlightBytes: 0}|replication.brokerInFlightBytes: 0 is out of range|[1, 68719476736]",
        "replication: {brokerInFlightBytes: 1.5}|replication.brokerInFlightBytes: 1.5 is not a whole number|bytes",
        "replication: {retry: {initial: 5s, max: 1s}}|replication.retry.max: 1s is below replication.retry.initial 5s|at least the first",
        "replication: {retry: {initial: 2m}}|replication.retry.max: 1m (the default) is below replication.retry.initial 2m|at least",
        "replication: {sendTimout: 5s}|replication.sendTimout: is not a known key|sendTimeout",
        "replication: {pingInterval: 1s, pingTimeout: 1s}|replication.pingTimeout: 1s is not above replication.pingInterval 1s|longer than the time between pings",
        "replication: {pingInterval: 5s}|replication.pingTimeout: 3s (the default) is not above replication.pingInterval 5s|longer",
        "replication: {pingInterval: 1ms}|replication.pingInterval: '1ms' is too short|at least 10ms",
        "replication: {pingTimeout: 2h}|replication.pingTimeout: '2h' is too long|at most 1h",
        "replication: {stallAfter: 0}|replication.stallAfter: 0 is too short|at least 1ms",
        "exchange: {antiEntropyInterval: 0}|exchange.antiEntropyInterval: 0 is too short|at least",
        "exchange: {maxBodyBytes: 12 parsecs}|exchange.maxBodyBytes: '12 parsecs' is not a size|50MB",
        "slowPath: {bytesPerSecond: 0}|slowPath.bytesPerSecond: 0 is out of range|size within",
        "slowPath: {codecWeights: {GZIP: 2}}|slowPath.codecWeights.GZIP: is not a codec|LZ4",
        "slowPath: {codecWeights: {LZ4: -1}}|slowPath.codecWeights.LZ4: -1 is not a weight|positive",
        "caps: {maxEntryBucketsPerSegment: 65536}|caps.maxEntryBucketsPerSegment: 65536 is out of range|32768",
        "autoScale: {split: {msgRateIn: 500}}|autoScale.split.msgRateIn: 500.0 is not above autoScale.merge.msgRateIn 1000.0|above the matching merge",
        "autoScale: {maxDagDepth: 0}|autoScale.maxDagDepth: 0 is out of range|[1, 65536]",
        "autoScale: {enabled: maybe}|autoScale.enabled: 'maybe' is not a boolean|true or false",
        "metadataLog: {maxListenersPerFollower: -2}|metadataLog.maxListenersPerFollower: -2 is out of range|[1, 1024]",
        "subscriptions: {receiverQueueSize: 0}|subscriptions.receiverQueueSize: 0 is out of range|[1, 1000000]",
        "subscriptions: {receiverQueueSize: -5}|subscriptions.receiverQueueSize: -5 is out of range|[1, 1000000]",
        "subscriptions: {receiverQueueSize: 2000000000}|subscriptions.receiverQueueSize: 2000000000 is out of range|[1, 1000000]",
        "subscriptions: {receiverQueueSize: lots}|subscriptions.receiverQueueSize: 'lots' is not a whole number|[1, 1000000]",
        "subscriptions: {receiverQueue: 10}|subscriptions.receiverQueue: is not a known key|receiverQueueSize",
        "topics: [{name: t, initialSegments: 100}]|topics[0].initialSegments: 100 is out of range|[1, 64]",
        "network: {rtt: -5ms}|network.rtt: '-5ms' is not a duration|30s",
        "colour: blue|colour: is not a known key|clusters",
    })
    void badValuesAreRefusedNamingKeyValueAndExpectation(String extra, String named, String expected) {
        assertThatThrownBy(() -> VerbatimConfig.parse(BASE + extra)).isInstanceOf(ConfigException.class)
                .hasMessageContaining(named).hasMessageContaining(expected);
    }

    /** What a subscription opened with its own value is checked by: the same range, the same words. */
    @Test
    void aReceiverQueueSizeOutOfRangeIsRefusedByTheRecordNamingKeyValueAndRange() {
        for (int bad : new int[] {0, -1, SubscriptionConfig.MAX_RECEIVER_QUEUE_SIZE + 1, Integer.MAX_VALUE}) {
            assertThatThrownBy(() -> SubscriptionConfig.defaults().withReceiverQueueSize(bad))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessage("receiverQueueSize: " + bad + " is out of range (expected an integer within "
                            + "[1, 1000000]: the entries one consumer's queue holds)");
        }
        assertThat(SubscriptionConfig.defaults().withReceiverQueueSize(1).receiverQueueSize()).isEqualTo(1);
    }

    @Test
    void clustersMustBeTwoOrMoreWithUniqueNames() {
        assertThatThrownBy(() -> VerbatimConfig.parse("clusters: [{name: a, token: x}]\nsecurity: {}"))
                .hasMessageContaining("clusters: 1 cluster(s) listed (expected at least 2");
        assertThatThrownBy(() -> VerbatimConfig.parse("clusters: [{name: a, token: x}, {name: a, token: y}]\nsecurity: {}"))
                .hasMessageContaining("clusters[1].name: 'a' is listed twice");
        assertThatThrownBy(() -> VerbatimConfig.parse("clusters: [{name: a, token: x}, {name: 'b c', token: y}]\nsecurity: {}"))
                .hasMessageContaining("clusters[1].name: 'b c' is not a cluster name");
        assertThatThrownBy(() -> VerbatimConfig.parse("clusters: [{name: a, token: x}, {brokers: 2}]\nsecurity: {}"))
                .hasMessageContaining("clusters[1].name: is missing");
    }

    @Test
    void missingCredentialsAreNamed() {
        assertThatThrownBy(() -> VerbatimConfig.parse("clusters: [{name: a, token: x}, {name: b}]"))
                .hasMessageContaining("clusters[1].token: is missing (expected the cluster's secret");
        assertThatThrownBy(() -> VerbatimConfig.parse(
                "clusters: [{name: a, token: x}, {name: b, token: 'env:NOPE'}]", Map.<String, String>of()::get))
                .hasMessageContaining("clusters[1].token: 'env:NOPE' names an environment variable that is not set");
        assertThatThrownBy(() -> VerbatimConfig.parse(BASE + "security: {adminToken: 'env:NOPE'}",
                Map.<String, String>of()::get))
                .hasMessageContaining("security.adminToken: 'env:NOPE' names an environment variable that is not set");
    }

    @Test
    void theSharedBrokerTokenIsReplacedByPerClusterTokens() {
        assertThatThrownBy(() -> VerbatimConfig.parse(BASE + "security: {brokerToken: t}"))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("security.brokerToken: is replaced by per-cluster tokens")
                .hasMessageContaining("clusters[].token");
    }

    @Test
    void everyClusterHasATokenOfItsOwnAndTheAdminOneToo() {
        assertThatThrownBy(() -> VerbatimConfig.parse("clusters: [{name: a, token: same}, {name: b, token: same}]"))
                .hasMessageContaining("clusters[1].token: is the same token as clusters[0].token");
        String verifying = SigningKey.fromSecret("same").verifying().form();
        assertThatThrownBy(() -> VerbatimConfig.parse("clusters: [{name: a, token: same}, {name: b, token: '"
                + verifying + "'}]")).as("the same token in another form")
                .hasMessageContaining("clusters[1].token: is the same token as clusters[0].token");
        assertThatThrownBy(() -> VerbatimConfig.parse(BASE + "security: {adminToken: tb}"))
                .hasMessageContaining("security.adminToken: is the same token as clusters[1].token");
        assertThatThrownBy(() -> VerbatimConfig.parse("clusters: [{name: a, token: x}, {name: b, token: '"
                + SigningKey.fromSecret("y").verifying().form() + "'}]\nsecurity: {adminToken: y}"))
                .as("the admin token against a verifying key")
                .hasMessageContaining("security.adminToken: is the same token as clusters[1].token");
        assertThatThrownBy(() -> VerbatimConfig.parse("clusters: [{name: a, token: x}, {name: b, token: 'ed25519:12'}]"))
                .hasMessageContaining("clusters[1].token: 'ed25519:12' is not a verifying key");
    }

    @Test
    void aDigestOfAClusterTokenIsRefusedSayingHowToGetItsVerifyingKey() {
        String digest = Token.clear("y").digestForm();
        assertThatThrownBy(() -> VerbatimConfig.parse("clusters: [{name: a, token: x}, {name: b, token: '" + digest + "'}]"))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("clusters[1].token: 'sha256:")
                .hasMessageContaining("is a SHA-256 digest, which cannot check a cluster's signatures")
                .hasMessageContaining("ed25519:<base64>, which `verbatim key public` prints from the secret");
    }

    @Test
    void aTokenWithWhiteSpaceAtAnEndIsRefusedItCouldNeverBePresented() {
        assertThatThrownBy(() -> VerbatimConfig.parse(BASE + "security: {adminToken: 'admin '}"))
                .hasMessageContaining("security.adminToken: has white space at its start or end");
        assertThatThrownBy(() -> VerbatimConfig.parse("clusters: [{name: a, token: x}, {name: b, token: y}]\n"
                + "security: {adminToken: env:ADMIN}", Map.of("ADMIN", "admin\n")::get))
                .hasMessageContaining("security.adminToken: has white space at its start or end (from env:ADMIN)");
        assertThatThrownBy(() -> VerbatimConfig.parse("clusters: [{name: a, token: ' x'}, {name: b, token: y}]"))
                .hasMessageContaining("clusters[0].token: has white space at its start or end");
    }

    @Test
    void aNodeVerifiesOtherClustersByTheirKeysAndSignsWithItsOwnSecret() {
        SigningKey b = SigningKey.fromSecret("y");
        VerbatimConfig c = VerbatimConfig.parse("clusters: [{name: a, token: x}, {name: b, token: '"
                + b.verifying().form() + "'}]\nsecurity: {adminToken: '" + Token.clear("z").digestForm()
                + "', signatureWindow: 5s}");
        assertThat(c.security().signingKey("a").verifying()).isEqualTo(SigningKey.fromSecret("x").verifying());
        assertThatThrownBy(() -> c.security().signingKey("b")).isInstanceOf(ConfigException.class)
                .hasMessageContaining("clusters[1].token: is a verifying key, but cluster b signs its calls");
        Authenticator auth = c.security().authenticator("a");
        long now = 1_700_000_000_000L;
        String signed = SignedCall.authorization(new CallClaims("b", "a", now - 4_000,
                "00112233445566778899aabbccddeeff", "POST", "/x"), b);
        assertThat(auth.check(Role.BROKER, new Authenticator.Call("POST", "/x", Optional.of(signed), Optional.empty()),
                now, "the exchange")).isEqualTo(new Verdict.Allowed(new Principal.Cluster("b")));
        String late = SignedCall.authorization(new CallClaims("b", "a", now - 6_000,
                "00112233445566778899aabbccddeeee", "POST", "/x"), b);
        assertThat(auth.check(Role.BROKER, new Authenticator.Call("POST", "/x", Optional.of(late), Optional.empty()),
                now, "the exchange")).as("security.signatureWindow: 5s").isInstanceOf(Verdict.Refused.class);
        assertThat(auth.check(Role.ADMIN, new Authenticator.Call("POST", "/x", Optional.of("Bearer z"), Optional.empty()),
                now, "admin")).isEqualTo(new Verdict.Allowed(new Principal.Admin()));
        assertThat(auth.check(Role.ADMIN, new Authenticator.Call("POST", "/x", Optional.of("Bearer x"), Optional.empty()),
                now, "admin")).isInstanceOf(Verdict.Refused.class);
    }

    @Test
    void theSignatureWindowAndTheReplayBoundAreReadWithinTheirRanges() {
        assertThat(VerbatimConfig.parse(BASE + "security: {signatureWindow: 2m, maxCallsPerWindow: 5000}").security())
                .satisfies(s -> {
                    assertThat(s.signatureWindow()).isEqualTo(Duration.ofMinutes(2));
                    assertThat(s.maxCallsPerWindow()).isEqualTo(5000);
                });
        assertThatThrownBy(() -> VerbatimConfig.parse(BASE + "security: {signatureWindow: 500ms}"))
                .hasMessageContaining("security.signatureWindow: '500ms' is too short (expected at least 1s and at most 10m)");
        assertThatThrownBy(() -> VerbatimConfig.parse(BASE + "security: {signatureWindow: 1h}"))
                .hasMessageContaining("security.signatureWindow: '1h' is too long");
        assertThatThrownBy(() -> VerbatimConfig.parse(BASE + "security: {maxCallsPerWindow: 10}"))
                .hasMessageContaining("security.maxCallsPerWindow: 10 is out of range");
    }

    @Test
    void networkLimitsAreReadWithinTheirRanges() {
        VerbatimConfig c = VerbatimConfig.parse(BASE + """
                network: {idleTimeout: 5s, requestTimeout: 2s, firstRequestTimeout: 1s, maxConnectionsPerPort: 10,
                          maxConnectionsPerAddress: 3, maxHeaderBytes: 4KiB, maxFrameBytes: 1MiB}
                """);
        assertThat(c.network()).isEqualTo(new NetworkLimits(Duration.ofSeconds(5), Duration.ofSeconds(2),
                Duration.ofSeconds(1), 10, 3, 4096, 1 << 20));
        assertThatThrownBy(() -> VerbatimConfig.parse(BASE + "network: {firstRequestTimeout: 50ms}"))
                .hasMessageContaining("network.firstRequestTimeout: '50ms' is too short (expected at least 100ms and at most 1h)");
        assertThatThrownBy(() -> VerbatimConfig.parse(BASE + "network: {maxConnectionsPerAddress: 0}"))
                .hasMessageContaining("network.maxConnectionsPerAddress: 0 is out of range");
        assertThatThrownBy(() -> VerbatimConfig.parse(BASE + "network: {idleTimeout: 10ms}"))
                .hasMessageContaining("network.idleTimeout: '10ms' is too short (expected at least 100ms and at most 1h)");
        assertThatThrownBy(() -> VerbatimConfig.parse(BASE + "network: {requestTimeout: 2h}"))
                .hasMessageContaining("network.requestTimeout: '2h' is too long (expected at least 100ms and at most 1h)");
        assertThatThrownBy(() -> VerbatimConfig.parse(BASE + "network: {maxConnectionsPerPort: 0}"))
                .hasMessageContaining("network.maxConnectionsPerPort: 0 is out of range");
        assertThatThrownBy(() -> VerbatimConfig.parse(BASE + "network: {maxHeaderBytes: 100}"))
                .hasMessageContaining("network.maxHeaderBytes: 100 is out of range");
        assertThatThrownBy(() -> VerbatimConfig.parse(BASE + "network: {maxFrameBytes: 1GiB}"))
                .hasMessageContaining("network.maxFrameBytes: '1GiB' is out of range");
    }

    @Test
    void missingTlsFilesAreNamedWithTheirKey(@TempDir Path dir) throws Exception {
        assertThatThrownBy(() -> VerbatimConfig.parse(BASE + "security: {tls: {enabled: true, certificateChain: "
                + dir.resolve("none.pem") + ", privateKey: x, trustedCertificates: y}}"))
                .hasMessageContaining("security.tls.certificateChain: file " + dir.resolve("none.pem")
                        + " does not exist");
        Path empty = Files.writeString(dir.resolve("empty.pem"), "");
        assertThatThrownBy(() -> VerbatimConfig.parse(BASE + "security: {tls: {enabled: true, certificateChain: "
                + empty + ", privateKey: " + empty + ", trustedCertificates: " + empty + "}}"))
                .hasMessageContaining("security.tls: TLS files " + empty + " and " + empty + " cannot be used");
        assertThatThrownBy(() -> VerbatimConfig.parse("clusters: [{name: a, token: x, tls: {certificateChain: "
                + dir.resolve("a.pem") + ", privateKey: " + empty + "}}, {name: b, token: y}]\n"
                + "security: {tls: {enabled: true, certificateChain: " + empty + ", privateKey: " + empty
                + ", trustedCertificates: " + empty + "}}"))
                .hasMessageContaining("clusters[0].tls.certificateChain: file " + dir.resolve("a.pem") + " does not exist");
        assertThat(VerbatimConfig.parse(BASE + "security: {tls: {enabled: false, certificateChain: nowhere.pem}}")
                .security().tls("a")).as("off: not checked").isEmpty();
        assertThat(VerbatimConfig.parse("clusters: [{name: a, token: x, tls: {certificateChain: nowhere.pem, "
                + "privateKey: nowhere.key}}, {name: b, token: y}]").security().tls("a")).as("off: not checked").isEmpty();
    }

    /** {@code tls.clientAuth: maybe} was accepted while TLS was off, and would have stopped every node once it was on. */
    @Test
    void tlsValuesAreCheckedWhetherOrNotTlsIsOn() {
        for (String enabled : new String[] {"true", "false"}) {
            assertThatThrownBy(() -> VerbatimConfig.parse(BASE + "security: {tls: {enabled: " + enabled
                    + ", clientAuth: maybe}}")).isInstanceOf(ConfigException.class)
                    .hasMessage("security.tls.clientAuth: 'maybe' is not one of [none, optional, require]");
        }
        assertThatThrownBy(() -> VerbatimConfig.parse(BASE + "security: {tls: {certificateChain: [a, b]}}"))
                .hasMessageContaining("security.tls.certificateChain: ").hasMessageContaining("is not a usable text");
        assertThatThrownBy(() -> VerbatimConfig.parse(BASE + "security: {tls: {enabled: yes please}}"))
                .hasMessageContaining("security.tls.enabled: ");
        assertThat(VerbatimConfig.parse(BASE + "security: {tls: {clientAuth: OPTIONAL, trustedCertificates: ca.pem}}")
                .security().tls("a")).as("off, and well formed").isEmpty();
    }

    /** A key given twice in {@code clusters[].delegations} is refused with its line, not taken at its last value. */
    @Test
    void aListenerGivenTwiceInTheYamlsDelegationsIsRefused() {
        assertThatThrownBy(() -> VerbatimConfig.parse("""
                clusters:
                  - name: a
                    token: x
                    controllers: [{id: c1, adminPort: 8101, raftPort: 7101}, {id: c2, adminPort: 8102, raftPort: 7102},
                                  {id: c3, adminPort: 8103, raftPort: 7103}]
                    delegations:
                      b0: c2
                      b0: c3
                  - {name: b, token: y}
                metadataLog: {enabled: true}
                """)).isInstanceOf(ConfigException.class)
                .hasMessageContaining("clusters[0].delegations.b0: is given twice, again at line 8");
    }

    @Test
    void malformedOrMissingFilesSayWhere(@TempDir Path dir) throws Exception {
        assertThatThrownBy(() -> VerbatimConfig.parse("clusters: [name: a\n  - b"))
                .hasMessageContaining("is not valid YAML at line");
        assertThatThrownBy(() -> VerbatimConfig.parse("")).hasMessageContaining("is empty");
        assertThatThrownBy(() -> VerbatimConfig.parse("clusters: 3\nsecurity: {}"))
                .hasMessageContaining("clusters: 3 is not a list");
        assertThatThrownBy(() -> VerbatimConfig.load(dir.resolve("nope.yaml")))
                .hasMessageContaining("nope.yaml does not exist");
        Path file = dir.resolve("ok.yaml");
        Files.writeString(file, BASE + "network: {rtt: 80ms}\n");
        assertThat(VerbatimConfig.load(file).rtt()).isEqualTo(Duration.ofMillis(80));
    }
}
