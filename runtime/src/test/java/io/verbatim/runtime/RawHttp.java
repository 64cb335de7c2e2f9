package io.verbatim.runtime;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.nio.charset.StandardCharsets;

/** Requests no well-behaved client would send (bad escapes, a thousand bad headers), on a plain socket. */
public final class RawHttp {
    private RawHttp() {
    }

    /** Sends {@code request} as is to {@code baseUrl}'s host and port; the whole answer, up to 64 KiB. */
    public static String send(String baseUrl, String request) throws IOException {
        URI base = URI.create(baseUrl);
        try (Socket socket = new Socket(base.getHost(), base.getPort())) {
            socket.setSoTimeout(5000);
            socket.getOutputStream().write(request.getBytes(StandardCharsets.ISO_8859_1));
            socket.getOutputStream().flush();
            InputStream in = socket.getInputStream();
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            byte[] buf = new byte[8192];
            try {
                for (int n; out.size() < 65536 && (n = in.read(buf)) > 0; ) {
                    out.write(buf, 0, n);
                }
            } catch (SocketTimeoutException | SocketException e) {
                // what came is the answer
            }
            return out.toString(StandardCharsets.ISO_8859_1);
        }
    }

    /** A GET of {@code pathAndQuery} with an Authorization header ({@code null}: none), closing after the answer. */
    static String get(String baseUrl, String pathAndQuery, String authorization) throws IOException {
        return send(baseUrl, "GET " + pathAndQuery + " HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                + (authorization == null ? "" : "Authorization: " + authorization + "\r\n") + "Connection: close\r\n\r\n");
    }

    /** {@code HTTP/1.1 400 Bad Request ...} → 400, or -1 when nothing came. */
    public static int status(String answer) {
        return answer.startsWith("HTTP/1.1 ") ? Integer.parseInt(answer.substring(9, 12)) : -1;
    }
}
