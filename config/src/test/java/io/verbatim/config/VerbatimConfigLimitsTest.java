package io.verbatim.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Issue 11: every value has a range, and a value outside it is refused at load naming key, value and range. */
class VerbatimConfigLimitsTest {
    private static final String BASE = "clusters:\n  - name: a\n    token: ta\n  - name: b\n    token: tb\n";

    /** {@code extra} joins a file with two clusters, each with its token (or replaces the clusters when it names some). */
    private static String file(String extra) {
        return (extra.startsWith("clusters:") ? "" : BASE) + withTokens(extra.replace("\\n", "\n")) + "\n";
    }

    /** Every cluster of a {@code clusters: [...]} line gets a token of its own (the tests are about other values). */
    static String withTokens(String yaml) {
        StringBuilder out = new StringBuilder();
        int n = 0;
        for (String line : yaml.split("\n", -1)) {
            if (line.startsWith("clusters:")) {
                StringBuilder l = new StringBuilder();
                int from = 0;
                for (int at = line.indexOf("{name: "); at >= 0; at = line.indexOf("{name: ", at + 1)) {
                    l.append(line, from, at).append("{token: t").append(n++).append(", ");
                    from = at + 1;
                }
                line = l.append(line.substring(from)).toString();
            }
            out.append(out.length() == 0 ? "" : "\n").append(line);
        }
        return out.toString();
    }

