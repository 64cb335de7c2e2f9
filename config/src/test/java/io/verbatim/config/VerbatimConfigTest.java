package io.verbatim.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.verbatim.model.proto.CompressionType;
import io.verbatim.pipeline.PartsCodec;
import io.verbatim.pipeline.StartAt;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class VerbatimConfigTest {
    private static final String BASE = """
            clusters:
              - name: a
              - name: b
            security:
              brokerToken: t
            """;

    @ParameterizedTest
    @ValueSource(strings = {"demo.yaml", "minimal.yaml", "autoscale.yaml"})
    void everySampleLoads(String name) {
        VerbatimConfig c = VerbatimConfig.parse(Samples.text(name), Map.of("VERBATIM_BROKER_TOKEN", "s3cret")::get);
        assertThat(c.clusters()).hasSizeGreaterThanOrEqualTo(2);
        assertThat(c.brokerToken()).isNotBlank();
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
        assertThat(c.replication().forCluster("us-east").localCluster()).isEqualTo("us-east");
        assertThat(c.exchange().antiEntropyInterval()).isEqualTo(Duration.ofSeconds(2));
        assertThat(c.exchange().maxBodyBytes()).isEqualTo(4 << 20);
        assertThat(c.slowPath().bytesPerSecond()).isEqualTo(50_000_000);
        assertThat(c.slowPath().weight(CompressionType.ZLIB)).isEqualTo(20.0);
        assertThat(c.caps().maxEntryBucketsPerSegment()).isEqualTo(1024);
        assertThat(c.autoScale().enabled()).isFalse();
        assertThat(c.metadataLog()).isEqualTo(MetadataLogConfig.defaults());
        assertThat(c.subscriptions().receiverQueueSize()).isEqualTo(1000);
        assertThat(c.brokerToken()).isEqualTo("demo-broker-token");
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
        "replication: {retry: {initial: 5s, max: 1s}}|replication.retry.max: 1s is below replication.retry.initial 5s|at least the first",
        "replication: {retry: {initial: 2m}}|replication.retry.max: 1m (the default) is below replication.retry.initial 2m|at least",
        "replication: {sendTimout: 5s}|replication.sendTimout: is not a known key|sendTimeout",
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
        assertThatThrownBy(() -> VerbatimConfig.parse("clusters: [{name: a}]\nsecurity: {brokerToken: t}"))
                .hasMessageContaining("clusters: 1 cluster(s) listed (expected at least 2");
        assertThatThrownBy(() -> VerbatimConfig.parse("clusters: [{name: a}, {name: a}]\nsecurity: {brokerToken: t}"))
                .hasMessageContaining("clusters[1].name: 'a' is listed twice");
        assertThatThrownBy(() -> VerbatimConfig.parse("clusters: [{name: a}, {name: 'b c'}]\nsecurity: {brokerToken: t}"))
                .hasMessageContaining("clusters[1].name: 'b c' is not a cluster name");
        assertThatThrownBy(() -> VerbatimConfig.parse("clusters: [{name: a}, {brokers: 2}]\nsecurity: {brokerToken: t}"))
                .hasMessageContaining("clusters[1].name: is missing");
    }

    @Test
    void missingCredentialsAreNamed() {
        assertThatThrownBy(() -> VerbatimConfig.parse("clusters: [{name: a}, {name: b}]"))
                .hasMessageContaining("security.brokerToken: is missing (expected the bearer token");
        assertThatThrownBy(() -> VerbatimConfig.parse(
                "clusters: [{name: a}, {name: b}]\nsecurity: {brokerToken: 'env:NOPE'}", Map.<String, String>of()::get))
                .hasMessageContaining("security.brokerToken: 'env:NOPE' names an environment variable that is not set");
    }

    @Test
    void malformedOrMissingFilesSayWhere(@TempDir Path dir) throws Exception {
        assertThatThrownBy(() -> VerbatimConfig.parse("clusters: [name: a\n  - b"))
                .hasMessageContaining("is not valid YAML at line");
        assertThatThrownBy(() -> VerbatimConfig.parse("")).hasMessageContaining("is empty");
        assertThatThrownBy(() -> VerbatimConfig.parse("clusters: 3\nsecurity: {brokerToken: t}"))
                .hasMessageContaining("clusters: 3 is not a list");
        assertThatThrownBy(() -> VerbatimConfig.load(dir.resolve("nope.yaml")))
                .hasMessageContaining("nope.yaml does not exist");
        Path file = dir.resolve("ok.yaml");
        Files.writeString(file, BASE + "network: {rtt: 80ms}\n");
        assertThat(VerbatimConfig.load(file).rtt()).isEqualTo(Duration.ofMillis(80));
    }
}
