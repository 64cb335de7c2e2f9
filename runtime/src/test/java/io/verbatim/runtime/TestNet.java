package io.verbatim.runtime;

import io.verbatim.net.Authenticator;
import io.verbatim.net.NetClient;
import io.verbatim.net.NetServer;
import io.verbatim.net.NetworkLimits;
import io.verbatim.net.Token;
import java.util.Map;
import java.util.Optional;

/** Clusters a, b, c with tokens {@code a-token}, …, and the admin's {@code admin-token}, over plain HTTP. */
final class TestNet {
    static final String ADMIN = "admin-token";

    private TestNet() {
    }

    static Authenticator authenticator() {
        return new Authenticator(Map.of("a", Token.clear(token("a")), "b", Token.clear(token("b")),
                "c", Token.clear(token("c"))), Optional.of(Token.clear(ADMIN)), Map.of(), true);
    }

    static NetServer server(NetworkLimits limits) {
        return new NetServer(authenticator(), limits);
    }

    static NetServer server() {
        return server(NetworkLimits.defaults());
    }

    static NetClient client(String cluster) {
        return new NetClient(token(cluster), NetworkLimits.defaults());
    }

    static String token(String cluster) {
        return cluster + "-token";
    }
}
