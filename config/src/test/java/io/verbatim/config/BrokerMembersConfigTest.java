package io.verbatim.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.verbatim.net.SigningKey;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/** A cluster's broker processes named as members of its metadata log ({@code clusters[].brokerMembers}). */
class BrokerMembersConfigTest {
    private static final String CONTROLLERS = """
                controllers:
                  - {id: c1, adminPort: 8101, raftPort: 7101, secret: c1-secret}
                  - {id: c2, adminPort: 8102, raftPort: 7102, secret: c2-secret}
                  - {id: c3, adminPort: 8103, raftPort: 7103, secret: c3-secret}
            """;

    private static final String MEMBERS = """
                brokerMembers:
                  - {id: broker-1, adminPort: 8111, brokerPorts: [6661], raftPort: 7111, secret: b1-secret}
                  - {id: broker-2, adminPort: 8112, brokerPorts: [6662, 6672], raftPort: 7112, secret: b2-secret,
                     advertisedAddress: east-2.example.net}
                  - {id: broker-3, adminPort: 8113, brokerPorts: [6663], raftPort: 7113, secret: b3-secret,
                     bindAddress: 0.0.0.0, advertisedAddress: east-3.example.net}
            """;

    /** On Pulsar (the storage that runs more than one broker process), east named by {@code east}. */
    private static VerbatimConfig onPulsar(String east) {
        return onPulsar(east, "");
    }

    private static VerbatimConfig onPulsar(String east, String more) {
        return VerbatimConfig.parse("""
                storage: pulsar
                clusters:
                  - name: east
                    token: t-east
                    advertisedAddress: east.example.net
                    pulsar: {serviceUrl: "pulsar://p:6650", adminUrl: "http://p:8080"}
                %s
                  - name: west
                    token: t-west
                    adminPort: 8082
                    brokerPorts: [6653]
                    pulsar: {serviceUrl: "pulsar://p:6650", adminUrl: "http://p:8080"}
                security: {adminToken: admin-token}
                """.formatted(east) + more);
    }

    @Test
    void eachBrokerMemberIsAProcessOfItsOwnOnTheClustersAddressesUnlessItNamesItsOwn() {
        VerbatimConfig c = onPulsar(CONTROLLERS + MEMBERS);
        ClusterConfig east = c.cluster("east");
        assertThat(east.namesBrokerMembers()).isTrue();
        assertThat(east.brokerMembers()).extracting(BrokerMember::id).containsExactly("broker-1", "broker-2", "broker-3");
        BrokerMember one = east.brokerMember("broker-1").orElseThrow();
        assertThat(one).isEqualTo(new BrokerMember("broker-1", "127.0.0.1", "east.example.net", 8111, List.of(6661), 7111));
        assertThat(one.raftAddress()).isEqualTo("east.example.net:7111");
        assertThat(one.adminUrl("http")).isEqualTo("http://east.example.net:8111");
        BrokerMember two = east.brokerMember("broker-2").orElseThrow();
        assertThat(two.brokers()).isEqualTo(2);
        assertThat(two.ingestUrls("https")).containsExactly("https://east-2.example.net:6662",
                "https://east-2.example.net:6672");
        assertThat(east.brokerMember("broker-3").orElseThrow().bindAddress()).isEqualTo("0.0.0.0");
        assertThat(east.brokerMember(ControllerReplica.BROKERS)).isEmpty();
        // the listeners of the log are the members; peers reach every member's ingest ports, in the file's order
        assertThat(east.metadataVoters()).containsExactly("c1", "c2", "c3");
        assertThat(east.metadataListeners()).containsExactly("broker-1", "broker-2", "broker-3");
        ClusterUrls urls = ClusterUrls.of(c, "east");
        assertThat(urls.brokerUrls()).containsExactly("http://east.example.net:6661", "http://east-2.example.net:6662",
                "http://east-2.example.net:6672", "http://east-3.example.net:6663");
        assertThat(urls.adminUrl()).isEqualTo("http://east.example.net:8111");
        assertThat(urls.exchangeUrls()).containsExactly("http://east.example.net:8101", "http://east.example.net:8102",
                "http://east.example.net:8103");
    }

