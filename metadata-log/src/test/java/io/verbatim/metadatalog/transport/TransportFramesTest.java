package io.verbatim.metadatalog.transport;

import static io.verbatim.metadatalog.transport.Messages.append;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.verbatim.metadatalog.proto.RaftMessageProto;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** The frame format: handshakes and messages round-trip; anything cut, padded or too long is refused. */
class TransportFramesTest {

    private static byte[] bytes(int n, int seed) {
        byte[] b = new byte[n];
        new SplittableRandom(seed).nextBytes(b);
        return b;
    }

    @Test
    void aHelloAWelcomeAndAProofRoundTrip() {
        byte[] nonce = bytes(32, 1);
        byte[] signature = bytes(64, 2);
        ByteBuf b = Unpooled.buffer();
        Frames.writeHello(b, "us-east.c1", "meta", "c2", nonce);
        assertThat(b.readInt()).isEqualTo(b.readableBytes());
        assertThat(b.readByte()).isEqualTo(Frames.HELLO);
        Frames.Hello h = Frames.readHello(b);
        assertThat(List.of(h.member(), h.group(), h.server())).containsExactly("us-east.c1", "meta", "c2");
        assertThat(h.nonce()).isEqualTo(nonce);
        ByteBuf w = Unpooled.buffer();
        Frames.writeWelcome(w, "a", "meta", nonce, signature);
        w.skipBytes(4);
        assertThat(w.readByte()).isEqualTo(Frames.WELCOME);
        Frames.Welcome welcome = Frames.readWelcome(w);
        assertThat(List.of(welcome.member(), welcome.group())).containsExactly("a", "meta");
        assertThat(welcome.nonce()).isEqualTo(nonce);
        assertThat(welcome.signature()).isEqualTo(signature);
        ByteBuf p = Unpooled.buffer();
        Frames.writeProof(p, signature);
        p.skipBytes(4);
        assertThat(p.readByte()).isEqualTo(Frames.PROOF);
        assertThat(Frames.readProof(p)).isEqualTo(signature);
        assertThat(b.writerIndex()).isLessThanOrEqualTo(Frames.MAX_HANDSHAKE_BYTES);
    }

    @Test
    void aHandshakeCutShortPaddedOrOfTheOldVersionIsRefused() {
        ByteBuf b = Unpooled.buffer();
        Frames.writeHello(b, "a", "meta", "b", bytes(32, 3));
        byte[] whole = Arrays.copyOfRange(b.array(), 5, b.writerIndex());
        for (int cut = 0; cut < whole.length; cut++) {
            ByteBuf part = Unpooled.wrappedBuffer(Arrays.copyOf(whole, cut));
            assertThatThrownBy(() -> Frames.readHello(part)).isInstanceOf(IllegalArgumentException.class);
        }
        ByteBuf padded = Unpooled.wrappedBuffer(Arrays.copyOf(whole, whole.length + 1));
        assertThatThrownBy(() -> Frames.readHello(padded)).hasMessageContaining("after the handshake");
        byte[] old = whole.clone();
        old[0] = 1;
        assertThatThrownBy(() -> Frames.readHello(Unpooled.wrappedBuffer(old))).hasMessageContaining("version 1")
                .hasMessageContaining("upgrade it");
        assertThatThrownBy(() -> Frames.writeHello(Unpooled.buffer(), "a".repeat(1025), "meta", "b", bytes(32, 4)))
                .hasMessageContaining("1025 bytes");
        assertThatThrownBy(() -> Frames.writeProof(Unpooled.buffer(), bytes(63, 5))).hasMessageContaining("63 bytes");
    }

    /** Whatever bytes come, a HELLO is refused, or it is exactly what a HELLO of its fields encodes. */
    @Test
    void anyBytesAreRefusedOrAreTheHelloTheyEncode() {
        SplittableRandom random = new SplittableRandom(12);
        int parsed = 0;
        for (int i = 0; i < 5000; i++) {
            // a version, three strings of a stated length (the text sometimes longer or shorter), a tail
            ByteBuf j = Unpooled.buffer();
            j.writeByte(random.nextInt(10) == 0 ? random.nextInt(256) : Frames.VERSION);
            for (int k = 0; k < 3; k++) {
                int n = random.nextInt(0, 4);
                j.writeShort(random.nextInt(10) == 0 ? random.nextInt(0, 6) : n);
                for (int c = 0; c < n; c++) {
                    j.writeByte('a' + random.nextInt(26));
                }
            }
            j.writeBytes(bytes(random.nextInt(30, 35), random.nextInt()));
            byte[] junk = ByteBufUtil.getBytes(j);
            Frames.Hello h;
            try {
                h = Frames.readHello(Unpooled.wrappedBuffer(junk));
            } catch (IllegalArgumentException refused) {
                continue;
            }
            parsed++;
            ByteBuf again = Unpooled.buffer();
            Frames.writeHello(again, h.member(), h.group(), h.server(), h.nonce());
            again.skipBytes(5);
            assertThat(ByteBufUtil.getBytes(again)).as(Arrays.toString(junk)).isEqualTo(junk);
        }
        assertThat(parsed).isPositive();
    }

    /** Each side signs a transcript of its own role; no two different handshakes sign alike. */
    @Test
    void theTranscriptsOfTwoRolesOrTwoConnectionsDiffer() {
        byte[] c = bytes(32, 6);
        byte[] s = bytes(32, 7);
        byte[] client = Handshake.transcript(Handshake.Role.CLIENT, "g", "a", "b", c, s);
        assertThat(Handshake.transcript(Handshake.Role.SERVER, "g", "a", "b", c, s)).isNotEqualTo(client);
        assertThat(Handshake.transcript(Handshake.Role.CLIENT, "g", "a", "b", c, bytes(32, 8))).isNotEqualTo(client);
        assertThat(Handshake.transcript(Handshake.Role.CLIENT, "g", "ab", "", c, s))
                .isNotEqualTo(Handshake.transcript(Handshake.Role.CLIENT, "g", "a", "b", c, s));
        assertThat(Handshake.nonce()).hasSize(32).isNotEqualTo(Handshake.nonce());
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
