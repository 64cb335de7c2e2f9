package io.verbatim.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Where each cluster listens and where peers reach it (bind vs advertised), as the YAML names them. */
class AddressesConfigTest {
    private static VerbatimConfig parse(String clusters) {
        return VerbatimConfig.parse("clusters:\n" + withTokens(clusters));
    }

    /** Each cluster gets a token of its own (the test is about addresses). */
    private static String withTokens(String clusters) {
        return clusters.replaceAll("- \\{name: ([a-z]+)", "- {token: t-$1, name: $1").replaceAll("(?m)^  - name: ([a-z]+)$",
                "  - name: $1\n    token: t-$1");
    }

    @Test
    void clustersListenOnLoopbackWithFreePortsUnlessTold() {
        VerbatimConfig c = parse("  - name: a\n  - name: b\n    brokers: 2\n");
        assertThat(c.cluster("a").addresses()).isEqualTo(new Addresses("127.0.0.1", "127.0.0.1", 0, List.of(0)));
        assertThat(c.cluster("b").addresses().brokerPorts()).containsExactly(0, 0);
        assertThat(c.cluster("a").addresses().fixedPorts()).isFalse();
        assertThat(c.cluster("a").dataDir()).isEmpty();
    }

    @Test
    void aNodesAddressesAreReadWhole() {
        VerbatimConfig c = parse("""
                  - name: a
                    bindAddress: 0.0.0.0
                    advertisedAddress: east.example.net
                    adminPort: 8081
                    brokerPorts: [6651, 6652]
                    dataDir: /var/lib/verbatim
                  - name: b
                    advertisedAddress: "::1"
                    adminPort: 8082
                    brokerPorts: [6653]
                """);
        Addresses a = c.cluster("a").addresses();
        assertThat(a).isEqualTo(new Addresses("0.0.0.0", "east.example.net", 8081, List.of(6651, 6652)));
        assertThat(c.cluster("a").brokers()).as("brokers follows brokerPorts").isEqualTo(2);
        assertThat(a.fixedPorts()).isTrue();
        assertThat(a.advertisedUrl("http", 8081)).isEqualTo("http://east.example.net:8081");
        assertThat(c.cluster("b").addresses().advertisedUrl("https", 8082)).isEqualTo("https://[::1]:8082");
        assertThat(c.cluster("a").dataDir()).contains(Path.of("/var/lib/verbatim"));
    }

    @Test
    void aWildcardBindAdvertisesThisHostsName() {
        VerbatimConfig c = parse("  - name: a\n    bindAddress: 0.0.0.0\n  - name: b\n");
        assertThat(c.cluster("a").addresses().advertisedAddress()).isNotEqualTo("0.0.0.0").isNotBlank();
    }

    /** Each bad address, the key the error names, and words of what was expected. */
    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "- {name: a, adminPort: 8081}\\n- {name: b, adminPort: 8081}|clusters[1].adminPort: 8081 on 127.0.0.1 is also clusters[0].adminPort|port of its own",
        "- {name: a, brokerPorts: [7001, 7001]}\\n- {name: b}|clusters[0].brokerPorts[1]: 7001|port of its own",
        "- {name: a, bindAddress: 0.0.0.0, adminPort: 9000}\\n- {name: b, bindAddress: 10.1.2.3, brokerPorts: [9000]}|clusters[1].brokerPorts[0]: 9000 on 10.1.2.3 is also clusters[0].adminPort on 0.0.0.0|port of its own",
        "- {name: a, brokers: 2, brokerPorts: [7001]}\\n- {name: b}|clusters[0].brokerPorts|one per broker",
        "- {name: a, brokerPorts: [70000]}\\n- {name: b}|clusters[0].brokerPorts[0]: 70000|within [0, 65535]",
        "- {name: a, brokerPorts: 7001}\\n- {name: b}|clusters[0].brokerPorts: 7001 is not a list|integers",
        "- {name: a, advertisedAddress: 0.0.0.0}\\n- {name: b}|clusters[0]: advertisedAddress '0.0.0.0' is a wildcard|can reach",
        "- {name: a, bindAddress: 'not a host'}\\n- {name: b}|clusters[0]: bindAddress 'not a host' is not a host name|IP address",
    })
    void badAddressesAreRefusedNamingTheKey(String clusters, String error, String expected) {
        String yaml = ("  " + clusters.replace("\\n", "\n  ")) + "\n";
        assertThatThrownBy(() -> parse(yaml))
                .isInstanceOf(ConfigException.class).hasMessageContaining(error).hasMessageContaining(expected);
    }

    @Test
    void twoClustersMayShareAPortOnDifferentAddresses() {
        VerbatimConfig c = parse("- {name: a, bindAddress: 127.0.0.1, adminPort: 8081}\n"
                + "- {name: b, bindAddress: 127.0.0.2, adminPort: 8081}\n");
        assertThat(c.clusters()).hasSize(2);
        assertThat(c.withCluster(c.cluster("a").withDataDir(Path.of("x"))).cluster("a").dataDir())
                .contains(Path.of("x"));
    }
}