    @Test
    void eachMemberProvesItselfWithItsOwnSecretAndIsKnownToTheOthersByItsKey() {
        String b3Key = SigningKey.fromSecret("b3-secret").verifying().form();
        VerbatimConfig c = onPulsar(CONTROLLERS + MEMBERS.replace("secret: b3-secret", "secret: " + b3Key));
        ClusterConfig east = c.cluster("east");
        Map<String, MemberCredential> atBroker2 = c.security().members(east, "broker-2");
        assertThat(atBroker2.keySet()).containsExactly("c1", "c2", "c3", "broker-1", "broker-2", "broker-3");
        assertThat(atBroker2.get("broker-2").signing()).isPresent();
        assertThat(atBroker2.get("broker-2").key()).isEqualTo("clusters[0].brokerMembers[1].secret");
        assertThat(atBroker2.get("broker-3").verifying().form()).isEqualTo(b3Key);
        assertThat(c.security().members(east, "c1").keySet()).contains("broker-1", "broker-2", "broker-3");
        assertThatThrownBy(() -> c.security().members(east, "broker-3")).isInstanceOf(ConfigException.class)
                .hasMessageContaining("clusters[0].brokerMembers[2].secret: is a verifying key, but this process runs "
                        + "member broker-3 of east");
        assertThatThrownBy(() -> c.security().members(east, ControllerReplica.BROKERS))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("has no member 'brokers'");
        VerbatimConfig missing = onPulsar(CONTROLLERS + MEMBERS.replace(", secret: b2-secret", ""));
        assertThatThrownBy(() -> missing.security().members(missing.cluster("east"), "broker-1"))
                .isInstanceOf(ConfigException.class).hasMessageContaining("clusters[0].brokerMembers[1].secret: is missing")
                .hasMessageContaining("member broker-2 too");
        assertThatThrownBy(() -> onPulsar(CONTROLLERS + MEMBERS.replace("secret: b2-secret", "secret: c2-secret")))
                .isInstanceOf(ConfigException.class).hasMessageContaining(
                        "clusters[0].brokerMembers[1].secret: is the same secret as clusters[0].controllers[1].secret");
        assertThatThrownBy(() -> onPulsar(CONTROLLERS + MEMBERS.replace("secret: b3-secret", "secret: t-west")))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("clusters[0].brokerMembers[2].secret: is the same as clusters[1].token");
    }

    /** The form every existing file uses: the cluster's own ports are its one brokers process, member 'brokers'. */
    @Test
    void theClustersOwnPortsAreOneBrokerMemberNamedBrokers() {
        VerbatimConfig c = VerbatimConfig.parse(Samples.text("controllers.yaml"), name -> "secret-of-" + name);
        ClusterConfig usEast = c.cluster("us-east");
        assertThat(usEast.namesBrokerMembers()).isFalse();
        assertThat(usEast.brokerMembers()).containsExactly(new BrokerMember(ControllerReplica.BROKERS, "127.0.0.1",
                "127.0.0.1", 8081, List.of(6651, 6652), 7100));
        assertThat(usEast.brokerMembers().get(0).addresses()).isEqualTo(usEast.addresses());
        assertThat(usEast.metadataListeners()).containsExactly(ControllerReplica.BROKERS);
        assertThat(c.security().members(usEast, ControllerReplica.BROKERS).get(ControllerReplica.BROKERS).key())
                .isEqualTo("clusters[0].brokersSecret");
        assertThat(ClusterUrls.of(c, "us-east")).isEqualTo(new ClusterUrls("http://127.0.0.1:8081",
                List.of("http://127.0.0.1:6651", "http://127.0.0.1:6652"),
                List.of("http://127.0.0.1:8101", "http://127.0.0.1:8102", "http://127.0.0.1:8103")));
        ClusterConfig euWest = c.cluster("eu-west");
        assertThat(euWest.brokerMembers()).singleElement().satisfies(m -> {
            assertThat(m.id()).isEqualTo(ControllerReplica.BROKERS);
            assertThat(m.brokerPorts()).containsExactly(6653);
            assertThat(m.raftPort()).isZero();
        });
        assertThat(euWest.metadataListeners()).containsExactly("b0");
        // built in code as before: the same one member
        ClusterConfig built = new ClusterConfig("a", 2);
        assertThat(built.brokerMembers()).containsExactly(BrokerMember.of(built.addresses()));
        assertThat(built.withDataDir(java.nio.file.Path.of("d")).brokerMembers()).isEqualTo(built.brokerMembers());
    }

    @ParameterizedTest
    @ValueSource(strings = {"adminPort: 8081", "brokerPorts: [6651]", "brokers: 2", "raftPort: 7100",
        "brokersSecret: brokers-secret"})
    void namingBothFormsIsRefusedNamingTheKey(String oneProcess) {
        String key = oneProcess.substring(0, oneProcess.indexOf(':'));
        assertThatThrownBy(() -> onPulsar("    " + oneProcess + "\n" + CONTROLLERS + MEMBERS))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("clusters[0]." + key + ": is given beside clusters[0].brokerMembers")
                .hasMessageContaining("expected one form");
    }

    @Test
    void brokerMembersNeedControllersRunningApart() {
        assertThatThrownBy(() -> onPulsar(MEMBERS)).isInstanceOf(ConfigException.class)
                .hasMessageContaining("clusters[0].brokerMembers: names 3 broker member(s) but the cluster names no "
                        + "controllers")
                .hasMessageContaining("its voters must run apart");
    }

