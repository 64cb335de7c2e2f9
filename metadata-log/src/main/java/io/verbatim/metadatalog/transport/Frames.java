package io.verbatim.metadatalog.transport;

import com.google.protobuf.CodedOutputStream;
import io.netty.buffer.ByteBuf;
import io.verbatim.metadatalog.proto.RaftMessageProto;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;

/**
 * The wire format of {@link NettyRaftTransport}: frames of a 4-byte big-endian length (of what follows), a
 * kind byte and a body. A connection opens with a handshake in which each side proves who it is by a
 * signature, and no secret goes over the wire: the client's {@code HELLO} names itself, the group, the member
 * it dialled and a fresh nonce; the server's {@code WELCOME} names itself and the group, and carries a fresh
 * nonce of its own and its signature over both nonces, both members and the group; the client's
 * {@code PROOF} carries its own signature over the same (see {@link Handshake}). Then only {@code MESSAGE}
 * frames flow, client to server. Strings are a 2-byte length and UTF-8; nonces and signatures are raw bytes
 * of fixed length.
 *
 * <pre>
 * HELLO   (1): version:u8  member:str  group:str  server:str  nonce:32
 * WELCOME (2): version:u8  member:str  group:str  nonce:32  signature:64
 * MESSAGE (3): RaftMessageProto bytes
 * PROOF   (4): version:u8  signature:64
 * </pre>
 */
final class Frames {
    static final byte HELLO = 1;
    static final byte WELCOME = 2;
    static final byte MESSAGE = 3;
    static final byte PROOF = 4;
    /** 2: signed handshakes (1 presented the group's secret in clear). */
    static final byte VERSION = 2;
    /** The length field and the kind byte. */
    static final int HEADER_BYTES = 5;
    /** The largest string of a handshake (member id, group), in UTF-8 bytes. */
    static final int MAX_STRING_BYTES = 1024;
    static final int NONCE_BYTES = 32;
    static final int SIGNATURE_BYTES = 64;
    /** The largest handshake frame: what an unauthenticated peer can make a server buffer. */
    static final int MAX_HANDSHAKE_BYTES = 4 + 1 + 1 + 3 * (2 + MAX_STRING_BYTES) + NONCE_BYTES + SIGNATURE_BYTES;

    private Frames() {
    }

    /** A client's HELLO as read: who it says it is, the group, the member it dialled, its nonce. */
    record Hello(String member, String group, String server, byte[] nonce) {
    }

    /** A server's WELCOME as read: who it says it is, the group, its nonce and its signature. */
    record Welcome(String member, String group, byte[] nonce, byte[] signature) {
    }

    /** A whole MESSAGE frame, header included: what a peer's queue holds and its counters count. */
    static byte[] message(RaftMessageProto message) {
        int size = message.getSerializedSize();
        byte[] frame = new byte[HEADER_BYTES + size];
        putInt(frame, size + 1);
        frame[4] = MESSAGE;
        try {
            CodedOutputStream out = CodedOutputStream.newInstance(frame, HEADER_BYTES, size);
            message.writeTo(out);
            out.checkNoSpaceLeft();
        } catch (IOException e) {
            throw new UncheckedIOException("a message could not be written to an array of its own size", e);
        }
        return frame;
    }

    /** What {@link #message} makes of {@code message}, in bytes, without making it. */
    static int messageFrameBytes(RaftMessageProto message) {
        return HEADER_BYTES + message.getSerializedSize();
    }

    static void writeHello(ByteBuf out, String member, String group, String server, byte[] nonce) {
        int start = begin(out, HELLO);
        putString(out, member);
        putString(out, group);
        putString(out, server);
        out.writeBytes(fixed(nonce, NONCE_BYTES, "nonce"));
        end(out, start);
    }

    static void writeWelcome(ByteBuf out, String member, String group, byte[] nonce, byte[] signature) {
        int start = begin(out, WELCOME);
        putString(out, member);
        putString(out, group);
        out.writeBytes(fixed(nonce, NONCE_BYTES, "nonce"));
        out.writeBytes(fixed(signature, SIGNATURE_BYTES, "signature"));
        end(out, start);
    }

