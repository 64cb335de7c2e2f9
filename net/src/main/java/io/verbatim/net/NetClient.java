package io.verbatim.net;

import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.ssl.SslContext;
import java.security.SecureRandom;
import java.util.Collection;
import java.util.HexFormat;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.jspecify.annotations.Nullable;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import reactor.netty.http.client.HttpClient;
import reactor.netty.http.client.HttpClientRequest;
import reactor.netty.http.client.HttpClientResponse;

/**
 * How a node calls its peers: every request carries a fresh signature of this cluster for the peer it
 * calls ({@link SignedCall}: the peer, the time on this node's clock, a random nonce, the request's method
 * and target), never the cluster's secret; under TLS the client presents its certificate when the server
 * asks and checks the server's against its CA, host name included. A redirect is followed only to an
 * address configured for that peer, with a signature of its own.
 */
public final class NetClient {
    private final @Nullable String cluster;
    private final @Nullable SigningKey key;
    private final NetworkLimits limits;
    private final @Nullable SslContext tls;
    private final Scheduler clock;
    private final SecureRandom random = new SecureRandom();

    private NetClient(@Nullable String cluster, @Nullable SigningKey key, NetworkLimits limits,
            Optional<SslContext> tls, Scheduler clock) {
        this.cluster = cluster;
        this.key = key;
        this.limits = Objects.requireNonNull(limits, "limits");
        this.tls = tls.orElse(null);
        this.clock = Objects.requireNonNull(clock, "clock");
    }

    /**
     * A client of cluster {@code cluster}'s peers.
     *
     * @param key the cluster's signing key ({@link ClusterKey#signing()})
     * @param tls the client context ({@link Tls#clientContext()}), or empty for plain HTTP
     * @param clock what a signature's time of issue is read from (ms)
     */
    public static NetClient of(String cluster, SigningKey key, NetworkLimits limits, Optional<SslContext> tls,
            Scheduler clock) {
        return new NetClient(Objects.requireNonNull(cluster, "cluster"), Objects.requireNonNull(key, "key"), limits,
                tls, clock);
    }

    /**
     * A client that signs nothing: TLS only, for calls that carry a credential of their own (the brokers'
     * report to their own controller leader).
     */
    public static NetClient unsigned(NetworkLimits limits, Optional<SslContext> tls) {
        return new NetClient(null, null, limits, tls, Schedulers.immediate());
    }

    public NetworkLimits limits() {
        return limits;
    }

    /** {@code client} over TLS when configured, without a credential. */
    public HttpClient apply(HttpClient client) {
        return tls == null ? client : client.secure(spec -> spec.sslContext(tls).handlerConfigurator(Tls.verifyHostname()));
    }

    /**
     * {@code client} signing every request for {@code peer} (over TLS when configured). Redirects are not
     * followed: an answer 3xx is the caller's to read.
     */
    public HttpClient signing(HttpClient client, String peer) {
        String caller = signer();
        return apply(client).doOnRequest((request, connection) -> sign(request, caller, peer));
    }

    /**
     * {@code client} signing every request for {@code peer}, following a redirect only when its
     * {@code Location} is at one of {@code peerUrls}' origins (scheme, host and port), each followed
     * request with a fresh signature. Any other redirect is not followed: its answer is the caller's, and
     * nothing was sent to the address it names.
     */
    public HttpClient signing(HttpClient client, String peer, Collection<String> peerUrls) {
        String caller = signer();
        Set<Origin> allowed = peerUrls.stream().map(Origin::of).collect(Collectors.toUnmodifiableSet());
        return signing(client, peer).followRedirect((request, response) -> followable(request, response, allowed),
                redirected -> sign(redirected, caller, peer));
    }

    /** The {@code Authorization} value of one signed request (what {@link #signing} sets on each). */
    public String authorization(String peer, String method, String target) {
        return SignedCall.authorization(new CallClaims(signer(), peer, clock.now(TimeUnit.MILLISECONDS), nonce(),
                method, target), Objects.requireNonNull(key));
    }

    private void sign(HttpClientRequest request, String caller, String peer) {
        request.header(HttpHeaderNames.AUTHORIZATION, SignedCall.authorization(new CallClaims(caller, peer,
                clock.now(TimeUnit.MILLISECONDS), nonce(), request.method().name(), request.uri()),
                Objects.requireNonNull(key)));
    }

    /** Whether a redirect answer leads to an allowed origin (a Location that does not parse does not). */
    static boolean followable(HttpClientRequest request, HttpClientResponse response, Set<Origin> allowed) {
        if (!isRedirect(response.status())) {
            return false;
        }
        String location = response.responseHeaders().get(HttpHeaderNames.LOCATION);
        String from = request.resourceUrl();
        return location != null && from != null && Origin.resolve(from, location).map(allowed::contains).orElse(false);
    }

    static boolean isRedirect(HttpResponseStatus status) {
        int code = status.code();
        return code == 301 || code == 302 || code == 303 || code == 307 || code == 308;
    }

    private String signer() {
        if (cluster == null || key == null) {
            throw new IllegalStateException("this client signs nothing (NetClient.unsigned): it cannot call a peer");
        }
        return cluster;
    }

    private String nonce() {
        byte[] bytes = new byte[16];
        random.nextBytes(bytes);
        return HexFormat.of().formatHex(bytes);
    }
}
