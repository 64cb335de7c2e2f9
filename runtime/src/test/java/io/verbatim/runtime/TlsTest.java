package io.verbatim.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.handler.ssl.ClientAuth;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.verbatim.config.ConfigException;
import io.verbatim.config.VerbatimConfig;
import io.verbatim.exchange.ExchangeServer;
import io.verbatim.model.Compression;
import io.verbatim.net.NetClient;
import io.verbatim.net.NetServer;
import io.verbatim.net.NetworkLimits;
import io.verbatim.net.TestCertificates;
import io.verbatim.net.Tls;
import io.verbatim.testkit.ReplicationChecks;
import io.verbatim.testkit.ReplicationRecorder;
import io.verbatim.testkit.Traffic;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import javax.net.ssl.SSLException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.netty.DisposableServer;
import reactor.netty.http.client.HttpClient;
import reactor.netty.http.server.HttpServer;

/** Two clusters replicating over mutual TLS, with certificates a test CA made; strangers are refused. */
class TlsTest {
    @TempDir
    Path dir;
    private EmbeddedRuntime runtime;

    @AfterEach
    void stop() {
        if (runtime != null) {
            runtime.close();
        }
    }

    private String config(TestCertificates ca, String clientAuth) throws Exception {
        Path[] a = ca.issue("a");
        Path[] b = ca.issue("broker-b");
        return """
                clusters:
                  - {name: a, token: a-token, tls: {certificateChain: '%s', privateKey: '%s'}}
                  - {name: b, token: b-token, certificateName: broker-b, tls: {certificateChain: '%s', privateKey: '%s'}}
                topics: [{name: t, initialSegments: 2, bucketBudget: 4}]
                replication: {startAt: earliest, retry: {initial: 20ms, max: 300ms}}
                exchange: {antiEntropyInterval: 300ms, retry: {initial: 20ms, max: 300ms}}
                security:
                  adminToken: admin-token
                  tls: {enabled: true, trustedCertificates: '%s', clientAuth: %s}
                """.formatted(a[0], a[1], b[0], b[1], ca.caFile(), clientAuth);
    }

