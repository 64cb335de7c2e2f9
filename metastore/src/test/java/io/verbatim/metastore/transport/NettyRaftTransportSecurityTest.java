package io.verbatim.metastore.transport;

import static io.verbatim.metastore.transport.Messages.append;
import static org.assertj.core.api.Assertions.assertThat;

import io.verbatim.metastore.transport.Messages.Inbox;
import io.verbatim.metastore.transport.RaftTransportMetrics.Drop;
import io.verbatim.metastore.transport.RaftTransportMetrics.Refusal;
import io.verbatim.net.Token;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Who may speak to a member's server, and as whom. */
class NettyRaftTransportSecurityTest {
    private static final String GROUP = "meta";
    private final NettyGroup group = new NettyGroup(GROUP, "a", "b");
    private NettyRaftTransport intruder;

    @AfterEach
    void closeAll() {
        group.close();
        if (intruder != null) {
            intruder.close();
        }
    }

    /** A member "b" of {@code group} with {@code secret}, its only peer a. */
    private NettyRaftTransport peerOf(NettyRaftTransport a, String member, String group, String secret) {
        intruder = NettyRaftTransport.builder(member, group, Token.clear(secret)).bind("127.0.0.1", 0)
                .peers(Map.of("a", "127.0.0.1:" + a.port())).start();
        return intruder;
    }

    private void refusedWhileSending(NettyRaftTransport a, NettyRaftTransport from, String group, Refusal reason) {
        try (Inbox atA = new Inbox(a)) {
            Poll.until(reason + " counted", () -> a.metrics().refused(reason) >= 1,
                    () -> from.send(append(from.member(), "a", group, 1)));
            assertThat(atA.size()).isZero();
            assertThat(a.metrics().messagesReceived(from.member())).isZero();
        }
    }

    @Test
    void refusesAWrongSecret() {
        NettyRaftTransport a = group.start("a");
        group.start("b").close(); // a knows b
        refusedWhileSending(a, peerOf(a, "b", GROUP, "not-the-secret"), GROUP, Refusal.BAD_SECRET);
    }

    @Test
    void refusesAWrongGroup() {
        NettyRaftTransport a = group.start("a");
        group.start("b").close();
        refusedWhileSending(a, peerOf(a, "b", "another", NettyGroup.SECRET), "another", Refusal.WRONG_GROUP);
    }

    @Test
    void refusesAMemberThatIsNotAPeer() {
        NettyRaftTransport a = group.start("a");
        refusedWhileSending(a, peerOf(a, "z", GROUP, NettyGroup.SECRET), GROUP, Refusal.UNKNOWN_MEMBER);
    }

    @Test
    void dropsAMessageWhoseSenderOrGroupIsNotTheHandshakes() throws Exception {
        NettyRaftTransport a = group.start("a");
        group.start("b").close();
        try (Inbox atA = new Inbox(a); RawPeer b = new RawPeer(a.port())) {
            b.hello("b", GROUP, NettyGroup.SECRET);
            assertThat(b.welcome()).containsExactly("a", GROUP);
            b.send(append("c", "a", GROUP, 1)); // b speaking as c
            b.send(append("b", "a", "another", 2));
            b.send(append("b", "z", GROUP, 3));
            b.send(append("b", "a", GROUP, 4));
            Poll.until("a gets b's genuine message", () -> atA.size() >= 1);
            assertThat(atA.callIdsFrom("b")).containsExactly(4L);
            assertThat(atA.size()).isEqualTo(1);
            assertThat(a.metrics().dropped(Drop.SPOOFED_SENDER)).isEqualTo(1);
            assertThat(a.metrics().dropped(Drop.WRONG_GROUP)).isEqualTo(1);
            assertThat(a.metrics().dropped(Drop.MISADDRESSED)).isEqualTo(1);
        }
    }

    @Test
    void refusesAMessageBeforeTheHandshake() throws Exception {
        NettyRaftTransport a = group.start("a");
        try (RawPeer raw = new RawPeer(a.port())) {
            raw.send(append("b", "a", GROUP, 1));
            assertThat(raw.closedByServer()).isTrue();
        }
        Poll.until("the refusal counted", () -> a.metrics().refused(Refusal.BAD_HANDSHAKE) == 1);
        assertThat(a.metrics().dropped(Drop.UNAUTHENTICATED)).isEqualTo(1);
    }

    @Test
    void closesAConnectionThatNeverHandshakesAfterTheTimeout() throws Exception {
        NettyRaftTransport a = group.start("a", b -> b.handshakeTimeout(java.time.Duration.ofMillis(200)));
        try (RawPeer silent = new RawPeer(a.port())) {
            assertThat(silent.closedByServer()).isTrue();
        }
        Poll.until("the refusal counted", () -> a.metrics().refused(Refusal.NO_HANDSHAKE) == 1);
    }

    @Test
    void refusesConnectionsOverThePortsLimit() throws Exception {
        NettyRaftTransport a = group.start("a", b -> b.limits(io.verbatim.net.NetworkLimits.defaults()
                .withMaxConnectionsPerPort(1)));
        group.start("b").close();
        try (RawPeer first = new RawPeer(a.port())) {
            first.hello("b", GROUP, NettyGroup.SECRET);
            first.welcome(); // the first is counted before the second is accepted
            try (RawPeer second = new RawPeer(a.port())) {
                assertThat(second.closedByServer()).isTrue();
            }
            Poll.until("the refusal counted", () -> a.metrics().refused(Refusal.OVER_LIMIT) == 1);
            assertThat(a.metrics().refused()).isEqualTo(1);
        }
    }
}
