package io.verbatim.net;

import io.netty.handler.codec.DecoderResult;
import io.netty.handler.codec.http.HttpHeaders;
import reactor.netty.http.logging.AbstractHttpMessageLogFactory;
import reactor.netty.http.logging.HttpMessageArgProvider;

/**
 * How Reactor Netty describes a request it could not decode (a bad header, one too long): one line,
 * the method, the start of the URI and why, never the headers themselves. Its own description lists
 * every header on a line of its own, so a request with a thousand bad headers logged ~900 lines.
 */
final class OneLineMessageLog extends AbstractHttpMessageLogFactory {
    static final OneLineMessageLog INSTANCE = new OneLineMessageLog();
    private static final int MAX_SHOWN = 160;

    @Override
    public String common(HttpMessageArgProvider message) {
        StringBuilder b = new StringBuilder();
        if (message.method() != null) {
            b.append(printable(message.method())).append(' ');
        }
        if (message.uri() != null) {
            b.append(printable(message.uri())).append(' ');
        }
        DecoderResult result = message.decoderResult();
        if (result != null && result.isFailure()) {
            b.append("not decoded: ").append(printable(String.valueOf(result.cause())));
        }
        HttpHeaders headers = message.headers();
        if (headers != null) {
            b.append(" (").append(headers.size()).append(" header(s), not shown)");
        }
        return b.toString().trim();
    }

    /** At most {@value #MAX_SHOWN} characters, control characters (line breaks) escaped. */
    static String printable(String s) {
        return LogText.escape(s, MAX_SHOWN);
    }
}
