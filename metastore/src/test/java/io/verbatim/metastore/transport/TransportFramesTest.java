package io.verbatim.metastore.transport;

import static io.verbatim.metastore.transport.Messages.append;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.verbatim.metastore.proto.RaftMessageProto;
import java.util.Arrays;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** The frame format: handshakes and messages round-trip; anything cut, padded or too long is refused. */
class TransportFramesTest {

    @Test
    void aHelloAndAWelcomeRoundTrip() {
        ByteBuf b = Unpooled.buffer();
        Frames.writeHello(b, "us-east.c1", "meta", "s3cret");
        assertThat(b.readInt()).isEqualTo(b.readableBytes());
        assertThat(b.readByte()).isEqualTo(Frames.HELLO);
        assertThat(Frames.readHandshake(b, true)).isEqualTo(new Frames.Hello("us-east.c1", "meta", "s3cret"));
        ByteBuf w = Unpooled.buffer();
        Frames.writeWelcome(w, "a", "meta");
        w.skipBytes(5);
        assertThat(Frames.readHandshake(w, false)).isEqualTo(new Frames.Hello("a", "meta", null));
    }

    @Test
    void aHandshakeCutShortOrPaddedIsRefused() {
        ByteBuf b = Unpooled.buffer();
        Frames.writeHello(b, "a", "meta", "s3cret");
        byte[] whole = Arrays.copyOfRange(b.array(), 5, b.writerIndex());
        for (int cut = 0; cut < whole.length; cut++) {
            ByteBuf part = Unpooled.wrappedBuffer(Arrays.copyOf(whole, cut));
            assertThatThrownBy(() -> Frames.readHandshake(part, true)).isInstanceOf(IllegalArgumentException.class);
        }
        ByteBuf padded = Unpooled.wrappedBuffer(Arrays.copyOf(whole, whole.length + 1));
        assertThatThrownBy(() -> Frames.readHandshake(padded, true)).hasMessageContaining("after the handshake");
        assertThatThrownBy(() -> Frames.writeHello(Unpooled.buffer(), "a".repeat(1025), "meta", "s"))
                .hasMessageContaining("1025 bytes");
    }

    /** Whatever bytes come, a handshake is refused, or it is exactly what a HELLO of its fields encodes. */
    @Test
    void anyBytesAreRefusedOrAreTheHelloTheyEncode() {
        SplittableRandom random = new SplittableRandom(12);
        for (int i = 0; i < 5000; i++) {
            byte[] junk = new byte[random.nextInt(1, 24)];
            random.nextBytes(junk);
            junk[0] = Frames.VERSION;
            for (int j = 1; j < junk.length; j += 3) {
                junk[j] = 0; // short strings, so that some parse
            }
            Frames.Hello h;
            try {
                h = Frames.readHandshake(Unpooled.wrappedBuffer(junk), true);
            } catch (IllegalArgumentException refused) {
                continue;
            }
            ByteBuf again = Unpooled.buffer();
            Frames.writeHello(again, h.member(), h.group(), h.secret());
            again.skipBytes(5);
            assertThat(io.netty.buffer.ByteBufUtil.getBytes(again)).as(Arrays.toString(junk)).isEqualTo(junk);
        }
    }

    @Test
    void aMessageFrameIsItsLengthKindAndBytes() throws Exception {
        RaftMessageProto m = append("a", "b", "meta", 7, 100);
        byte[] frame = Frames.message(m);
        assertThat(frame).hasSize(Frames.messageFrameBytes(m));
        ByteBuf b = Unpooled.wrappedBuffer(frame);
        assertThat(b.readInt()).isEqualTo(m.getSerializedSize() + 1);
        assertThat(b.readByte()).isEqualTo(Frames.MESSAGE);
        assertThat(RaftMessageProto.parseFrom(b.nioBuffer())).isEqualTo(m);
    }

    @Test
    void anAddressIsHostAndPort() {
        assertThat(PeerAddress.parse("b", "10.0.0.2:7100").getHostString()).isEqualTo("10.0.0.2");
        assertThat(PeerAddress.parse("b", "[::1]:7100").getHostString()).isEqualTo("::1");
        assertThat(PeerAddress.parse("b", "b.example:1").getPort()).isEqualTo(1);
        assertThatThrownBy(() -> PeerAddress.parse("b", null)).hasMessageContaining("peer b");
    }
}
