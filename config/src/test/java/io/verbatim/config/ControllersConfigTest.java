package io.verbatim.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.verbatim.net.SigningKey;
import java.time.Duration;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;

/** A cluster's controller replicas named as processes of their own, and what is refused. */
class ControllersConfigTest {
    private static VerbatimConfig parse(String east) {
        return VerbatimConfig.parse("""
                clusters:
                  - name: east
                    token: t-east
                    advertisedAddress: east.example.net
                    adminPort: 8081
                    brokerPorts: [6651]
                %s
                  - name: west
                    token: t-west
                """.formatted(east));
    }

    private static final String THREE = """
                raftPort: 7100
                controllers:
                  - {id: c1, adminPort: 8101, raftPort: 7101}
                  - {id: c2, adminPort: 8102, raftPort: 7102, advertisedAddress: east-2.example.net}
                  - {id: c3, adminPort: 8103, raftPort: 7103, bindAddress: 0.0.0.0, advertisedAddress: east-3.example.net}
            """;

    @Test
    void replicasTakeTheClustersAddressesUnlessTheyNameTheirOwn() {
        ClusterConfig east = parse(THREE).cluster("east");
        assertThat(east.separateControllers()).isTrue();
        assertThat(east.addresses().raftPort()).isEqualTo(7100);
        assertThat(east.controllers()).extracting(ControllerReplica::id).containsExactly("c1", "c2", "c3");
        ControllerReplica c1 = east.controller("c1").orElseThrow();
        assertThat(c1.bindAddress()).isEqualTo("127.0.0.1");
        assertThat(c1.adminUrl("http")).isEqualTo("http://east.example.net:8101");
        assertThat(c1.raftAddress()).isEqualTo("east.example.net:7101");
        assertThat(east.controller("c2").orElseThrow().raftAddress()).isEqualTo("east-2.example.net:7102");
        assertThat(east.controller("c3").orElseThrow().bindAddress()).isEqualTo("0.0.0.0");
        assertThat(parse("").cluster("east").separateControllers()).isFalse();
    }

    private static final String WITH_SECRETS = """
                raftPort: 7100
                brokersSecret: brokers-secret
                controllers:
                  - {id: c1, adminPort: 8101, raftPort: 7101, secret: c1-secret}
                  - {id: c2, adminPort: 8102, raftPort: 7102, secret: env:C2_SECRET}
                  - {id: c3, adminPort: 8103, raftPort: 7103, secret: %s}
            """;

    private static VerbatimConfig parse(String east, Map<String, String> env) {
        return VerbatimConfig.parse("""
                clusters:
                  - name: east
                    token: t-east
                %s
                  - name: west
                    token: t-west
                security: {adminToken: admin-token}
                """.formatted(east), env::get);
    }

    /**
     * Issue 23 (7): one group secret let any process of the cluster speak as any member. Each member now has
     * its own: a secret where it runs, its verifying key elsewhere.
     */
    @Test
    void eachMemberHasASecretOfItsOwnOrElsewhereItsVerifyingKey() {
        String c3Key = SigningKey.fromSecret("c3-secret").verifying().form();
        VerbatimConfig c = parse(WITH_SECRETS.formatted(c3Key), Map.of("C2_SECRET", "c2-secret"));
        ClusterConfig east = c.cluster("east");
        Map<String, MemberCredential> atC1 = c.security().members(east, "c1");
        assertThat(atC1.keySet()).containsExactly("c1", "c2", "c3", "brokers");
        assertThat(atC1.get("c1").signing()).isPresent();
        assertThat(atC1.get("c2").verifying()).isEqualTo(SigningKey.fromSecret("c2-secret").verifying());
        assertThat(atC1.get("c3").signing()).as("given as a verifying key").isEmpty();
        assertThat(atC1.get("c3").verifying().form()).isEqualTo(c3Key);
        assertThat(atC1.get("brokers").key()).isEqualTo("clusters[0].brokersSecret");
        assertThat(atC1.get("c1").toString()).doesNotContain("c1-secret").contains("ed25519:");
        assertThatThrownBy(() -> c.security().members(east, "c3")).isInstanceOf(ConfigException.class)
                .hasMessageContaining("clusters[0].controllers[2].secret: is a verifying key, but this process runs "
                        + "member c3 of east");
    }

    @Test
    void aMemberWithoutASecretIsRefusedWhereAMemberOfItsClusterRuns() {
        VerbatimConfig none = parse(THREE);
        assertThatThrownBy(() -> none.security().members(none.cluster("east"), "c1")).isInstanceOf(ConfigException.class)
                .hasMessageContaining("clusters[0].controllers[0].secret: is missing")
                .hasMessageContaining("ed25519:<base64> elsewhere");
        VerbatimConfig noBrokers = parse(WITH_SECRETS.replace("    brokersSecret: brokers-secret\n", "")
                .formatted("c3-secret"), Map.of("C2_SECRET", "c2-secret"));
        assertThatThrownBy(() -> noBrokers.security().members(noBrokers.cluster("east"), "c1"))
                .hasMessageContaining("clusters[0].brokersSecret: is missing");
    }

