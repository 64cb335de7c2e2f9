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
    public record ClusterCredentials(String key, Token token, Optional<String> certificateName,
            Optional<Token> controllerSecret) {
        public ClusterCredentials(String key, Token token, Optional<String> certificateName) {
            this(key, token, certificateName, Optional.empty());
        }

        /** Where the controller secret is given, for errors. */
        public String controllerSecretKey() {
            return key.replaceAll("token$", "controllerSecret");
        }
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

    /**
     * The secret {@code cluster}'s own processes share when its controller replicas run as processes of their
     * own ({@code clusters[].controllerSecret}): the metadata log's group secret and the brokers' credential
     * on {@code /controller/report}. Never presented to a peer cluster. It must be given in clear.
     *
     * @throws ConfigException naming the key when it is missing or only its digest was given
     */
    public String controllerSecret(String cluster) {
        ClusterCredentials c = clusters.get(cluster);
        if (c == null) {
            throw new IllegalArgumentException("no cluster named '" + cluster + "' in the config");
        }
        Token secret = c.controllerSecret().orElseThrow(() -> new ConfigException(c.controllerSecretKey(),
                "is required when the cluster names its controllers (a secret of its own processes, never sent to "
                        + "peers: the metadata log's group secret and the brokers' report credential)"));
        return secret.clear().orElseThrow(() -> new ConfigException(c.controllerSecretKey(), "is a digest, but every "
                + "process of " + cluster + " presents it (expected the secret itself, or env:NAME)"));
    }

    /** Whether {@code presented} is {@code cluster}'s controller secret. */
    public boolean isControllerSecret(String cluster, @org.jspecify.annotations.Nullable String presented) {
        ClusterCredentials c = clusters.get(cluster);
        return c != null && presented != null && c.controllerSecret().map(t -> t.matches(presented)).orElse(false);
    }

    /** {@code cluster}'s TLS, when enabled. */
    public Optional<Tls> tls(String cluster) {
        return Optional.ofNullable(tls.get(cluster));
    }
}