    static void writeProof(ByteBuf out, byte[] signature) {
        int start = begin(out, PROOF);
        out.writeBytes(fixed(signature, SIGNATURE_BYTES, "signature"));
        end(out, start);
    }

    /**
     * A HELLO body (after the kind byte) as read.
     *
     * @throws IllegalArgumentException naming what is wrong, for anything but a whole HELLO of this version
     */
    static Hello readHello(ByteBuf body) {
        version(body);
        Hello h = new Hello(string(body), string(body), string(body), bytes(body, NONCE_BYTES, "nonce"));
        whole(body);
        return h;
    }

    /** A WELCOME body as read; see {@link #readHello}. */
    static Welcome readWelcome(ByteBuf body) {
        version(body);
        Welcome w = new Welcome(string(body), string(body), bytes(body, NONCE_BYTES, "nonce"),
                bytes(body, SIGNATURE_BYTES, "signature"));
        whole(body);
        return w;
    }

    /** A PROOF body as read: the client's signature; see {@link #readHello}. */
    static byte[] readProof(ByteBuf body) {
        version(body);
        byte[] signature = bytes(body, SIGNATURE_BYTES, "signature");
        whole(body);
        return signature;
    }

    private static void version(ByteBuf body) {
        if (body.readableBytes() < 1) {
            throw new IllegalArgumentException("a handshake cut short");
        }
        byte v = body.readByte();
        if (v != VERSION) {
            throw new IllegalArgumentException("a handshake of version " + v + ", not " + VERSION
                    + (v == 1 ? " (an older member that presents the group's secret: upgrade it)" : ""));
        }
    }

    private static void whole(ByteBuf body) {
        if (body.isReadable()) {
            throw new IllegalArgumentException(body.readableBytes() + " byte(s) after the handshake");
        }
    }

    private static int begin(ByteBuf out, byte kind) {
        int start = out.writerIndex();
        out.writeInt(0).writeByte(kind).writeByte(VERSION);
        return start;
    }

    private static void end(ByteBuf out, int start) {
        out.setInt(start, out.writerIndex() - start - 4);
    }

    private static byte[] fixed(byte[] b, int n, String what) {
        if (b.length != n) {
            throw new IllegalArgumentException("a " + what + " of " + b.length + " bytes, not " + n);
        }
        return b;
    }

    private static byte[] bytes(ByteBuf in, int n, String what) {
        if (in.readableBytes() < n) {
            throw new IllegalArgumentException("a handshake cut short in its " + what);
        }
        byte[] b = new byte[n];
        in.readBytes(b);
        return b;
    }

    private static void putString(ByteBuf out, String s) {
        byte[] b = s.getBytes(StandardCharsets.UTF_8);
        if (b.length > MAX_STRING_BYTES) {
            throw new IllegalArgumentException("a handshake string of " + b.length + " bytes is above "
                    + MAX_STRING_BYTES);
        }
        out.writeShort(b.length).writeBytes(b);
    }

    private static String string(ByteBuf in) {
        if (in.readableBytes() < 2) {
            throw new IllegalArgumentException("a handshake cut short");
        }
        int n = in.readUnsignedShort();
        if (n > MAX_STRING_BYTES || n > in.readableBytes()) {
            throw new IllegalArgumentException("a handshake string of " + n + " bytes, " + in.readableBytes()
                    + " left");
        }
        String s;
        try {
            s = StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT).decode(in.readSlice(n).nioBuffer()).toString();
        } catch (CharacterCodingException e) {
            throw new IllegalArgumentException("a handshake string that is not UTF-8");
        }
        if (s.isEmpty()) {
            throw new IllegalArgumentException("an empty handshake string");
        }
        return s;
    }

    private static void putInt(byte[] a, int v) {
        a[0] = (byte) (v >>> 24);
        a[1] = (byte) (v >>> 16);
        a[2] = (byte) (v >>> 8);
        a[3] = (byte) v;
    }
}
