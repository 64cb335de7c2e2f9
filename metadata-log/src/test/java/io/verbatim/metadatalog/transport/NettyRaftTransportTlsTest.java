package io.verbatim.metadatalog.transport;

import static io.verbatim.metadatalog.transport.Messages.append;
import static org.assertj.core.api.Assertions.assertThat;

import io.netty.handler.ssl.ClientAuth;
import io.verbatim.metadatalog.transport.Messages.Inbox;
import io.verbatim.metadatalog.transport.RaftTransportMetrics.Refusal;
import io.verbatim.net.TestCertificates;
import io.verbatim.net.Tls;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Mutual TLS with certificates made at test time: the group's CA, one certificate per member (CN = id). */
class NettyRaftTransportTlsTest {
    private static final String GROUP = "meta";
    @TempDir
    static Path dir;
    private static TestCertificates ca;
    private static TestCertificates rogue;
    private final List<NettyRaftTransport> started = new ArrayList<>();

    @BeforeAll
    static void certificates() throws Exception {
        ca = new TestCertificates(dir, "group-ca");
        rogue = new TestCertificates(dir, "rogue-ca");
    }

    @AfterEach
    void closeAll() {
        started.forEach(NettyRaftTransport::close);
    }

    /** {@code member} with a certificate of {@code issuer} naming {@code cn}, trusting the group's CA. */
    private NettyRaftTransport member(String member, TestCertificates issuer, String cn, Map<String, String> peers)
            throws Exception {
        Path[] cert = issuer.issue(cn);
        return start(NettyGroup.builder(member, GROUP).tls(new Tls(cert[0], cert[1], ca.caFile(), ClientAuth.REQUIRE))
                .peers(peers));
    }

    private NettyRaftTransport start(NettyRaftTransport.Builder builder) {
        NettyRaftTransport t = builder.bind("127.0.0.1", 0).start();
        started.add(t);
        return t;
    }

    private static Map<String, String> at(String member, NettyRaftTransport t) {
        return Map.of(member, "127.0.0.1:" + t.port());
    }

    @Test
    void deliversOverMutualTls() throws Exception {
        NettyRaftTransport a = member("a", ca, "a", Map.of("b", "127.0.0.1:1"));
        NettyRaftTransport b = member("b", ca, "b", at("a", a));
        try (Inbox atA = new Inbox(a)) {
            Poll.until("a gets b's message over TLS", () -> atA.size() >= 1,
                    () -> b.send(append("b", "a", GROUP, 1)));
        }
        assertThat(a.metrics().refused()).isZero();
    }

    @Test
    void refusesAClientCertificateOfAnotherCa() throws Exception {
        NettyRaftTransport a = member("a", ca, "a", Map.of("b", "127.0.0.1:1"));
        NettyRaftTransport b = member("b", rogue, "b", at("a", a));
        refusedWhileSending(a, b, Refusal.TLS);
    }

    @Test
    void refusesAClientWithoutTls() throws Exception {
        NettyRaftTransport a = member("a", ca, "a", Map.of("b", "127.0.0.1:1"));
        NettyRaftTransport b = start(NettyGroup.builder("b", GROUP).peers(at("a", a)));
        refusedWhileSending(a, b, Refusal.TLS);
    }

    @Test
    void refusesACertificateNamingAnotherMember() throws Exception {
        NettyRaftTransport a = member("a", ca, "a", Map.of("b", "127.0.0.1:1", "c", "127.0.0.1:1"));
        NettyRaftTransport b = member("b", ca, "c", at("a", a)); // a valid certificate, but c's
        refusedWhileSending(a, b, Refusal.CERTIFICATE_MISMATCH);
    }

    @Test
    void acceptsAnyNameOfTheCaWhenNameChecksAreOff() throws Exception {
        Path[] cert = ca.issue("node-1.example");
        Tls tls = new Tls(cert[0], cert[1], ca.caFile(), ClientAuth.REQUIRE);
        NettyRaftTransport a = start(NettyGroup.builder("a", GROUP).tls(tls).certificateNameCheck(false)
                .peers(Map.of("b", "127.0.0.1:1")));
        NettyRaftTransport b = start(NettyGroup.builder("b", GROUP).tls(tls)
                .certificateNameCheck(false).peers(at("a", a)));
        try (Inbox atA = new Inbox(a)) {
            Poll.until("a gets b's message", () -> atA.size() >= 1, () -> b.send(append("b", "a", GROUP, 1)));
        }
    }

    private static void refusedWhileSending(NettyRaftTransport a, NettyRaftTransport b, Refusal reason) {
        try (Inbox atA = new Inbox(a)) {
            Poll.until(reason + " counted", () -> a.metrics().refused(reason) >= 1,
                    () -> b.send(append("b", "a", GROUP, 1)));
            assertThat(atA.size()).isZero();
            assertThat(a.metrics().messagesReceived("b")).isZero();
        }
    }
}
