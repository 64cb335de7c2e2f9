package io.verbatim.bench;

import io.verbatim.net.Authenticator;
import io.verbatim.net.NetClient;
import io.verbatim.net.NetServer;
import io.verbatim.net.NetworkLimits;
import io.verbatim.net.SigningKey;
import io.verbatim.net.VerifyingKey;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import reactor.core.scheduler.Schedulers;

/** How the exchange's benches wire their clusters: each signs its calls, each server checks them, as a node's do. */
final class ExchangeWiring {
    /** Clusters a, b, c: each signs with the key of {@code <name>-bench}. */
    private static final List<String> CLUSTERS = List.of("a", "b", "c");

    private ExchangeWiring() {
    }

    /** The ports of cluster {@code self}: they check each cluster's signatures. */
    static NetServer net(String self) {
        Map<String, VerifyingKey> keys = new LinkedHashMap<>();
        CLUSTERS.forEach(c -> keys.put(c, SigningKey.fromSecret(c + "-bench").verifying()));
        return new NetServer(new Authenticator(self, keys, Optional.empty(), Map.of(), true), NetworkLimits.defaults());
    }

    /** How cluster {@code cluster} calls its peers: each call signed, as a node's are. */
    static NetClient client(String cluster) {
        return NetClient.of(cluster, SigningKey.fromSecret(cluster + "-bench"), NetworkLimits.defaults(), Optional.empty(),
                Schedulers.parallel());
    }
}
