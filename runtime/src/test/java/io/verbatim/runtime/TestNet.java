package io.verbatim.runtime;

import io.verbatim.net.Authenticator;
import io.verbatim.net.NetClient;
import io.verbatim.net.NetServer;
import io.verbatim.net.NetworkLimits;
import io.verbatim.net.SigningKey;
import io.verbatim.net.Token;
import java.util.Map;
import java.util.Optional;
import reactor.core.scheduler.Schedulers;

/**
 * Clusters a, b, c with secrets {@code a-token}, …, and the admin's {@code admin-token}, over plain HTTP: the
 * ports of one of them, how one calls another, and one signed call of one to another.
 */
public final class TestNet {
    public static final String ADMIN = "admin-token";

    private TestNet() {
    }

    /** What a port of cluster {@code self} checks callers with. */
    static Authenticator authenticator(String self) {
        return new Authenticator(self, Map.of("a", key("a").verifying(), "b", key("b").verifying(),
                "c", key("c").verifying()), Optional.of(Token.clear(ADMIN)), Map.of(), true);
    }

    public static NetServer server(String self, NetworkLimits limits) {
        return new NetServer(authenticator(self), limits);
    }

    public static NetServer server(String self) {
        return server(self, NetworkLimits.defaults());
    }

    public static NetClient client(String cluster) {
        return client(cluster, NetworkLimits.defaults());
    }

    public static NetClient client(String cluster, NetworkLimits limits) {
        return NetClient.of(cluster, key(cluster), limits, Optional.empty(), Schedulers.parallel());
    }

    public static String token(String cluster) {
        return cluster + "-token";
    }

    static SigningKey key(String cluster) {
        return SigningKey.fromSecret(token(cluster));
    }

    /** A fresh signature of cluster {@code from} for one {@code method} of {@code url} at cluster {@code to}. */
    public static String signed(String from, String to, String method, String url) {
        int path = url.indexOf('/', url.indexOf("://") + 3);
        return client(from).authorization(to, method, path < 0 ? "/" : url.substring(path));
    }
}
