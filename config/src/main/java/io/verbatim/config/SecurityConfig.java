package io.verbatim.config;

import io.verbatim.net.Authenticator;
import io.verbatim.net.Tls;
import io.verbatim.net.Token;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * Who may call a node and how its ports are secured: each cluster's broker credential
 * ({@code clusters[].token}, its certificate name under mutual TLS), the admin token, whether status
 * needs a credential, and each cluster's TLS ({@code security.tls}, a cluster's own certificate and key
 * from {@code clusters[].tls}).
 *
 * @param clusters each cluster's credentials, by cluster name, in file order
 * @param adminToken the admin role's token ({@code security.adminToken}), or empty: no layout
 *        operations over HTTP
 * @param openStatus whether status JSON, status page and metrics need no credential
 * @param tls each cluster's TLS, by cluster name; empty when {@code security.tls.enabled} is false
 */
public record SecurityConfig(Map<String, ClusterCredentials> clusters, Optional<Token> adminToken, boolean openStatus,
        Map<String, Tls> tls) {

    /**
     * @param key where the token was given ({@code clusters[1].token}), for errors
     * @param certificateName the CN of the cluster's client certificate under mutual TLS, if given
     */
    public record ClusterCredentials(String key, Token token, Optional<String> certificateName) {
    }

    public SecurityConfig {
        clusters = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(clusters));
        tls = Map.copyOf(tls);
    }

    /** Checks presented credentials against every cluster's token and the admin token. */
    public Authenticator authenticator() {
        Map<String, Token> tokens = new LinkedHashMap<>();
        Map<String, String> names = new LinkedHashMap<>();
        clusters.forEach((name, c) -> {
            tokens.put(name, c.token());
            c.certificateName().ifPresent(n -> names.put(name, n));
        });
        return new Authenticator(tokens, adminToken, names, openStatus);
    }

    /**
     * The token {@code cluster} presents to its peers: it must be given in clear.
     *
     * @throws ConfigException naming the key when only its digest was given
     */
    public String ownToken(String cluster) {
        ClusterCredentials c = clusters.get(cluster);
        if (c == null) {
            throw new IllegalArgumentException("no cluster named '" + cluster + "' in the config");
        }
        return c.token().clear().orElseThrow(() -> new ConfigException(c.key(), "is a digest, but cluster " + cluster
                + " presents this token to its peers (expected the token itself, or env:NAME, on a node of "
                + cluster + ")"));
    }

    /** {@code cluster}'s TLS, when enabled. */
    public Optional<Tls> tls(String cluster) {
        return Optional.ofNullable(tls.get(cluster));
    }
}