    @Test
    void twoClustersReplicateOverMutualTlsAndAClientWithoutTheCaOrWithAWrongCertificateIsRefused() throws Exception {
        TestCertificates ca = new TestCertificates(dir, "test-ca");
        runtime = EmbeddedRuntime.start(VerbatimConfig.parse(config(ca, "require")));
        ReplicationRecorder recorder = ReplicationRecorder.attach(runtime.storages("t"), true);
        ClusterNode a = runtime.cluster("a");
        assertThat(a.adminUrl()).startsWith("https://127.0.0.1:");
        assertThat(a.brokerUrls()).allMatch(u -> u.startsWith("https://"));
        Traffic traffic = new Traffic(Map.of("a", a.producer("t", Compression.LZ4)::sendNow,
                "b", runtime.cluster("b").producer("t", Compression.LZ4)::sendNow), 50, 0.0, 3);
        for (int i = 0; i < 10; i++) {
            traffic.round(20);
        }
        runtime.awaitQuiet(Duration.ofSeconds(30)).block();
        List<ReplicationChecks.Check> checks = recorder.checks(traffic.produced());
        assertThat(checks).allSatisfy(c -> assertThat(c.passed()).as(c.name() + ": " + c.detail()).isTrue());

        String status = a.adminUrl() + ExchangeServer.STATUS_PATH;
        // No CA: the JDK does not trust the node's certificate.
        assertThatThrownBy(() -> java.net.http.HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(status))
                .build(), HttpResponse.BodyHandlers.ofString())).isInstanceOf(SSLException.class);
        // The CA but no client certificate: the port requires one.
        assertThat(call(status, client(ca.caFile(), null), null)).startsWith("failed");
        // A certificate from another CA: refused in the handshake.
        TestCertificates rogue = new TestCertificates(dir, "rogue-ca");
        assertThat(call(status, client(ca.caFile(), rogue.issue("a")), null)).startsWith("failed");
        // a's own certificate: in, and it is a's identity even without a token.
        Path[] asA = ca.issue("a");
        assertThat(call(status, client(ca.caFile(), asA), null)).startsWith("200");
        // A signature of another cluster than the certificate names: 403; of the same: in.
        assertThat(call(status, client(ca.caFile(), ca.issue("broker-b")), TestNet.signed("a", "a", "GET", status)))
                .startsWith("403").contains("the client certificate identifies cluster b but the call is signed by "
                        + "cluster a");
        assertThat(call(status, client(ca.caFile(), ca.issue("broker-b")), TestNet.signed("b", "a", "GET", status)))
                .startsWith("200");
    }

    @Test
    void clientsCheckTheServersHostName() throws Exception {
        TestCertificates ca = new TestCertificates(dir, "test-ca");
        Path[] elsewhere = ca.issueFor("a", "elsewhere.example");
        Path[] client = ca.issue("b");
        Tls serving = new Tls(elsewhere[0], elsewhere[1], ca.caFile(), ClientAuth.NONE);
        NetServer net = new NetServer(TestNet.authenticator("a"), NetworkLimits.defaults(), serving.serverContext());
        DisposableServer server = net.apply(HttpServer.create().host("127.0.0.1").port(0), "t")
                .route(r -> r.get("/", (req, res) -> res.sendString(Mono.just("ok")))).bindNow();
        try {
            NetClient peer = NetClient.of("b", TestNet.key("b"), NetworkLimits.defaults(), Optional.of(
                    new Tls(client[0], client[1], ca.caFile(), ClientAuth.NONE).clientContext()),
                    Schedulers.parallel());
            String answer;
            try {
                answer = peer.signing(HttpClient.create(), "a").get().uri("https://127.0.0.1:" + server.port() + "/")
                        .responseContent().aggregate().asString().block(Duration.ofSeconds(10));
            } catch (RuntimeException e) {
                answer = "failed: " + e;
            }
            assertThat(answer).as("signed by the CA, but for another host").startsWith("failed")
                    .contains("No subject alternative names matching IP address 127.0.0.1");
        } finally {
            server.disposeNow();
        }
    }

    @Test
    void aMissingPemFileIsAConfigErrorNamingTheKeyAndTheFile() throws Exception {
        TestCertificates ca = new TestCertificates(dir, "test-ca");
        String yaml = config(ca, "optional").replace(ca.caFile().toString(), dir.resolve("nope.pem").toString());
        assertThatThrownBy(() -> VerbatimConfig.parse(yaml)).isInstanceOf(ConfigException.class)
                .hasMessageContaining("security.tls.trustedCertificates: file " + dir.resolve("nope.pem")
                        + " does not exist");
    }

    private static SslContext client(Path ca, Path[] own) throws Exception {
        SslContextBuilder b = SslContextBuilder.forClient().trustManager(ca.toFile());
        if (own != null) {
            b.keyManager(own[0].toFile(), own[1].toFile());
        }
        return b.build();
    }

    /** {@code status: body}, or {@code failed: why} when the connection did not get that far. */
    /** @param authorization the whole Authorization header, or null */
    private static String call(String url, SslContext tls, String authorization) {
        try {
            return HttpClient.create().secure(s -> s.sslContext(tls).handlerConfigurator(Tls.verifyHostname()))
                    .headers(h -> {
                        if (authorization != null) {
                            h.set("Authorization", authorization);
                        }
                    })
                    .get().uri(url).responseSingle((r, body) -> body.asString().defaultIfEmpty("")
                            .map(t -> r.status().code() + ": " + t))
                    .block(Duration.ofSeconds(10));
        } catch (RuntimeException e) {
            return "failed: " + e;
        }
    }
}
