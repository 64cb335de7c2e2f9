package io.verbatim.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Issue 14: {@code storage: pulsar} and each cluster's Pulsar, checked at load naming the key. */
class PulsarStorageConfigTest {
    private static final String TWO = """
            clusters:
              - name: a
                token: ta
                pulsar: {serviceUrl: 'pulsar://127.0.0.1:6650', adminUrl: 'http://127.0.0.1:8080'%s}
              - name: b
                token: tb
                pulsar: {serviceUrl: 'pulsar+ssl://pb.example:6651', adminUrl: 'https://pb.example:8443', namespace: tb/ns}
            """;

    private static String file(String aExtra, String tail) {
        return TWO.formatted(aExtra) + tail + "\n";
    }

    @Test
    void theShorthandAndTheMappingBothPutSegmentsOnPulsar() {
        VerbatimConfig shorthand = VerbatimConfig.parse(file("", "storage: pulsar"));
        VerbatimConfig mapping = VerbatimConfig.parse(file("", "storage: {type: pulsar, gcInterval: 2s}"));
        for (VerbatimConfig c : List.of(shorthand, mapping)) {
            assertThat(c.storage().onPulsar()).isTrue();
            PulsarConfig a = c.storage().pulsar("a").orElseThrow();
            assertThat(a.serviceUrl()).isEqualTo("pulsar://127.0.0.1:6650");
            assertThat(a.namespace()).as("the default namespace").isEqualTo("public/a");
            assertThat(a.token()).isEmpty();
            assertThat(a.tls()).isFalse();
            PulsarConfig b = c.storage().pulsar("b").orElseThrow();
            assertThat(b.namespace()).isEqualTo("tb/ns");
            assertThat(b.tls()).isTrue();
        }
        assertThat(mapping.storage().gcInterval()).hasSeconds(2);
    }

    @Test
    void memoryIsTheDefaultAndTakesNoPulsarSection() {
        VerbatimConfig c = VerbatimConfig.parse("clusters: [{name: a, token: ta}, {name: b, token: tb}]\n");
        assertThat(c.storage().onPulsar()).isFalse();
        assertThat(c.storage().pulsar("a")).isEmpty();
        assertThatThrownBy(() -> VerbatimConfig.parse(file("", "")))
                .isInstanceOf(ConfigException.class)
                .hasMessageStartingWith("clusters[0].pulsar: is given while storage.type is memory");
    }

    @Test
    void aTokenComesFromTheFileOrTheEnvironment() {
        VerbatimConfig literal = VerbatimConfig.parse(file(", token: eyJ.x.y", "storage: pulsar"));
        assertThat(literal.storage().pulsar("a").orElseThrow().token()).contains("eyJ.x.y");
        VerbatimConfig env = VerbatimConfig.parse(file(", token: 'env:PULSAR_A'", "storage: pulsar"),
                Map.of("PULSAR_A", "eyJ.from.env")::get);
        assertThat(env.storage().pulsar("a").orElseThrow().token()).contains("eyJ.from.env");
        assertThatThrownBy(() -> VerbatimConfig.parse(file(", token: 'env:NOPE'", "storage: pulsar"),
                Map.<String, String>of()::get))
                .hasMessageStartingWith("clusters[0].pulsar.token: 'env:NOPE' names an environment variable that is "
                        + "not set");
    }

    @Test
    void aTrustFileMustExist(@TempDir Path dir) throws Exception {
        Path ca = Files.writeString(dir.resolve("ca.pem"), "-----BEGIN CERTIFICATE-----\n");
        VerbatimConfig c = VerbatimConfig.parse(file(", trustCertsFile: '" + ca + "'", "storage: pulsar"));
        assertThat(c.storage().pulsar("a").orElseThrow().trustCertsFile()).contains(ca);
        assertThatThrownBy(() -> VerbatimConfig.parse(file(", trustCertsFile: '" + dir.resolve("none.pem") + "'",
                "storage: pulsar")))
                .hasMessageStartingWith("clusters[0].pulsar.trustCertsFile: file " + dir.resolve("none.pem")
                        + " does not exist");
    }

