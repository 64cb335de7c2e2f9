package io.verbatim.metadatalog.transport;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.verbatim.metadatalog.proto.RaftMessageProto;
import io.verbatim.net.SigningKey;
import io.verbatim.net.VerifyingKey;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/** A plain socket speaking the transport's frames by hand, or anything else, to a member's server. */
final class RawPeer implements AutoCloseable {
    private final Socket socket;
    private final OutputStream out;
    private final InputStream in;

    RawPeer(int port) throws IOException {
        socket = new Socket("127.0.0.1", port);
        socket.setSoTimeout((int) (Poll.BOUND_SECONDS * 1000));
        out = socket.getOutputStream();
        in = socket.getInputStream();
    }

    private byte[] clientNonce = new byte[0];
    private Frames.@Nullable Welcome welcome;
    private String member = "";
    private String server = "";
    private String group = "";

    /** Sends a HELLO as {@code member} of {@code group} to {@code server}, with a fresh nonce. */
    void hello(String member, String group, String server) throws IOException {
        hello(member, group, server, Handshake.nonce());
    }

    void hello(String member, String group, String server, byte[] nonce) throws IOException {
        this.member = member;
        this.group = group;
        this.server = server;
        this.clientNonce = nonce;
        ByteBuf b = Unpooled.buffer();
        Frames.writeHello(b, member, group, server, nonce);
        write(ByteBufUtil.getBytes(b));
    }

    /** Reads the server's WELCOME: {@code [member, group]}. */
    String[] welcome() throws IOException {
        DataInputStream d = new DataInputStream(in);
        byte[] body = new byte[d.readInt()];
        d.readFully(body);
        ByteBuf b = Unpooled.wrappedBuffer(body);
        if (b.readByte() != Frames.WELCOME) {
            throw new IOException("not a WELCOME");
        }
        Frames.Welcome w = Frames.readWelcome(b);
        welcome = w;
        return new String[] {w.member(), w.group()};
    }

    /** Whether the WELCOME read is signed with {@code key} over this connection's nonces. */
    boolean welcomeSignedBy(VerifyingKey key) {
        Frames.Welcome w = Objects.requireNonNull(welcome, "a WELCOME read");
        return key.verifies(Handshake.transcript(Handshake.Role.SERVER, group, member, server, clientNonce, w.nonce()),
                w.signature());
    }

    /** The client's signature over this connection's handshake, made with {@code key}. */
    byte[] signature(SigningKey key) {
        Frames.Welcome w = Objects.requireNonNull(welcome, "a WELCOME read");
        return key.sign(Handshake.transcript(Handshake.Role.CLIENT, group, member, server, clientNonce, w.nonce()));
    }

    /** Sends a PROOF carrying {@code signature}. */
    void proof(byte[] signature) throws IOException {
        ByteBuf b = Unpooled.buffer();
        Frames.writeProof(b, signature);
        write(ByteBufUtil.getBytes(b));
    }

    /** The whole handshake as {@code member} (with its key from {@link NettyGroup}) to {@code server}. */
    void handshake(String member, String group, String server) throws IOException {
        hello(member, group, server);
        welcome();
        proof(signature(NettyGroup.signing(member)));
    }

    void send(RaftMessageProto message) throws IOException {
        write(Frames.message(message));
    }

    void write(byte[] bytes) throws IOException {
        out.write(bytes);
        out.flush();
    }

    /** Whether the server closed the connection (end of stream or reset) within the generous bound. */
    boolean closedByServer() throws IOException {
        try {
            while (in.read() >= 0) {
                // a WELCOME or whatever else came before the close
            }
            return true;
        } catch (SocketTimeoutException e) {
            return false;
        } catch (SocketException e) {
            return true; // reset: the server closed with data of ours unread
        }
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