    /** Each bad value: the file's extra lines, the full key, the value as written, words of what was expected. */
    @ParameterizedTest(name = "{1}: {2}")
    @CsvSource(delimiter = '|', quoteCharacter = '"', value = {
        "replication: {messageTtl: 3651d}|replication.messageTtl|'3651d' is too long|at most 3650d",
        "replication: {messageTtl: '-PT1S'}|replication.messageTtl|'-PT1S' is too short|at least 0ms",
        "replication: {maxInFlight: 1000001}|replication.maxInFlight|1000001 is out of range|[1, 1000000]",
        "replication: {sendTimeout: P1000000D}|replication.sendTimeout|'P1000000D' is too long|at least 1ms and at most 1h",
        "replication: {sendTimeout: 99999999999999999999d}|replication.sendTimeout|'99999999999999999999d' is too long|at most 1h",
        "replication: {sendTimeout: PT99999999999999999999S}|replication.sendTimeout|'PT99999999999999999999S' is too long|at most 1h",
        "replication: {sendTimeout: 2h}|replication.sendTimeout|'2h' is too long|at most 1h",
        "replication: {sendTimeout: 0.0000000001s}|replication.sendTimeout|'0.0000000001s' is finer than a nanosecond|whole nanoseconds",
        "replication: {retry: {initial: 2h, max: 3h}}|replication.retry.initial|'2h' is too long|at most 1h",
        "replication: {retry: {max: PT1000000H}}|replication.retry.max|'PT1000000H' is too long|at most 1h",
        "replication: {sealWait: 90m}|replication.sealWait|'90m' is too long|at most 1h",
        "exchange: {antiEntropyInterval: 2d}|exchange.antiEntropyInterval|'2d' is too long|at most 1d",
        "exchange: {retry: {max: 1000000d}}|exchange.retry.max|'1000000d' is too long|at most 1h",
        "exchange: {requestTimeout: 61m}|exchange.requestTimeout|'61m' is too long|at most 1h",
        "exchange: {maxBodyBytes: 1GiB}|exchange.maxBodyBytes|'1GiB' is out of range|[1024, 268435456] bytes",
        "exchange: {maxBodyBytes: 1024.5}|exchange.maxBodyBytes|1024.5 is not a whole number of bytes|[1024, 268435456]",
        "exchange: {maxBodyBytes: 99999999999999999999999GiB}|exchange.maxBodyBytes|'99999999999999999999999GiB' is out of range|[1024, 268435456]",
        "slowPath: {bytesPerSecond: 2000GB}|slowPath.bytesPerSecond|'2000GB' is out of range|[1, 1000000000000] bytes",
        "slowPath: {burstBytes: 1.5}|slowPath.burstBytes|1.5 is not a whole number of bytes|[1, 1000000000000]",
        "slowPath: {maxConcurrentRebatches: 1025}|slowPath.maxConcurrentRebatches|1025 is out of range|[1, 1024]",
        "slowPath: {codecWeights: {ZLIB: 1000000}}|slowPath.codecWeights.ZLIB|1000000 is not a weight|[0.001, 1000.0]",
        "slowPath: {codecWeights: {LZ4: 0.0000001}}|slowPath.codecWeights.LZ4|1.0E-7 is not a weight|[0.001, 1000.0]",
        "caps: {maxSegments: 65537}|caps.maxSegments|65537 is out of range|[1, 65536]",
        "caps: {maxEntryBucketsPerSegment: 0}|caps.maxEntryBucketsPerSegment|0 is out of range|[1, 32768]",
        "clusters: [{name: a, caps: {maxSegments: 0}}, {name: b}]|clusters[0].caps.maxSegments|0 is out of range|[1, 65536]",
        "clusters: [{name: a}, {name: b, brokers: 17}]|clusters[1].brokers|17 is out of range|[1, 16]",
        "clusters: [{name: a}, {name: b, adminPort: 65536}]|clusters[1].adminPort|65536 is out of range|[0, 65535]",
        "clusters: [{name: a}, {name: 'b/c'}]|clusters[1].name|'b/c' is not a cluster name|at most 64 characters",
        "clusters: [{name: a}, {name: b, name: c}]|clusters[1].name|is given twice, again at line 1|each key once",
        "topics: [{name: 'persistent://a/b'}]|topics[0].name|'persistent://a/b' is not a topic name|persistent://tenant/namespace/topic",
        "topics: [{name: 'persistent://p/d/a b'}]|topics[0].name|'persistent://p/d/a b' is not a topic name|at most 255 characters",
        "topics: [{name: 'non-persistent://p/d/t'}]|topics[0].name|'non-persistent://p/d/t' is not a topic name|persistent://tenant/namespace/topic",
        "topics: [{name: t}, {name: u}, {name: t}]|topics[2].name|'t' is listed twice|as topics[0].name 't'",
        "topics: [{name: t}, {name: 'persistent://public/default/t'}]|topics[1].name|'persistent://public/default/t' is listed twice|unique topic names",
        "topics: [{name: t, bucketBudget: 32769}]|topics[0].bucketBudget|32769 is out of range|[1, 32768]",
        "autoScale: {interval: 5ms}|autoScale.interval|'5ms' is too short|at least 10ms and at most 1d",
        "autoScale: {interval: 25h}|autoScale.interval|'25h' is too long|at most 1d",
        "autoScale: {splitCooldown: 8d}|autoScale.splitCooldown|'8d' is too long|at most 1d",
        "autoScale: {rebucketCooldown: 2d}|autoScale.rebucketCooldown|'2d' is too long|at most 1d",
        "autoScale: {mergeCooldown: 2d}|autoScale.mergeCooldown|'2d' is too long|at most 1d",
        "autoScale: {mergeWindow: 2d}|autoScale.mergeWindow|'2d' is too long|at most 1d",
        "autoScale: {minSegments: 65537}|autoScale.minSegments|65537 is out of range|[1, 65536]",
        "autoScale: {splitVsRebucketMinMsgRateIn: 1e10}|autoScale.splitVsRebucketMinMsgRateIn|1.0E10 is out of range|[0.0, 1.0E9]",
        "autoScale: {split: {bytesRateIn: 1e13}}|autoScale.split.bytesRateIn|1.0E13 is out of range|[0.0, 1.0E12]",
        "autoScale: {merge: {msgRateOut: -1}}|autoScale.merge.msgRateOut|-1 is out of range|[0.0, 1.0E9]",
        "metadataLog: {followerLagThreshold: 1000001}|metadataLog.followerLagThreshold|1000001 is out of range|[1, 1000000]",
        "metadataLog: {reassignmentInterval: 2d}|metadataLog.reassignmentInterval|'2d' is too long|at most 1d",
        "subscriptions: {receiverQueueSize: 99999999999999999999}|subscriptions.receiverQueueSize|99999999999999999999 is out of range|[1, 1000000]",
        "network: {rtt: 61s}|network.rtt|'61s' is too long|at least 0ms and at most 1m",
        "network: {rtt: 99999999999d}|network.rtt|'99999999999d' is too long|at most 1m",
        "storage: {gcInterval: 1ms}|storage.gcInterval|'1ms' is too short|at least 10ms",
        "storage: {gcInterval: 2d}|storage.gcInterval|'2d' is too long|at most 1d",
        "replication: {sealWait: 5s}\\nreplication: {sendTimeout: 5s}|replication|is given twice, again at line 7|each key once in its mapping",
        "replication: {retry: {jitter: 0.1, jitter: 0.2}}|replication.retry.jitter|is given twice, again at line 6|each key once",
        "slowPath: {codecWeights: {LZ4: 1, LZ4: 2}}|slowPath.codecWeights.LZ4|is given twice|each key once",
    })
    void aBadValueIsRefusedNamingTheFullKeyTheValueAndTheRange(String extra, String key, String value,
            String expected) {
        assertThatThrownBy(() -> VerbatimConfig.parse(file(extra))).isInstanceOf(ConfigException.class)
                .hasMessageStartingWith(key + ": " + value).hasMessageContaining("expected")
                .hasMessageContaining(expected)
                .satisfies(e -> assertThat(((ConfigException) e).key()).isEqualTo(key));
    }

