package io.verbatim.exchange;

import com.google.protobuf.InvalidProtocolBufferException;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.verbatim.exchange.proto.ExchangeRequest;
import io.verbatim.exchange.proto.ExchangeResponse;
import io.verbatim.net.LogText;
import io.verbatim.net.NetClient;
import java.nio.charset.StandardCharsets;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import reactor.core.publisher.Mono;
import reactor.netty.http.client.HttpClient;

/**
 * Pushes over HTTP (HTTPS under TLS: the peer's certificate checked against the CA, host name included),
 * each call signed for the peer it goes to ({@link NetClient}), following the peer's redirect to its leader
 * only when the leader is at one of the peer's configured URLs (scheme, host and port). A redirect anywhere
 * else is a failed call naming where it pointed, and nothing goes there.
 */
public final class HttpTransport implements ExchangeTransport {
    private final Map<String, List<String>> peerUrls;
    /** Per peer, the index of the URL that answered last: where the next call goes first. */
    private final Map<String, AtomicInteger> preferred = new ConcurrentHashMap<>();
    /** Per peer, a client signing for it and following redirects to its configured URLs only. */
    private final Map<String, HttpClient> clients;

    /** @param peerUrls each peer's base URL (any of its controllers: a non-leader redirects) */
    public HttpTransport(Map<String, String> peerUrls, NetClient net) {
        this(net, peerUrls.entrySet().stream().collect(Collectors.toMap(Map.Entry::getKey,
                e -> List.of(e.getValue()))));
    }

    /**
     * To peers whose controller replicas run as processes of their own: a call goes to the replica that
     * answered last, a non-leader redirects it to the leader, and a replica that cannot be reached is passed
     * over for the next one, in turn, within the same call.
     *
     * @param peerUrls each peer's controller replicas' base URLs (at least one each): the only addresses a
     *        call to that peer goes to, redirected or not
     */
    public static HttpTransport toReplicas(Map<String, List<String>> peerUrls, NetClient net) {
        return new HttpTransport(net, peerUrls);
    }

    private HttpTransport(NetClient net, Map<String, List<String>> peerUrls) {
        Map<String, List<String>> urls = new LinkedHashMap<>();
        Map<String, HttpClient> byPeer = new LinkedHashMap<>();
        HttpClient base = HttpClient.create().headers(h -> h.set(HttpHeaderNames.CONTENT_TYPE, "application/x-protobuf"));
        peerUrls.forEach((peer, list) -> {
            if (list.isEmpty()) {
                throw new IllegalArgumentException("no URL for peer '" + peer + "'");
            }
            urls.put(peer, List.copyOf(list));
            byPeer.put(peer, net.signing(base, peer, list));
        });
        this.peerUrls = Collections.unmodifiableMap(urls);
        this.clients = Map.copyOf(byPeer);
    }

    @Override
    public Mono<ExchangeResponse> send(String peer, ExchangeRequest request) {
        List<String> urls = peerUrls.get(peer);
        if (urls == null) {
            return Mono.error(new ExchangeException(400, "no URL for peer '" + peer + "'"));
        }
        byte[] body = request.toByteArray();
        AtomicInteger first = preferred.computeIfAbsent(peer, p -> new AtomicInteger());
        return attempt(peer, body, urls, first, first.get(), 0);
    }

    private Mono<ExchangeResponse> attempt(String peer, byte[] body, List<String> urls, AtomicInteger first, int start,
            int tried) {
        int index = (start + tried) % urls.size();
        return post(peer, urls.get(index), body).doOnNext(answer -> first.set(index))
                // unreachable, or reached a replica that knows no leader (cut off from the others): the next one
                .onErrorResume(e -> (!(e instanceof ExchangeException) || ((ExchangeException) e).status() == 503)
                        && tried + 1 < urls.size(),
                        e -> attempt(peer, body, urls, first, start, tried + 1));
    }

    private Mono<ExchangeResponse> post(String peer, String base, byte[] body) {
        return Objects.requireNonNull(clients.get(peer)).post().uri(base + ExchangeServer.EXCHANGE_PATH)
                // the body whole, with its Content-Length: a Flux body goes chunked (headers, then the chunk,
                // then the terminating chunk), more writes for the same bytes
                .send((req, out) -> out.sendByteArray(Mono.just(body)))
                .responseSingle((response, content) -> content.asByteArray().defaultIfEmpty(new byte[0]).flatMap(bytes -> {
                    int status = response.status().code();
                    String location = response.responseHeaders().get(HttpHeaderNames.LOCATION);
                    if (status / 100 == 3) {
                        return Mono.error(new ExchangeException(502, peer + " redirected the call to "
                                + (location == null ? "nowhere (no Location)" : "'" + location + "'")
                                + ", which is not one of its configured addresses " + peerUrls.get(peer)
                                + ": not followed"));
                    }
                    if (status != 200) {
                        // the peer's text, escaped: it is logged when the peer refuses our calls
                        return Mono.error(new ExchangeException(status, peer + " answered " + status + ": "
                                + LogText.escape(new String(bytes, StandardCharsets.UTF_8).trim())));
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
