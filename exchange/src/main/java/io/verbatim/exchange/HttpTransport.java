package io.verbatim.exchange;

import com.google.protobuf.InvalidProtocolBufferException;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.verbatim.exchange.proto.ExchangeRequest;
import io.verbatim.exchange.proto.ExchangeResponse;
import io.verbatim.net.NetClient;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.netty.ByteBufFlux;
import reactor.netty.http.client.HttpClient;

/**
 * Pushes over HTTP (HTTPS under TLS: the peer's certificate checked against the CA, host name included)
 * with this cluster's own token, following the peer's redirect to its leader.
 */
public final class HttpTransport implements ExchangeTransport {
    private final Map<String, String> peerUrls;
    private final HttpClient client;

    /** @param peerUrls each peer's base URL (any of its controllers: a non-leader redirects) */
    public HttpTransport(Map<String, String> peerUrls, NetClient net) {
        this.peerUrls = Map.copyOf(peerUrls);
        String authorization = net.authorization();
        java.util.Set<String> origins = new java.util.HashSet<>();
        peerUrls.values().forEach(url -> origins.add(origin(url)));
        // Reactor Netty drops the credentials when a redirect leads to another host or port. The leader a peer
        // redirects to is as much that peer as the follower was, so they go along again, but only to a scheme
        // and host some peer is configured at: a redirect elsewhere (or from https to http) never carries this
        // cluster's token, and is answered 401 there.
        this.client = net.apply(HttpClient.create())
                .followRedirect(true, redirected -> {
                    if (origins.contains(origin(redirected.resourceUrl()))) {
                        redirected.header(HttpHeaderNames.AUTHORIZATION, authorization);
                    } else {
                        redirected.requestHeaders().remove(HttpHeaderNames.AUTHORIZATION);
                    }
                })
                .headers(h -> h.set(HttpHeaderNames.CONTENT_TYPE, "application/x-protobuf"));
    }

    /** {@code scheme://host} of a URL (the port may differ between a cluster's controllers). */
    static String origin(@Nullable String url) {
        java.net.URI u = java.net.URI.create(url);
        return (u.getScheme() + "://" + u.getHost()).toLowerCase(java.util.Locale.ROOT);
    }

    @Override
    public Mono<ExchangeResponse> send(String peer, ExchangeRequest request) {
        String base = peerUrls.get(peer);
        if (base == null) {
            return Mono.error(new ExchangeException(400, "no URL for peer '" + peer + "'"));
        }
        byte[] body = request.toByteArray();
        return client.post().uri(base + ExchangeServer.EXCHANGE_PATH)
                .send(ByteBufFlux.fromInbound(Mono.just(body)))
                .responseSingle((response, content) -> content.asByteArray().defaultIfEmpty(new byte[0]).flatMap(bytes -> {
                    int status = response.status().code();
                    if (status != 200) {
                        return Mono.error(new ExchangeException(status, peer + " answered " + status + ": "
                                + new String(bytes, StandardCharsets.UTF_8)));
                    }
                    try {
                        return Mono.just(ExchangeResponse.parseFrom(bytes));
                    } catch (InvalidProtocolBufferException e) {
                        return Mono.error(new ExchangeException(502, peer + " answered with a malformed body: "
                                + e.getMessage()));
                    }
                }));
    }
}