    @Test
    void theBoundsThemselvesAreAccepted() {
        VerbatimConfig c = VerbatimConfig.parse(file("""
                clusters: [{name: %s}, {name: b}]
                topics: [{name: 'persistent://%s/d/t', bucketBudget: 32768}]
                replication: {messageTtl: 3650d, sendTimeout: 1h, sealWait: PT1H, retry: {initial: 1ms, max: 1h},
                  maxInFlightBytes: 16GiB, brokerInFlightBytes: 64GiB}
                exchange: {antiEntropyInterval: 1d, requestTimeout: 1h, maxBodyBytes: 256MiB}
                slowPath: {bytesPerSecond: 1000GB, burstBytes: 1000000000000, codecWeights: {ZLIB: 1000, LZ4: 0.001}}
                network: {rtt: 1m}
                storage: {gcInterval: 10ms}
                metadataLog: {followerLagThreshold: 1000000, reassignmentInterval: 1d}
                """.formatted("c".repeat(64), "p".repeat(255 - "persistent:///d/t".length()))));
        assertThat(c.clusters().get(0).name()).hasSize(64);
        assertThat(c.topics().get(0).name()).hasSize(255);
        assertThat(c.replication().messageTtl()).isEqualTo(Duration.ofDays(3650));
        assertThat(c.replication().sendTimeout()).isEqualTo(Duration.ofHours(1));
        assertThat(c.replication().forCluster("b").maxInFlightBytes()).isEqualTo(16L << 30);
        assertThat(c.replication().brokerInFlightBytes()).isEqualTo(64L << 30);
        assertThat(c.exchange().maxBodyBytes()).isEqualTo(256 << 20);
        assertThat(c.slowPath().bytesPerSecond()).isEqualTo(1_000_000_000_000L);
        assertThat(c.rtt()).isEqualTo(Duration.ofMinutes(1));
    }