    /** Cluster a's whole {@code pulsar} mapping (empty: the good one), the file's tail, the key, words of the error. */
    @ParameterizedTest(name = "{2}: {3}")
    @CsvSource(delimiter = '|', quoteCharacter = '"', value = {
        "|storage: sideways|storage|'sideways' is not one of [memory, pulsar]",
        "|storage: {type: disk}|storage.type|'disk' is not one of [memory, pulsar]",
        "serviceUrl: 'http://h:6650', adminUrl: 'http://h:8080'|storage: pulsar|clusters[0].pulsar.serviceUrl|has the wrong scheme",
        "serviceUrl: 'pulsar://h:6650', adminUrl: 'pulsar://h:8080'|storage: pulsar|clusters[0].pulsar.adminUrl|has the wrong scheme",
        "serviceUrl: 'pulsar://h:6650', adminUrl: 'http://h'|storage: pulsar|clusters[0].pulsar.adminUrl|names no host and port",
        "adminUrl: 'http://h:8080'|storage: pulsar|clusters[0].pulsar.serviceUrl|is missing",
        "serviceUrl: 'pulsar://h:6650', adminUrl: 'http://h:8080', namespace: justone|storage: pulsar|clusters[0].pulsar.namespace|is not tenant/namespace",
        "serviceUrl: 'pulsar://h:6650', adminUrl: 'http://h:8080', namespace: a/b/c|storage: pulsar|clusters[0].pulsar.namespace|is not tenant/namespace",
        "serviceUrl: 'pulsar://h:6650', adminUrl: 'http://h:8080', colour: red|storage: pulsar|clusters[0].pulsar.colour|",
    })
    void aBadValueIsRefusedNamingItsKey(String pulsarOfA, String tail, String key, String words) {
        String yaml = pulsarOfA == null ? file("", tail)
                : file("", tail).replaceFirst("pulsar: \\{serviceUrl: 'pulsar://127.0.0.1:6650', adminUrl: "
                        + "'http://127.0.0.1:8080'}", Matcher.quoteReplacement("pulsar: {" + pulsarOfA + "}"));
        assertThatThrownBy(() -> VerbatimConfig.parse(yaml)).isInstanceOf(ConfigException.class)
                .hasMessageStartingWith(key + ":").hasMessageContaining(words == null ? "" : words)
                .satisfies(e -> assertThat(((ConfigException) e).key()).isEqualTo(key));
    }

    @Test
    void everyClusterNeedsItsOwnPulsarNamespace() {
        String missing = "clusters: [{name: a, token: ta, pulsar: {serviceUrl: 'pulsar://h:6650', adminUrl: "
                + "'http://h:8080'}}, {name: b, token: tb}]\nstorage: pulsar\n";
        assertThatThrownBy(() -> VerbatimConfig.parse(missing))
                .hasMessageStartingWith("clusters[1].pulsar: is missing");
        String shared = "clusters: [{name: a, token: ta, pulsar: {serviceUrl: 'pulsar://h:6650', adminUrl: "
                + "'http://h:8080', namespace: p/x}}, {name: b, token: tb, pulsar: {serviceUrl: 'pulsar://h:6650', "
                + "adminUrl: 'http://H:8080', namespace: p/x}}]\nstorage: pulsar\n";
        assertThatThrownBy(() -> VerbatimConfig.parse(shared))
                .hasMessageStartingWith("clusters[1].pulsar.namespace: 'p/x' on http://H:8080 is clusters[0]'s too");
        // one broker, two namespaces: what the demo runs
        String oneBroker = shared.replaceFirst("namespace: p/x}}]", "namespace: p/y}}]");
        assertThat(VerbatimConfig.parse(oneBroker).storage().pulsar("b").orElseThrow().namespace()).isEqualTo("p/y");
    }
}
