package io.verbatim.metastore.transport;

import com.google.protobuf.CodedOutputStream;
import io.netty.buffer.ByteBuf;
import io.verbatim.metastore.proto.RaftMessageProto;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import org.jspecify.annotations.Nullable;

/**
 * The wire format of {@link NettyRaftTransport}: frames of a 4-byte big-endian length (of what follows), a
 * kind byte and a body. A connection opens with {@code HELLO} (client) and {@code WELCOME} (server); then
 * only {@code MESSAGE} frames flow, client to server. Strings are a 2-byte length and UTF-8.
 *
 * <pre>
 * HELLO   (1): version:u8  member:str  group:str  secret:str
 * WELCOME (2): version:u8  member:str  group:str
 * MESSAGE (3): RaftMessageProto bytes
 * </pre>
 */
final class Frames {
    static final byte HELLO = 1;
    static final byte WELCOME = 2;
    static final byte MESSAGE = 3;
    static final byte VERSION = 1;
    /** The length field and the kind byte. */
    static final int HEADER_BYTES = 5;
    /** The largest string of a handshake (member id, group, secret), in UTF-8 bytes. */
    static final int MAX_STRING_BYTES = 1024;
    /** The largest handshake frame: what an unauthenticated peer can make a server buffer. */
    static final int MAX_HANDSHAKE_BYTES = 4 + 1 + 1 + 3 * (2 + MAX_STRING_BYTES);

    private Frames() {
    }

    /** A handshake as read: who the peer says it is, and (from a client) the secret it presents. */
    record Hello(String member, String group, @Nullable String secret) {
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

    static void writeHello(ByteBuf out, String member, String group, String secret) {
        handshake(out, HELLO, member, group, secret);
    }

    static void writeWelcome(ByteBuf out, String member, String group) {
        handshake(out, WELCOME, member, group, null);
    }

    /**
     * A handshake body (after the kind byte) as read.
     *
     * @throws IllegalArgumentException naming what is wrong, for anything but a whole handshake of version 1
     */
    static Hello readHandshake(ByteBuf body, boolean withSecret) {
        if (body.readableBytes() < 1 || body.readByte() != VERSION) {
            throw new IllegalArgumentException("not a handshake of version " + VERSION);
        }
        Hello hello = new Hello(string(body), string(body), withSecret ? string(body) : null);
        if (body.isReadable()) {
            throw new IllegalArgumentException(body.readableBytes() + " byte(s) after the handshake");
        }
        return hello;
    }

    private static void handshake(ByteBuf out, byte kind, String member, String group, @Nullable String secret) {
        int start = out.writerIndex();
        out.writeInt(0).writeByte(kind).writeByte(VERSION);
        putString(out, member);
        putString(out, group);
        if (secret != null) {
            putString(out, secret);
        }
        out.setInt(start, out.writerIndex() - start - 4);
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
        String s = in.readCharSequence(n, StandardCharsets.UTF_8).toString();
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
