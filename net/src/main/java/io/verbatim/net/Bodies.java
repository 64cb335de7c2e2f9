package io.verbatim.net;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.handler.codec.http.HttpHeaderNames;
import java.io.ByteArrayOutputStream;
import java.util.Objects;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.netty.Connection;
import reactor.netty.http.server.HttpServerRequest;
import reactor.netty.http.server.HttpServerResponse;

/**
 * Request bodies read whole up to a limit, counted as they stream: past the limit nothing more is held,
 * and at most {@link #DRAINED_AT_MOST} more is read (a 1 GiB chunked body costs the limit plus 1 MiB).
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
     * is not a number), or once more than {@code maxBytes} arrived. Either way a body at most
     * {@link #DRAINED_AT_MOST} past the limit is read to its end and dropped first, so that a client still
     * sending it reads the 413 rather than a connection closed under its feet; a larger or endless one is
     * refused as soon as it passes that, and nothing past the limit is ever held.
     */
    public static Mono<byte[]> read(HttpServerRequest request, int maxBytes) {
        String declared = request.requestHeaders().get(HttpHeaderNames.CONTENT_LENGTH);
        if (declared != null) {
            long length = declaredLength(declared);
            if (length > maxBytes) {
                TooLarge refused = new TooLarge(length, maxBytes, "the body of " + declared.trim()
                        + " bytes is above the limit of " + maxBytes);
                return length <= (long) maxBytes + DRAINED_AT_MOST ? request.receive().then(Mono.error(refused))
                        : Mono.error(refused);
            }
        }
        return Mono.defer(() -> {
            Accumulator body = new Accumulator(maxBytes);
            return request.receive().doOnNext(body::take).then(Mono.fromCallable(body::bytes));
        });
    }

    /** What arrived so far: the bytes up to the limit, then only a count. */
    private static final class Accumulator {
        private final int limit;
        private @Nullable ByteArrayOutputStream kept = new ByteArrayOutputStream();
        private long read;
        private @Nullable TooLarge refused;

        Accumulator(int limit) {
            this.limit = limit;
        }

        void take(ByteBuf chunk) {
            int length = chunk.readableBytes();
            read += length;
            if (refused == null && read > limit) {
                refused = new TooLarge(read, limit, "the body is above the limit of " + limit + " bytes (refused after "
                        + read + ")");
                kept = null;
            }
            if (refused != null) {
                if (read > (long) limit + DRAINED_AT_MOST) {
                    throw refused;
                }
                return;
            }
            Objects.requireNonNull(kept).writeBytes(ByteBufUtil.getBytes(chunk)); // dropped only when refused
        }

        byte[] bytes() {
            if (refused != null) {
                throw refused;
            }
            return Objects.requireNonNull(kept).toByteArray();
        }
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