    @Test
    void theListsHaveAMaximumToo() {
        String clusters = "clusters: [" + "{name: c}, ".repeat(64) + "{name: d}]";
        assertThatThrownBy(() -> VerbatimConfig.parse(withTokens(clusters))).hasMessage("clusters: 65 cluster(s) listed "
                + "(expected at least 2: replication needs a remote; at most 64)");
        String topics = "topics: [" + "{name: t}, ".repeat(10_000) + "{name: u}]";
        assertThatThrownBy(() -> VerbatimConfig.parse(BASE + topics))
                .hasMessage("topics: 10001 topics listed (expected at most 10000)");
    }

    /** 10,000 characters made URLs too long and replication never started. */
    @Test
    void aClusterNameLongerThan64CharactersIsRefusedAtLoad() {
        String name = "c".repeat(10_000);
        assertThatThrownBy(() -> VerbatimConfig.parse(withTokens("clusters: [{name: a}, {name: " + name + "}]")))
                .isInstanceOf(ConfigException.class)
                .hasMessageStartingWith("clusters[1].name: '" + "c".repeat(80) + "...' (10000 characters) is too long");
        assertThatThrownBy(() -> VerbatimConfig.parse(withTokens("clusters: [{name: a}, {name: " + name.substring(0, 65)
                + "}]"))).hasMessage("clusters[1].name: '" + name.substring(0, 65) + "' is not a cluster name (expected "
                        + "letters, digits, '.', '_', '-', starting with a letter or digit, at most 64 characters)");
        assertThatThrownBy(() -> new ClusterConfig("c".repeat(65), 1)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("at most 64 characters");
    }

    @Test
    void aTopicNameLongerThan255CharactersIsRefused() {
        String name = "persistent://public/default/" + "t".repeat(228);
        assertThat(name).hasSize(256);
        assertThatThrownBy(() -> VerbatimConfig.parse(BASE + "topics: [{name: '" + name + "'}]"))
                .hasMessageStartingWith("topics[0].name: '" + name.substring(0, 80) + "...' (256 characters) is not a "
                        + "topic name");
        assertThatThrownBy(() -> new TopicConfig(name, 1, 4)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("is not a topic name");
    }

    @Test
    void aTextValueIsOneLineOfPrintableCharactersAndNotTooLong() {
        assertThatThrownBy(() -> VerbatimConfig.parse(BASE + "security: {adminToken: \"t\\n\"}"))
                .hasMessageStartingWith("security.adminToken: 't\n' holds a control character or a line break");
        assertThatThrownBy(() -> VerbatimConfig.parse(BASE + "security: {adminToken: " + "t".repeat(4097) + "}"))
                .hasMessageStartingWith("security.adminToken: 'ttt")
                .hasMessageContaining("(4097 characters) is too long (expected at most 4096 characters)");
    }

    /** Records built in code (not from a file) keep to the same ranges. */
    @Test
    void theRecordsOfThisModuleRefuseWhatTheLoaderRefuses() {
        assertThatThrownBy(() -> new StorageConfig(false, true, Duration.ofDays(2)))
                .isInstanceOf(IllegalArgumentException.class).hasMessage("gcInterval is 2d: must be within 10ms..1d");
        assertThatThrownBy(() -> new MetadataLogConfig(false, 5, 1_000_001, Duration.ofSeconds(30)))
                .hasMessage("followerLagThreshold is 1000001: must be within 1..1000000");
        assertThatThrownBy(() -> new MetadataLogConfig(false, 5, 100, null))
                .hasMessage("reassignmentInterval is null: must be within 1ms..1d");
        AutoScaleConfig d = AutoScaleConfig.pulsarDefaults();
        assertThatThrownBy(() -> new AutoScaleConfig(true, Duration.ofDays(1000), 1, 10, d.splitCooldown(),
                d.rebucketCooldown(), d.mergeCooldown(), d.mergeWindow(), 1000, d.split(), d.merge()))
                .hasMessage("interval is 1000d: must be within 10ms..1d");
        assertThatThrownBy(() -> new TopicConfig("t", 0, 4)).hasMessage("initialSegments is 0: must be within 1..65536");
    }

    /** The round trip set programmatically (the CLI's --rtt) is held to the same range as the file's. */
    @Test
    void aHugeRoundTripIsRefusedNamingTheKeyWhereverItComesFrom() {
        VerbatimConfig c = VerbatimConfig.parse(BASE);
        assertThatThrownBy(() -> c.withRtt(Duration.ofDays(1000))).isInstanceOf(ConfigException.class)
                .hasMessage("network.rtt: 1000d is out of range (expected a duration within [0ms, 1m])");
        assertThat(c.withRtt(Duration.ofMillis(80)).rtt()).isEqualTo(Duration.ofMillis(80));
    }

    /**
     * SnakeYAML's cost is the square of the longest line (it copies what it holds of a token every 1024 characters
     * it reads): a 4 MiB comment took 13 s and then failed as invalid YAML. Refused by its size before parsing
     * (otherwise the message would be SnakeYAML's).
     */
    @Test
    void aFileAboveOneMebibyteIsRefusedBeforeItIsParsed(@TempDir Path dir) throws Exception {
        String comment = "# " + "x".repeat(4 << 20) + "\n";
        assertThatThrownBy(() -> VerbatimConfig.parse(comment + BASE)).isInstanceOf(ConfigException.class)
                .hasMessage("(root): is " + (comment + BASE).length() + " characters long (expected at most 1048576 "
                        + "characters: a configuration, not data)");
        Path file = dir.resolve("big.yaml");
        Files.writeString(file, comment + BASE);
        assertThatThrownBy(() -> VerbatimConfig.load(file))
                .hasMessage("(root): file " + file + " is more than 1048576 bytes long (expected at most 1048576 "
                        + "bytes: a configuration, not data)");
        assertThat(VerbatimConfig.parse("# " + "x".repeat(1000) + "\n" + BASE).clusters()).hasSize(2);
    }

    /** {@code --config /dev/zero} ended in OutOfMemoryError: the size the file system reports (0) was trusted. */
    @Test
    void aDeviceOrAFifoIsReadOnlyUpToTheLimit(@TempDir Path dir) throws Exception {
        Path zero = Path.of("/dev/zero");
        assumeTrue(Files.isReadable(zero), "a Unix /dev/zero");
        assertThat(Files.size(zero)).as("what the file system says").isZero();
        assertThatThrownBy(() -> VerbatimConfig.load(zero)).isInstanceOf(ConfigException.class)
                .hasMessage("(root): file /dev/zero is more than 1048576 bytes long (expected at most 1048576 bytes: a "
                        + "configuration, not data)");

        Path fifo = dir.resolve("config.fifo");
        assumeTrue(new ProcessBuilder("mkfifo", fifo.toString()).start().waitFor() == 0, "mkfifo");
        Thread writer = new Thread(() -> {
            try (var out = Files.newOutputStream(fifo)) {
                byte[] line = "# an endless comment\n".getBytes(StandardCharsets.US_ASCII);
                while (true) {
                    out.write(line);
                }
            } catch (IOException readerGone) {
                // the loader stopped reading: a broken pipe
            }
        });
        writer.start();
        assertThatThrownBy(() -> VerbatimConfig.load(fifo)).hasMessageContaining("file " + fifo + " is more than 1048576 "
                + "bytes long");
        writer.join(10_000);
        assertThat(writer.isAlive()).isFalse();
    }

    @Test
    void aFileThatIsNotUtf8IsRefusedNamingIt(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("latin1.yaml");
        Files.write(file, (BASE + "# caf\u00e9\n").getBytes(StandardCharsets.ISO_8859_1));
        assertThatThrownBy(() -> VerbatimConfig.load(file)).hasMessageContaining("file " + file + " is not UTF-8 text");
        assertThatThrownBy(() -> VerbatimConfig.load(dir)).hasMessageContaining("file " + dir + " cannot be read");
    }
}
