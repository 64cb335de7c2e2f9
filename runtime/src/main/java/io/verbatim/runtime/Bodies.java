package io.verbatim.runtime;

import io.netty.buffer.ByteBuf;
import io.netty.handler.codec.http.HttpHeaderNames;
import reactor.core.publisher.Mono;
import reactor.netty.http.server.HttpServerRequest;

/** Request bodies read whole up to a limit, counted as they stream: a larger one is never held. */
final class Bodies {
    private Bodies() {
    }

    /** A body above its limit: nothing of it is kept. */
    static final class TooLarge extends RuntimeException {
        private static final long serialVersionUID = 1L;

        TooLarge(String message) {
            super(message, null, false, false);
        }
    }

    /** The body's bytes, or {@link TooLarge} as soon as more than {@code maxBytes} arrived (or were declared). */
    static Mono<byte[]> read(HttpServerRequest request, int maxBytes) {
        String declared = request.requestHeaders().get(HttpHeaderNames.CONTENT_LENGTH);
        if (declared != null && tooLong(declared, maxBytes)) {
            return Mono.error(new TooLarge("the body of " + declared + " bytes is above the limit of " + maxBytes));
        }
        return Mono.defer(() -> {
            java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
            return request.receive().doOnNext(chunk -> append(out, chunk, maxBytes)).then(Mono.fromCallable(out::toByteArray));
        });
    }

    private static void append(java.io.ByteArrayOutputStream out, ByteBuf chunk, int maxBytes) {
        if (out.size() + chunk.readableBytes() > maxBytes) {
            throw new TooLarge("the body is above the limit of " + maxBytes + " bytes");
        }
        byte[] bytes = new byte[chunk.readableBytes()];
        chunk.readBytes(bytes);
        out.write(bytes, 0, bytes.length);
    }

    private static boolean tooLong(String header, int maxBytes) {
        try {
            return Long.parseLong(header.trim()) > maxBytes;
        } catch (NumberFormatException e) {
            return true; // not a length: not read
        }
    }
}
