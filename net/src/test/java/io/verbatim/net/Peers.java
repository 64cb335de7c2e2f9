package io.verbatim.net;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.BooleanSupplier;

/**
 * Plain sockets to a port, each from a loopback address of its own choosing ({@code 127.0.0.N}: Linux routes
 * all of 127/8 to the loopback), so that one test can be several remote addresses; closed by {@link #close}.
 */
final class Peers implements AutoCloseable {
    private final int port;
    private final List<Socket> sockets = new ArrayList<>();

    Peers(int port) {
        this.port = port;
    }

    /** A connection from {@code 127.0.0.<host>}. */
    Socket open(int host) throws IOException {
        Socket s = new Socket();
        sockets.add(s);
        s.bind(new InetSocketAddress("127.0.0." + host, 0));
        s.connect(new InetSocketAddress("127.0.0.1", port), 5000);
        s.setSoTimeout(5000);
        return s;
    }

    static void send(Socket s, String text) throws IOException {
        s.getOutputStream().write(text.getBytes(StandardCharsets.US_ASCII));
        s.getOutputStream().flush();
    }

    /** A keep-alive GET of {@code path}, with a bearer token unless it is null. */
    static void get(Socket s, String path, String token) throws IOException {
        send(s, "GET " + path + " HTTP/1.1\r\nHost: x\r\n" + (token == null ? "" : "Authorization: Bearer " + token + "\r\n")
                + "\r\n");
    }

    /** One answer: its status line, headers and body (by its Content-Length); what came if the connection ended. */
    static String answer(Socket s) throws IOException {
        InputStream in = s.getInputStream();
        ByteArrayOutputStream head = new ByteArrayOutputStream();
        while (!head.toString(StandardCharsets.US_ASCII).endsWith("\r\n\r\n")) {
            int b = in.read();
            if (b < 0) {
                return head.toString(StandardCharsets.US_ASCII);
            }
            head.write(b);
        }
        String h = head.toString(StandardCharsets.US_ASCII);
        int length = 0;
        for (String line : h.split("\r\n")) {
            if (line.toLowerCase(Locale.ROOT).startsWith("content-length:")) {
                length = Integer.parseInt(line.substring(15).trim());
            }
        }
        return h + new String(in.readNBytes(length), StandardCharsets.UTF_8);
    }

    /** Whether the server closed {@code s} (after what it still sent), waiting at most {@code within}. */
    static boolean closed(Socket s, Duration within) throws IOException {
        s.setSoTimeout((int) within.toMillis());
        try {
            while (s.getInputStream().read() >= 0) {
                // what it answered before closing
            }
            return true;
        } catch (SocketTimeoutException e) {
            return false;
        } catch (SocketException reset) {
            return true;
        } finally {
            s.setSoTimeout(5000);
        }
    }

    /** Waits (at most 5 s) for {@code condition}; whether it came. */
    static boolean await(BooleanSupplier condition) throws InterruptedException {
        long until = System.nanoTime() + 5_000_000_000L;
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > until) {
                return false;
            }
            Thread.sleep(5);
        }
        return true;
    }

    @Override
    public void close() throws IOException {
        for (Socket s : sockets) {
            s.close();
        }
    }
}
