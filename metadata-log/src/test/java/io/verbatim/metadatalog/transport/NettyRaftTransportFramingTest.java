package io.verbatim.metadatalog.transport;

import static io.verbatim.metadatalog.transport.Messages.append;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;

import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.verbatim.metadatalog.transport.Messages.Inbox;
import io.verbatim.metadatalog.transport.RaftTransportMetrics.Drop;
import io.verbatim.metadatalog.transport.RaftTransportMetrics.Refusal;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** What a server does with frames it cannot take: it closes that connection, counts it, and serves on. */
class NettyRaftTransportFramingTest {
    private static final String GROUP = "meta";
    private static final int MAX_FRAME = 64 << 10;
    private final NettyGroup group = new NettyGroup(GROUP, "a", "b");

    @AfterEach
    void closeAll() {
        group.close();
    }

    private NettyRaftTransport a() {
        return group.start("a", b -> b.maxFrameBytes(MAX_FRAME));
    }

    /** b, a real peer, still reaches a. */
    private void stillServes(NettyRaftTransport a) {
        NettyRaftTransport b = group.start("b");
        try (Inbox atA = new Inbox(a)) {
            Poll.until("b still reaches a", () -> atA.size() >= 1, () -> b.send(append("b", "a", GROUP, 9)));
        }
    }

    @Test
    void anOversizedFrameClosesItsConnectionOnly() throws Exception {
        NettyRaftTransport a = a();
        group.start("b").close();
        try (RawPeer raw = new RawPeer(a.port())) {
            raw.handshake("b", GROUP, "a");
            raw.write(new byte[] {0, 0x10, 0, 0, Frames.MESSAGE}); // announces 1 MiB
            assertThat(raw.closedByServer()).isTrue();
        }
        Poll.until("the drop counted", () -> a.metrics().dropped(Drop.OVERSIZED) == 1);
        stillServes(a);
    }

    @Test
    void aMessageAboveTheFrameSizeIsNotSent() {
        NettyRaftTransport a = a();
        group.start("b");
        a.updatePeers(group.addresses());
        a.send(append("a", "b", GROUP, 1, MAX_FRAME));
        assertThat(a.metrics().dropped(Drop.OVERSIZED)).isEqualTo(1);
        assertThat(a.metrics().messagesSent("b")).isZero();
    }

    @Test
    void aMalformedMessageClosesItsConnection() throws Exception {
        NettyRaftTransport a = a();
        group.start("b").close();
        try (RawPeer raw = new RawPeer(a.port())) {
            raw.handshake("b", GROUP, "a");
            raw.write(new byte[] {0, 0, 0, 4, Frames.MESSAGE, (byte) 0xff, (byte) 0xff, (byte) 0xff});
            assertThat(raw.closedByServer()).isTrue();
        }
        Poll.until("the drop counted", () -> a.metrics().dropped(Drop.MALFORMED) == 1);
        stillServes(a);
    }

    @Test
    void garbageBeforeTheHandshakeIsRefusedWithoutAWarning() throws Exception {
        NettyRaftTransport a = a();
        try (NettyLogs logs = new NettyLogs()) {
            try (RawPeer raw = new RawPeer(a.port())) {
                raw.write("GET / HTTP/1.1\r\nHost: a\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
                assertThat(raw.closedByServer()).isTrue();
            }
            try (RawPeer raw = new RawPeer(a.port())) {
                raw.write(new byte[] {0, 0, 0, 3, Frames.HELLO, 7, 7});
                assertThat(raw.closedByServer()).isTrue();
            }
            Poll.until("the refusals counted", () -> a.metrics().refused(Refusal.BAD_HANDSHAKE) == 2);
            stillServes(a);
            assertThat(logs.records).isEmpty();
        }
    }

    /** In an embedded pipeline: garbage never reaches the tail (where Netty would log it) nor the bridge. */
    @Test
    void garbageEndsAtTheInboundHandler() {
        NettyRaftTransport a = a();
        for (byte[] garbage : new byte[][] {"\u0016\u0003\u0001 not TLS".getBytes(StandardCharsets.ISO_8859_1),
                {(byte) 0x80, 0, 0, 0, 1}, {0, 0, 0, 0}, {0, 0, 0, 2, Frames.HELLO, 9}}) {
            FrameDecoder decoder = new FrameDecoder(MAX_FRAME);
            EmbeddedChannel ch = new EmbeddedChannel(decoder, new InboundHandler(a, decoder));
            ch.writeInbound(Unpooled.wrappedBuffer(Arrays.copyOf(garbage, garbage.length)));
            ch.runPendingTasks();
            assertThatCode(ch::checkException).as(Arrays.toString(garbage)).doesNotThrowAnyException();
            assertThat((Object) ch.readInbound()).isNull();
            assertThat(ch.isOpen()).as(Arrays.toString(garbage)).isFalse();
            ch.finishAndReleaseAll();
        }
        assertThat(a.metrics().refused(Refusal.BAD_HANDSHAKE)).isEqualTo(4);
    }
}
