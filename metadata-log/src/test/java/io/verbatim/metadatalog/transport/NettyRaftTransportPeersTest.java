package io.verbatim.metadatalog.transport;

import static io.verbatim.metadatalog.transport.Messages.append;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.verbatim.metadatalog.transport.Messages.Inbox;
import io.verbatim.metadatalog.transport.RaftTransportMetrics.Drop;
import io.verbatim.metadatalog.transport.RaftTransportMetrics.Refusal;
import io.verbatim.net.NetworkLimits;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Peers change at runtime; a bound port is named when taken; the meters show what the counters count. */
class NettyRaftTransportPeersTest {
    private static final String GROUP = "meta";
    private final NettyGroup group = new NettyGroup(GROUP, "a", "b");
    private NettyRaftTransport moved;

    @AfterEach
    void closeAll() {
        group.close();
        if (moved != null) {
            moved.close();
        }
    }

    @Test
    void usesAPeersNewAddress() {
        NettyRaftTransport a = group.start("a");
        group.start("b").close(); // a knows b at an address where nothing listens now
        a.send(append("a", "b", GROUP, 0));
        NettyRaftTransport moved = NettyGroup.builder("b", GROUP).bind("127.0.0.1", 0)
                .peers(Map.of("a", "127.0.0.1:" + a.port())).start();
        this.moved = moved;
        String address = "127.0.0.1:" + moved.port();
        a.updatePeers(Map.of("a", "127.0.0.1:" + a.port(), "b", address));
        assertThat(a.peers()).containsExactly(Map.entry("b", address)); // its own id left out
        long[] next = {1};
        try (Inbox atB = new Inbox(moved)) {
            Poll.until("b gets a's message at its new address", () -> atB.size() >= 1,
                    () -> a.send(append("a", "b", GROUP, next[0]++)));
        }
    }

    @Test
    void aRemovedPeerIsHungUpOnAndRefused() {
        NettyRaftTransport a = group.start("a");
        NettyRaftTransport b = group.start("b");
        try (Inbox atA = new Inbox(a)) {
            Poll.until("a gets b's message", () -> atA.size() >= 1, () -> b.send(append("b", "a", GROUP, 1)));
            a.updatePeers(Map.of());
            a.send(append("a", "b", GROUP, 2));
            assertThat(a.metrics().dropped(Drop.UNKNOWN_MEMBER)).isEqualTo(1);
            Poll.until("b's new connection is refused", () -> a.metrics().refused(Refusal.UNKNOWN_MEMBER) >= 1,
                    () -> b.send(append("b", "a", GROUP, 3)));
            assertThat(atA.callIdsFrom("b")).doesNotContain(3L);
        }
    }

    /** Issue 25: a member added at run time (its key registered) is refused until its key is known here. */
    @Test
    void aMemberAddedAtRunTimeIsTakenOnceItsKeyIsKnownAndHungUpOnWhenItsKeyIsReplaced() {
        NettyRaftTransport a = group.start("a");
        NettyRaftTransport x = NettyGroup.builder("x", GROUP).bind("127.0.0.1", 0)
                .peers(Map.of("a", "127.0.0.1:" + a.port())).start();
        moved = x;
        Poll.until("x is refused while a does not know its key", () -> a.metrics().refused(Refusal.UNKNOWN_MEMBER) >= 1,
                () -> x.send(append("x", "a", GROUP, 1)));
        a.updateKeys(a.keys().withVoter("x", NettyGroup.verifying("x")));
        Map<String, String> peers = new java.util.LinkedHashMap<>(a.peers());
        peers.put("x", "127.0.0.1:" + x.port());
        a.updatePeers(peers);
        try (Inbox atA = new Inbox(a)) {
            Poll.until("a takes x's messages", () -> !atA.callIdsFrom("x").isEmpty(),
                    () -> x.send(append("x", "a", GROUP, 2)));
            long refused = a.metrics().refused();
            a.updateKeys(a.keys().withVoter("x", NettyGroup.verifying("y")));
            // (a message racing the hang-up may still land: it was proven under the key of then)
            Poll.until("x, hung up on, cannot prove the replaced key", () -> a.metrics().refused() > refused,
                    () -> x.send(append("x", "a", GROUP, 3)));
        }
        assertThatThrownBy(() -> a.updateKeys(NettyGroup.keys("b", NettyGroup.signing("b"))))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("cannot replace those of a");
    }

