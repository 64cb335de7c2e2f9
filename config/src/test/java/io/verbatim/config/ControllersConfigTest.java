package io.verbatim.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;

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

    @Test
    void theControllerSecretIsTheClustersOwnNeverATokenAndNeededOnlyToRunItsMembers() {
        VerbatimConfig none = parse(THREE);
        assertThatThrownBy(() -> none.security().controllerSecret("east")).isInstanceOf(ConfigException.class)
                .hasMessageContaining("clusters[0].controllerSecret").hasMessageContaining("never sent to peers");
        VerbatimConfig given = parse("    controllerSecret: inner-east\n" + THREE);
        assertThat(given.security().controllerSecret("east")).isEqualTo("inner-east");
        assertThat(given.security().isControllerSecret("east", "inner-east")).isTrue();
        assertThat(given.security().isControllerSecret("east", "t-east")).isFalse();
        assertThat(given.security().isControllerSecret("west", "inner-east")).isFalse();
        assertThatThrownBy(() -> parse("    controllerSecret: t-west\n" + THREE)).isInstanceOf(ConfigException.class)
                .hasMessageContaining("clusters[0].controllerSecret").hasMessageContaining("same as a token");
        VerbatimConfig digest = parse("    controllerSecret: sha256:" + "ab".repeat(32) + "\n" + THREE);
        assertThatThrownBy(() -> digest.security().controllerSecret("east")).hasMessageContaining("is a digest");
    }

    @Test
    void theMetadataLogsTimingIsTunableWithinReason() {
        VerbatimConfig c = VerbatimConfig.parse("clusters: [{name: a, token: ta}, {name: b, token: tb}]\n"
                + "metadataLog: {tick: 20ms, electionTicks: 25, heartbeatTicks: 3, snapshotEvery: 500, readTimeout: 2s}\n");
        MetadataLogConfig.Timing t = c.metadataLog().timing();
        assertThat(t).isEqualTo(new MetadataLogConfig.Timing(java.time.Duration.ofMillis(20), 25, 3, 500,
                java.time.Duration.ofSeconds(2)));
        assertThat(t.electionTimeout()).isEqualTo(java.time.Duration.ofMillis(500));
        assertThat(VerbatimConfig.parse("clusters: [{name: a, token: ta}, {name: b, token: tb}]\n").metadataLog().timing())
                .isEqualTo(MetadataLogConfig.Timing.defaults());
        assertThatThrownBy(() -> VerbatimConfig.parse("clusters: [{name: a, token: ta}, {name: b, token: tb}]\n"
                + "metadataLog: {electionTicks: 10, heartbeatTicks: 10}\n")).isInstanceOf(ConfigException.class)
                .hasMessageContaining("metadataLog").hasMessageContaining("heartbeatTicks is 10: must be within 1..9");
        assertThatThrownBy(() -> VerbatimConfig.parse("clusters: [{name: a, token: ta}, {name: b, token: tb}]\n"
                + "metadataLog: {tick: 0ms}\n")).isInstanceOf(ConfigException.class).hasMessageContaining("metadataLog.tick");
    }

    static java.util.stream.Stream<org.junit.jupiter.params.provider.Arguments> refusals() {
        String r = "    raftPort: 7100\n    controllers: ";
        return java.util.stream.Stream.of(
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
                .map(a -> org.junit.jupiter.params.provider.Arguments.of(a[0], a[1]));
    }

    @ParameterizedTest
    @org.junit.jupiter.params.provider.MethodSource("refusals")
    void whatCannotRunIsRefusedNamingTheKey(String east, String expected) {
        assertThatThrownBy(() -> parse(east)).isInstanceOf(ConfigException.class).hasMessageContaining(expected);
    }
}
