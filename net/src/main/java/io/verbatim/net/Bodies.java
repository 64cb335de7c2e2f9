package io.verbatim.net;

import io.netty.handler.codec.http.HttpHeaderNames;
import java.io.ByteArrayOutputStream;
import reactor.core.publisher.Mono;
import reactor.netty.Connection;
import reactor.netty.http.server.HttpServerRequest;
import reactor.netty.http.server.HttpServerResponse;

/**
 * Request bodies read whole up to a limit, counted as they stream: past the limit the read fails at
 * once and the rest is never read or held (a 1 GiB chunked body costs no more than the limit).
 */
public final class Bodies {
    /** How much of a declared-too-large body is read and dropped before the 413, at most. */
    static final long DRAINED_AT_MOST = 1 << 20;

    private Bodies() {
    }

    /** A body above its limit: nothing of it is kept. */
    public static final class TooLarge extends RuntimeException {
        private static final long serialVersionUID = 1L;
        private final long read;
        private final int limit;

        TooLarge(long read, int limit, String message) {
            super(message, null, false, false);
            this.read = read;
            this.limit = limit;
        }

        /** How many bytes had arrived (or were declared) when it was refused. */
        public long read() {
            return read;
        }

        public int limit() {
            return limit;
        }
    }

    /**
     * The body's bytes; {@link TooLarge} when its {@code Content-Length} says more than {@code maxBytes} (or
     * is not a number), or as soon as more than {@code maxBytes} arrived.
     */
    public static Mono<byte[]> read(HttpServerRequest request, int maxBytes) {
        String declared = request.requestHeaders().get(HttpHeaderNames.CONTENT_LENGTH);
        if (declared != null) {
            long length = declaredLength(declared);
            if (length > maxBytes) {
                TooLarge refused = new TooLarge(length, maxBytes, "the body of " + declared.trim()
                        + " bytes is above the limit of " + maxBytes);
                // A body a little over the limit is read and dropped first, so that a client still sending it
                // reads the 413 rather than a connection reset under its feet; a larger one is refused at once.
                return length <= (long) maxBytes + DRAINED_AT_MOST ? request.receive().then(Mono.error(refused))
                        : Mono.error(refused);
            }
        }
        return request.receive().asByteArray().reduceWith(ByteArrayOutputStream::new, (out, chunk) -> {
            long read = (long) out.size() + chunk.length;
            if (read > maxBytes) {
                throw new TooLarge(read, maxBytes, "the body is above the limit of " + maxBytes + " bytes (refused after "
                        + read + ")");
            }
            out.write(chunk, 0, chunk.length);
            return out;
        }).map(ByteArrayOutputStream::toByteArray).defaultIfEmpty(new byte[0]);
    }

    /** A 413 that closes the connection: the rest of an oversized body is not worth reading. */
    public static Mono<Void> tooLarge(HttpServerResponse response, String message) {
        return NetServer.text(response.header(HttpHeaderNames.CONNECTION, "close").keepAlive(false), 413, message)
                .then(Mono.fromRunnable(() -> response.withConnection(Connection::dispose)));
    }

    /** A Content-Length that is not a number counts as too large: the body is not read. */
    private static long declaredLength(String header) {
        try {
            return Long.parseLong(header.trim());
        } catch (NumberFormatException e) {
            return Long.MAX_VALUE;
        }
    }
}
