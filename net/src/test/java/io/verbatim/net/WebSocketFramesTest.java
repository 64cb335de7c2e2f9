package io.verbatim.net;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;

/** A WebSocket on a port of {@link NetServer}: no extension is negotiated, so a frame with an RSV bit fails it. */
class WebSocketFramesTest {
    private final NetServer net = new NetServer(new Authenticator(Map.of("a", Token.clear("a-secret")), Optional.empty(),
            Map.of(), true), NetworkLimits.defaults());
    private final DisposableServer server = net.apply(HttpServer.create().host("127.0.0.1").port(0), "test")
            .route(r -> r.ws("/echo", (in, out) -> out.send(in.receive().retain())))
            .bindNow();
    private final Peers peers = new Peers(server.port());

    @AfterEach
    void stop() throws IOException {
        peers.close();
        server.disposeNow();
    }

    private Socket upgraded() throws IOException {
        Socket s = peers.open(1);
        Peers.send(s, "GET /echo HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
                + "Sec-WebSocket-Extensions: permessage-deflate\r\n\r\n");
        String answer = Peers.answer(s);
        assertThat(answer).startsWith("HTTP/1.1 101 ").doesNotContainIgnoringCase("sec-websocket-extensions");
        return s;
    }

    /** A masked client frame: FIN, the given RSV bits and opcode, the payload. */
    private static byte[] frame(int rsv, int opcode, byte[] payload) {
        byte[] mask = {1, 2, 3, 4};
        byte[] out = new byte[2 + 4 + payload.length];
        out[0] = (byte) (0x80 | (rsv << 4) | opcode);
        out[1] = (byte) (0x80 | payload.length);
        System.arraycopy(mask, 0, out, 2, 4);
        for (int i = 0; i < payload.length; i++) {
            out[6 + i] = (byte) (payload[i] ^ mask[i % 4]);
        }
        return out;
    }

    /** One server frame: its first byte (FIN, RSV, opcode) and payload. */
    private static int[] readFrameHead(InputStream in, byte[][] payload) throws IOException {
        DataInputStream d = new DataInputStream(in);
        int b0 = d.readUnsignedByte();
        int length = d.readUnsignedByte() & 0x7f;
        payload[0] = d.readNBytes(length);
        return new int[] {b0 & 0x0f, length};
    }

    @Test
    void aFrameWithAnRsvBitSetFailsTheWebSocketWithAProtocolError() throws Exception {
        for (int rsv : new int[] {4, 2, 1}) { // RSV1, RSV2, RSV3
            Socket s = upgraded();
            s.getOutputStream().write(frame(0, 2, "fine".getBytes(StandardCharsets.US_ASCII)));
            byte[][] payload = new byte[1][];
            assertThat(readFrameHead(s.getInputStream(), payload)[0]).as("binary echoed").isEqualTo(2);
            assertThat(new String(payload[0], StandardCharsets.US_ASCII)).isEqualTo("fine");

            s.getOutputStream().write(frame(rsv, 2, "compressed?".getBytes(StandardCharsets.US_ASCII)));
            assertThat(readFrameHead(s.getInputStream(), payload)[0]).as("a close frame").isEqualTo(8);
            assertThat(((payload[0][0] & 0xff) << 8) | (payload[0][1] & 0xff)).as("1002, protocol error").isEqualTo(1002);
            assertThat(Peers.closed(s, Duration.ofSeconds(5))).isTrue();
        }
    }
}
