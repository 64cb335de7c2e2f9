package io.verbatim.exchange;

import io.verbatim.net.Authenticator;
import io.verbatim.net.NetClient;
import io.verbatim.net.NetServer;
import io.verbatim.net.NetworkLimits;
import io.verbatim.net.SigningKey;
import io.verbatim.net.Token;
import io.verbatim.net.VerifyingKey;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import reactor.core.scheduler.Schedulers;

/**
 * Clusters a, b, c and mallory, each signing with the key of {@code <name>-secret}, and the operator's
 * {@code operator-secret}: a port of cluster {@code self} and a client of cluster {@code cluster}.
 */
final class TestKeys {
    static final String ADMIN = "operator-secret";
    private static final List<String> CLUSTERS = List.of("a", "b", "c", "mallory");

    private TestKeys() {
    }

    static SigningKey key(String cluster) {
        return SigningKey.fromSecret(cluster + "-secret");
    }

    /** The ports of cluster {@code self}: they know every cluster's verifying key. */
    static NetServer net(String self) {
        return net(self, NetworkLimits.defaults());
    }

    /** The ports of cluster {@code self}, with {@code limits}. */
    static NetServer net(String self, NetworkLimits limits) {
        Map<String, VerifyingKey> keys = new LinkedHashMap<>();
        CLUSTERS.forEach(c -> keys.put(c, key(c).verifying()));
        return new NetServer(new Authenticator(self, keys, Optional.of(Token.clear(ADMIN)), Map.of(), true), limits);
    }

    /** How cluster {@code cluster} calls its peers. */
    static NetClient client(String cluster) {
        return NetClient.of(cluster, key(cluster), NetworkLimits.defaults(), Optional.empty(), Schedulers.parallel());
    }

    /** A fresh signature of {@code from}'s for one POST to {@code path} of {@code to}. */
    static String signed(String from, String to, String path) {
        return "" + client(from).authorization(to, "POST", path);
    }
}