    /** Issue 25's design, §6: the embedded storage's segments live in one process. */
    @Test
    void theEmbeddedStorageRunsOneBrokerProcess() {
        String yaml = """
                clusters:
                  - name: east
                    token: t-east
                %s
                  - {name: west, token: t-west}
                """;
        assertThatThrownBy(() -> VerbatimConfig.parse(yaml.formatted(CONTROLLERS + MEMBERS)))
                .isInstanceOf(ConfigException.class)
                .hasMessage("clusters[0].brokerMembers: names 3 broker members [broker-1, broker-2, broker-3], but the "
                        + "embedded storage keeps a cluster's segments in one process's memory and data directory (its "
                        + "journal has one writer), so it runs one broker process; name one broker member or use "
                        + "storage.type: pulsar");
        // one named member is one process: the embedded storage runs it
        VerbatimConfig one = VerbatimConfig.parse(yaml.formatted(CONTROLLERS + """
                    brokerMembers:
                      - {id: broker-1, adminPort: 8111, brokerPorts: [6661], raftPort: 7111}
                """));
        assertThat(one.cluster("east").brokerMembers()).extracting(BrokerMember::id).containsExactly("broker-1");
        assertThat(one.cluster("east").namesBrokerMembers()).isTrue();
    }

    @Test
    void delegationsAssignTheMembersAndOnlyThem() {
        String log = "metadataLog: {enabled: true}\n";
        VerbatimConfig c = onPulsar(CONTROLLERS + MEMBERS + "    delegations: {broker-2: c1, broker-3: c1}\n", log);
        assertThat(c.cluster("east").delegations()).isEqualTo(Map.of("broker-2", "c1", "broker-3", "c1"));
        assertThatThrownBy(() -> onPulsar(CONTROLLERS + MEMBERS + "    delegations: {brokers: c1}\n", log))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("brokers is not a listener of cluster east's metadata log (expected one of "
                        + "[broker-1, broker-2, broker-3])");
        assertThatThrownBy(() -> onPulsar(CONTROLLERS + MEMBERS + "    delegations: {broker-1: broker-2}\n", log))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("broker-2 is not a voter of cluster east's metadata log");
    }

    static Stream<Arguments> refusals() {
        String m = "    brokerMembers:\n      - ";
        String ok = "{id: broker-1, adminPort: 8111, brokerPorts: [6661], raftPort: 7111}";
        return Stream.of(
                new String[] {"    brokerMembers: []\n", "clusters[0].brokerMembers: is empty"},
                new String[] {m + "{adminPort: 8111, brokerPorts: [6661], raftPort: 7111}\n",
                    "clusters[0].brokerMembers[0].id: is missing"},
                new String[] {m + "{id: 'b 1', adminPort: 8111, brokerPorts: [6661], raftPort: 7111}\n",
                    "'b 1' is not a member id"},
                new String[] {m + "{id: brokers, adminPort: 8111, brokerPorts: [6661], raftPort: 7111}\n",
                    "clusters[0].brokerMembers[0].id: 'brokers' is the id of the one brokers process"},
                new String[] {m + ok + "\n      - {id: broker-1, adminPort: 8112, brokerPorts: [6662], raftPort: 7112}\n",
                    "clusters[0].brokerMembers[1].id: 'broker-1' is also clusters[0].brokerMembers[0].id"},
                new String[] {m + "{id: c2, adminPort: 8112, brokerPorts: [6662], raftPort: 7112}\n",
                    "clusters[0].brokerMembers[0].id: 'c2' is also clusters[0].controllers[1].id"},
                new String[] {m + "{id: broker-1, brokerPorts: [6661], raftPort: 7111}\n",
                    "clusters[0].brokerMembers[0].adminPort: is required for a broker member"},
                new String[] {m + "{id: broker-1, adminPort: 8111, brokerPorts: [6661]}\n",
                    "clusters[0].brokerMembers[0].raftPort: is required for a broker member"},
                new String[] {m + "{id: broker-1, adminPort: 8111, raftPort: 7111}\n",
                    "clusters[0].brokerMembers[0].brokerPorts: is required for a broker member"},
                new String[] {m + "{id: broker-1, adminPort: 8111, brokerPorts: [], raftPort: 7111}\n",
                    "clusters[0].brokerMembers[0].brokerPorts: is empty"},
                new String[] {m + "{id: broker-1, adminPort: 8111, brokerPorts: [0], raftPort: 7111}\n",
                    "clusters[0].brokerMembers[0].brokerPorts[0]: 0 is not an integer within [1, 65535]"},
                new String[] {m + "{id: broker-1, adminPort: 0, brokerPorts: [6661], raftPort: 7111}\n",
                    "clusters[0].brokerMembers[0].adminPort: 0 is out of range"},
                new String[] {m + "{id: broker-1, adminPort: 8111, brokerPorts: [6661], raftPort: 7111, colour: red}\n",
                    "colour"},
                new String[] {m + "{id: broker-1, adminPort: 8101, brokerPorts: [6661], raftPort: 7111}\n",
                    "clusters[0].controllers[0].adminPort: 8101 on 127.0.0.1 is also clusters[0].brokerMembers[0].adminPort"},
                new String[] {m + ok + "\n      - {id: broker-2, adminPort: 8112, brokerPorts: [6662, 7111], raftPort: 7112}\n",
                    "clusters[0].brokerMembers[1].brokerPorts[1]: 7111 on 127.0.0.1 is also "
                        + "clusters[0].brokerMembers[0].raftPort"},
                new String[] {m + "{id: broker-1, adminPort: 8111, brokerPorts: [6653], raftPort: 7111}\n",
                    "clusters[1].brokerPorts[0]: 6653 on 127.0.0.1 is also clusters[0].brokerMembers[0].brokerPorts[0]"})
                .map(a -> Arguments.of(a[0], a[1]));
    }

