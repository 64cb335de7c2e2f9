package io.verbatim.pulsar;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.verbatim.model.Layout;
import io.verbatim.pulsar.broker.PulsarProcess;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import reactor.core.scheduler.Schedulers;

/**
 * A broker of its own with TLS on its binary and web ports, its certificate from a CA made here: {@code
 * pulsar+ssl://} and {@code https://} with that CA as the trust file replicate an entry; with the JDK's CAs or
 * another CA the first call fails naming the URL and the untrusted certificate.
 */
class PulsarTlsTest {
    private static final Duration FAST = Duration.ofSeconds(20);
    private static TlsFiles tls;
    private static Path rogueCa;
    private static PulsarProcess broker;

    @BeforeAll
    static void start() throws Exception {
        Path data = Path.of("target", "pulsar-tls-" + ProcessHandle.current().pid()).toAbsolutePath();
        long t0 = System.nanoTime();
        tls = TlsFiles.make(data.resolve("certs"), "verbatim-test");
        rogueCa = TlsFiles.makeCa(data.resolve("certs"), "someone-else");
        System.out.printf("[pulsar] certificates made in %d ms%n", (System.nanoTime() - t0) / 1_000_000);
        broker = PulsarProcess.start(withTls(PulsarProcess.Options.of(data), tls));
        System.out.printf("[pulsar] TLS broker started in %d ms: %s %s%n", broker.startMillis(),
                broker.serviceUrlTls().orElseThrow(), broker.webUrlTls().orElseThrow());
    }

    @AfterAll
    static void stop() {
        if (broker != null) {
            broker.close();
        }
    }

    /** TLS on free binary and web ports beside the plain ones (which the broker's own clients use). */
    static PulsarProcess.Options withTls(PulsarProcess.Options options, TlsFiles files) {
        return options
                .withConf("brokerServicePortTls", "0")
                .withConf("webServicePortTls", "0")
                .withConf("tlsCertificateFilePath", files.certificate.toString())
                .withConf("tlsKeyFilePath", files.key.toString())
                .withConf("tlsTrustCertsFilePath", files.ca.toString());
    }

    private static PulsarStorage.Settings settings(String namespace, Optional<Path> trust) {
        return new PulsarStorage.Settings(broker.serviceUrlTls().orElseThrow(), broker.webUrlTls().orElseThrow(),
                namespace, Optional.empty(), trust.map(Path::toString), 100, Duration.ofSeconds(10));
    }

    @Test
    void theBrokerReportsItsTlsUrlsAndKeepsTheirPortsForARestart() {
        assertThat(broker.serviceUrlTls()).hasValueSatisfying(url -> assertThat(url).startsWith("pulsar+ssl://127.0.0.1:"));
        assertThat(broker.webUrlTls()).hasValueSatisfying(url -> assertThat(url).startsWith("https://127.0.0.1:"));
        assertThat(broker.options().conf().get("brokerServicePortTls"))
                .isEqualTo(broker.serviceUrlTls().orElseThrow().replaceAll(".*:", ""));
        assertThat(broker.options().conf().get("webServicePortTls"))
                .isEqualTo(broker.webUrlTls().orElseThrow().replaceAll(".*:", ""));
    }

    @Test
    void withTheCaAsTrustFileAnEntryIsReplicatedOverTls() {
        try (PulsarStorage storage = PulsarStorage.connect(settings("public/tls-ok", Optional.of(tls.ca)))) {
            OneEntry.replicateAndReadBack(storage, "tls");
        }
    }

    @Test
    void withoutTheTrustFileTheCertificateIsRefusedNamingTheUrl() {
        try (PulsarStorage storage = PulsarStorage.connect(settings("public/tls-jdk", Optional.empty()))) {
            assertThatThrownBy(() -> storage.prepareNamespace().block(FAST))
                    .isInstanceOf(PulsarStorageException.class)
                    .hasMessageContaining(broker.webUrlTls().orElseThrow())
                    .hasMessageContaining("certificate is not trusted")
                    .satisfies(e -> System.out.println("[pulsar] no trust file: " + e.getMessage()));
        }
    }

    @Test
    void withAnotherCaTheCertificateIsRefusedNamingTheUrl() {
        try (PulsarStorage storage = PulsarStorage.connect(settings("public/tls-rogue", Optional.of(rogueCa)))) {
            assertThatThrownBy(() -> storage.prepareNamespace().block(FAST))
                    .isInstanceOf(PulsarStorageException.class)
                    .hasMessageContaining(broker.webUrlTls().orElseThrow())
                    .hasMessageContaining("certificate is not trusted")
                    .hasMessageContaining(rogueCa.toString())
                    .satisfies(e -> System.out.println("[pulsar] another CA: " + e.getMessage()));
        }
    }

    @Test
    void openingSegmentsAgainstAnUntrustedCertificateFailsAtOnceWithoutRetrying() {
        AtomicLong retries = new AtomicLong();
        try (PulsarStorage storage = PulsarStorage.connect(settings("public/default", Optional.of(rogueCa)))) {
            assertThatThrownBy(() -> PulsarSegments.open(storage, "persistent://public/default/tls-open",
                    List.of("west"), Layout.initial(1, 1, 0), Schedulers.parallel(), Duration.ofMillis(100),
                    PulsarSegments.OPEN_BACKOFF, (attempt, e) -> retries.incrementAndGet()).block(FAST))
                    .isInstanceOf(PulsarStorageException.class)
                    .hasMessageContaining(broker.webUrlTls().orElseThrow())
                    .hasMessageContaining("certificate is not trusted");
        }
        assertThat(retries).hasValue(0);
    }
}
