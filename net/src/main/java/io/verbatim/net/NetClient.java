package io.verbatim.net;

import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.ssl.SslContext;
import java.util.Optional;
import org.jspecify.annotations.Nullable;
import reactor.netty.http.client.HttpClient;

/**
 * How a node calls its peers: it presents its own cluster's token (and, under TLS, its certificate when
 * the server asks) and checks the server's certificate against its CA, host name included.
 */
public final class NetClient {
    private final String authorization;
    private final NetworkLimits limits;
    private final @Nullable SslContext tls;

    /**
     * A client of plain HTTP.
     *
     * @param token the node's own cluster's token, in clear
     */
    public NetClient(String token, NetworkLimits limits) {
        this(token, limits, Optional.empty());
    }

    /**
     * A client of HTTPS.
     *
     * @param token the node's own cluster's token, in clear
     * @param tls the client context ({@link Tls#clientContext()})
     */
    public NetClient(String token, NetworkLimits limits, SslContext tls) {
        this(token, limits, Optional.of(tls));
    }

    /**
     * @param token the node's own cluster's token, in clear
     * @param tls the client context ({@link Tls#clientContext()}), or empty for plain HTTP
     */
    public NetClient(String token, NetworkLimits limits, Optional<SslContext> tls) {
        this.authorization = "Bearer " + token;
        this.limits = limits;
        this.tls = tls.orElse(null);
    }

    /** {@code Bearer <token>}. */
    public String authorization() {
        return authorization;
    }

    public NetworkLimits limits() {
        return limits;
    }

    /** {@code client} presenting the token on every request, over TLS when configured. */
    public HttpClient apply(HttpClient client) {
        HttpClient out = client.headers(h -> h.set(HttpHeaderNames.AUTHORIZATION, authorization));
        return tls == null ? out : out.secure(spec -> spec.sslContext(tls).handlerConfigurator(Tls.verifyHostname()));
    }
}