    @ParameterizedTest
    @MethodSource("refusals")
    void whatCannotRunIsRefusedNamingTheKey(String members, String expected) {
        assertThatThrownBy(() -> onPulsar(CONTROLLERS + members)).isInstanceOf(ConfigException.class)
                .hasMessageContaining(expected);
    }

    @Test
    void aClusterBuiltInCodeKeepsToOneForm() {
        ClusterConfig one = new ClusterConfig("a", 1);
        BrokerMember m = new BrokerMember("broker-1", "127.0.0.1", "127.0.0.1", 8111, List.of(6661), 7111);
        ControllerReplica c1 = new ControllerReplica("c1", "127.0.0.1", "127.0.0.1", 8101, 7101);
        ClusterConfig named = new ClusterConfig("a", 1, new Addresses("127.0.0.1", "127.0.0.1", 0, List.of(0)),
                one.caps(), one.dataDir(), List.of(c1), Map.of(), List.of(m));
        assertThat(named.metadataListeners()).containsExactly("broker-1");
        assertThatThrownBy(() -> new ClusterConfig("a", 1, new Addresses("127.0.0.1", "127.0.0.1", 8081, List.of(0)),
                one.caps(), one.dataDir(), List.of(c1), Map.of(), List.of(m)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("expected one form");
        assertThatThrownBy(() -> new ClusterConfig("a", 1, one.addresses(), one.caps(), one.dataDir(), List.of(),
                Map.of(), List.of(m))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("names broker members but no controllers");
        assertThatThrownBy(() -> new ClusterConfig("a", 1, one.addresses(), one.caps(), one.dataDir(), List.of(),
                Map.of(), List.of(new BrokerMember(ControllerReplica.BROKERS, "127.0.0.1", "127.0.0.1", 9, List.of(0), 0))))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("is not on its addresses");
        assertThatThrownBy(() -> new BrokerMember("broker-1", "127.0.0.1", "127.0.0.1", 8111, List.of(6661), 0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("raftPort 0 is not a port of a broker member");
    }

    @Test
    void ownershipHasDefaultsAndTakesItsKeysInRange() {
        VerbatimConfig defaults = onPulsar(CONTROLLERS + MEMBERS);
        assertThat(defaults.ownership()).isEqualTo(OwnershipConfig.defaults());
        VerbatimConfig tuned = onPulsar(CONTROLLERS + MEMBERS, """
                ownership: {lease: 4s, interval: 500ms, maxMoves: 2, moveInterval: 5s, minTenure: 0s, imbalance: 0.5,
                            drainTimeout: 8s}
                """);
        assertThat(tuned.ownership()).isEqualTo(new OwnershipConfig(java.time.Duration.ofSeconds(4),
                java.time.Duration.ofMillis(500), 2, java.time.Duration.ofSeconds(5), java.time.Duration.ZERO, 0.5,
                java.time.Duration.ofSeconds(8)));
        assertThatThrownBy(() -> onPulsar(CONTROLLERS + MEMBERS, "ownership: {lease: 1s}\n"))
                .isInstanceOf(ConfigException.class).hasMessageContaining("ownership.lease");
        assertThatThrownBy(() -> onPulsar(CONTROLLERS + MEMBERS, "ownership: {lease: 4s, interval: 3s}\n"))
                .isInstanceOf(ConfigException.class).hasMessageContaining("ownership")
                .hasMessageContaining("interval is 3s: must be within 100ms..2s");
        assertThatThrownBy(() -> onPulsar(CONTROLLERS + MEMBERS, "ownership: {leases: 4s}\n"))
                .isInstanceOf(ConfigException.class).hasMessageContaining("ownership.leases");
    }
}