    @Test
    void countsReconnectsToARestartedPeer() {
        NettyRaftTransport a = group.start("a");
        NettyRaftTransport b = group.start("b");
        try (Inbox atB = new Inbox(b)) {
            Poll.until("b gets a's message", () -> atB.size() >= 1, () -> a.send(append("a", "b", GROUP, 1)));
        }
        b.close();
        NettyRaftTransport again = group.start("b");
        try (Inbox atB = new Inbox(again)) {
            Poll.until("the restarted b gets a's message", () -> atB.size() >= 1,
                    () -> a.send(append("a", "b", GROUP, 2)));
        }
        assertThat(a.metrics().reconnects("b")).isGreaterThanOrEqualTo(1);
    }

    @Test
    void closesAnIdleConnectionAndRedialsOnTheNextMessage() {
        NettyRaftTransport a = group.start("a");
        NettyRaftTransport b = group.start("b", x -> x.limits(NetworkLimits.defaults()
                .withIdleTimeout(Duration.ofMillis(100))));
        try (Inbox atB = new Inbox(b)) {
            a.send(append("a", "b", GROUP, 1));
            Poll.until("b gets the first", () -> atB.size() == 1);
            Poll.until("b closes the idle connection", () -> b.metrics().connectionsOpen() == 0);
            Poll.until("b gets a later one", () -> atB.size() >= 2, () -> a.send(append("a", "b", GROUP, 2)));
        }
        assertThat(a.metrics().reconnects("b")).isGreaterThanOrEqualTo(1);
        assertThat(b.metrics().refused()).isZero();
    }

    @Test
    void namesTheAddressWhenThePortIsInUse() {
        NettyRaftTransport a = group.start("a");
        assertThatThrownBy(() -> NettyGroup.builder("x", GROUP).bind("127.0.0.1", a.port()).start())
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("127.0.0.1:" + a.port())
                .hasMessageContaining("member x");
    }

    @Test
    void refusesAPeerAddressThatIsNotHostAndPort() {
        NettyRaftTransport a = group.start("a");
        for (String bad : new String[] {"b.example", "b.example:0", "b.example:x", ":7100", "b.example:70000"}) {
            assertThatThrownBy(() -> a.updatePeers(Map.of("b", bad))).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("peer b").hasMessageContaining(bad);
        }
        a.updatePeers(Map.of("b", "[::1]:7100"));
        assertThat(a.peers()).containsEntry("b", "::1:7100");
    }

    @Test
    void theBinderShowsTheCountersPerPeerAndReason() {
        NettyRaftTransport a = group.start("a");
        NettyRaftTransport b = group.start("b");
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        new RaftTransportMetricsBinder(a.metrics()).bindTo(registry);
        a.send(append("a", "z", GROUP, 0));
        try (Inbox atB = new Inbox(b)) {
            a.send(append("a", "b", GROUP, 1)); // one only: the counters are still once it arrived
            Poll.until("b gets a's message", () -> atB.size() == 1);
        }
        assertThat(registry.get(RaftTransportMetricsBinder.BYTES_SENT).tags("member", "a", "peer", "b")
                .functionCounter().count()).isEqualTo(a.metrics().bytesSent("b")).isPositive();
        assertThat(registry.get(RaftTransportMetricsBinder.MESSAGES_SENT).tags("peer", "b").functionCounter().count())
                .isEqualTo(a.metrics().messagesSent("b"));
        assertThat(registry.get(RaftTransportMetricsBinder.DROPPED).tags("reason", "unknown_member")
                .functionCounter().count()).isEqualTo(1);
        assertThat(registry.find(RaftTransportMetricsBinder.REFUSED).functionCounters())
                .hasSize(RaftTransportMetrics.Refusal.values().length);
    }
}