    @Test
    void theGroupSecretIsRefusedNamingWhatReplacedIt() {
        assertThatThrownBy(() -> parse("    controllerSecret: inner-east\n" + THREE)).isInstanceOf(ConfigException.class)
                .hasMessageContaining("clusters[0].controllerSecret: is replaced by a secret per member")
                .hasMessageContaining("clusters[].controllers[].secret").hasMessageContaining("clusters[].brokersSecret");
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "c1-secret|clusters[0].controllers[2].secret: is the same secret as clusters[0].controllers[0].secret",
        "brokers-secret|clusters[0].brokersSecret: is the same secret as clusters[0].controllers[2].secret",
        "t-west|clusters[0].controllers[2].secret: is the same as clusters[1].token",
        "admin-token|clusters[0].controllers[2].secret: is the same as security.adminToken",
        "sha256:abababababababababababababababababababababababababababababababab|is a digest",
        "ed25519:AAAA|clusters[0].controllers[2].secret: 'ed25519:AAAA' is not a verifying key",
        "env:UNSET|'env:UNSET' names an environment variable that is not set",
    })
    void aMemberSecretSharedWithAnotherMemberOrATokenOrUnusableIsRefused(String c3, String error) {
        assertThatThrownBy(() -> parse(WITH_SECRETS.formatted(c3), Map.of("C2_SECRET", "c2-secret")))
                .isInstanceOf(ConfigException.class).hasMessageContaining(error);
    }

    @Test
    void theBrokersSecretNeedsControllers() {
        assertThatThrownBy(() -> parse("    brokersSecret: b\n")).isInstanceOf(ConfigException.class)
                .hasMessageContaining("clusters[0].brokersSecret: is given, but the cluster names no controllers");
    }

    @Test
    void theMetadataLogsTimingIsTunableWithinReason() {
        VerbatimConfig c = VerbatimConfig.parse("clusters: [{name: a, token: ta}, {name: b, token: tb}]\n"
                + "metadataLog: {tick: 20ms, electionTicks: 25, heartbeatTicks: 3, snapshotEvery: 500, readTimeout: 2s}\n");
        MetadataLogConfig.Timing t = c.metadataLog().timing();
        assertThat(t).isEqualTo(new MetadataLogConfig.Timing(Duration.ofMillis(20), 25, 3, 500,
                Duration.ofSeconds(2)));
        assertThat(t.electionTimeout()).isEqualTo(Duration.ofMillis(500));
        assertThat(VerbatimConfig.parse("clusters: [{name: a, token: ta}, {name: b, token: tb}]\n").metadataLog().timing())
                .isEqualTo(MetadataLogConfig.Timing.defaults());
        assertThatThrownBy(() -> VerbatimConfig.parse("clusters: [{name: a, token: ta}, {name: b, token: tb}]\n"
                + "metadataLog: {electionTicks: 10, heartbeatTicks: 10}\n")).isInstanceOf(ConfigException.class)
                .hasMessageContaining("metadataLog").hasMessageContaining("heartbeatTicks is 10: must be within 1..9");
        assertThatThrownBy(() -> VerbatimConfig.parse("clusters: [{name: a, token: ta}, {name: b, token: tb}]\n"
                + "metadataLog: {tick: 0ms}\n")).isInstanceOf(ConfigException.class).hasMessageContaining("metadataLog.tick");
    }

    static Stream<Arguments> refusals() {
        String r = "    raftPort: 7100\n    controllers: ";
        return Stream.of(
                new String[] {r + "[{id: c1, raftPort: 7101}]", "clusters[0].controllers[0].adminPort"},
                new String[] {r + "[{id: c1, adminPort: 8101}]", "clusters[0].controllers[0].raftPort"},
                new String[] {r + "[{id: c1, adminPort: 0, raftPort: 7101}]", "clusters[0].controllers[0].adminPort"},
                new String[] {r + "[{id: brokers, adminPort: 8101, raftPort: 7101}]", "'brokers' is the brokers' member"},
                new String[] {r + "[{id: 'c 1', adminPort: 8101, raftPort: 7101}]", "is not a member id"},
                new String[] {r + "[{id: c1, adminPort: 8101, raftPort: 7101}, {id: c1, adminPort: 8102, raftPort: 7102}]",
                    "controller 'c1' twice"},
                new String[] {"    controllers: [{id: c1, adminPort: 8101, raftPort: 7101}]", "no raftPort"},
                new String[] {r + "[{id: c1, adminPort: 8081, raftPort: 7101}]", "is also clusters[0].adminPort"},
                new String[] {r + "[{id: c1, adminPort: 8101, raftPort: 7100}]", "is also clusters[0].raftPort"},
                new String[] {r + "[{id: c1, adminPort: 8101, raftPort: 7101, colour: red}]", "colour"})
                .map(a -> Arguments.of(a[0], a[1]));
    }

    @ParameterizedTest
    @MethodSource("refusals")
    void whatCannotRunIsRefusedNamingTheKey(String east, String expected) {
        assertThatThrownBy(() -> parse(east)).isInstanceOf(ConfigException.class).hasMessageContaining(expected);
    }
}
