package io.verbatim.metastore.transport;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.verbatim.metastore.proto.RaftMessageProto;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;

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

    void hello(String member, String group, String secret) throws IOException {
        ByteBuf b = Unpooled.buffer();
        Frames.writeHello(b, member, group, secret);
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
        Frames.Hello w = Frames.readHandshake(b, false);
        return new String[] {w.member(), w.group()};
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
