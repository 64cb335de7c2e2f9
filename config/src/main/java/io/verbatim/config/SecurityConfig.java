package io.verbatim.config;

import io.verbatim.net.Authenticator;
import io.verbatim.net.ClusterKey;
import io.verbatim.net.SigningKey;
import io.verbatim.net.Tls;
import io.verbatim.net.Token;
import io.verbatim.net.VerifyingKey;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * Who may call a node and how its ports are secured: each cluster's credential ({@code clusters[].token}:
 * its secret where the cluster runs, its verifying key elsewhere; its certificate name under mutual TLS),
 * the admin token, whether status needs a credential, how signatures are checked, and each cluster's TLS
 * ({@code security.tls}, a cluster's own certificate and key from {@code clusters[].tls}).
 *
 * @param clusters each cluster's credentials, by cluster name, in file order
 * @param adminToken the admin role's token ({@code security.adminToken}), or empty: no layout
 *        operations over HTTP
 * @param openStatus whether status JSON, status page and metrics need no credential
 * @param tls each cluster's TLS, by cluster name; empty when {@code security.tls.enabled} is false
 * @param signatureWindow how far a cluster's signature's time of issue may be from the receiver's clock
 *        ({@code security.signatureWindow})
 * @param maxCallsPerWindow a peer's signed calls a node remembers within the window; more are refused
 *        ({@code security.maxCallsPerWindow})
 */
public record SecurityConfig(Map<String, ClusterCredentials> clusters, Optional<Token> adminToken, boolean openStatus,
        Map<String, Tls> tls, Duration signatureWindow, int maxCallsPerWindow) {

    /**
     * @param key where the token was given ({@code clusters[1].token}), for errors
     * @param token the cluster's credential: its secret (it signs), or its verifying key alone
     * @param certificateName the CN of the cluster's client certificate under mutual TLS, if given
     */
    public record ClusterCredentials(String key, ClusterKey token, Optional<String> certificateName,
            Optional<Token> controllerSecret) {
        public ClusterCredentials(String key, ClusterKey token, Optional<String> certificateName) {
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
        if (signatureWindow == null || signatureWindow.compareTo(Security.MIN_SIGNATURE_WINDOW) < 0
                || signatureWindow.compareTo(Security.MAX_SIGNATURE_WINDOW) > 0) {
            throw new IllegalArgumentException("security.signatureWindow is " + signatureWindow + ": must be within "
                    + "[1s, 10m]");
        }
        if (maxCallsPerWindow < 1) {
            throw new IllegalArgumentException("security.maxCallsPerWindow is " + maxCallsPerWindow
                    + ": must be at least 1");
        }
    }

    /**
     * What a node of {@code self} checks callers with: each cluster's signatures by its verifying key (made for
     * {@code self}, within the window, once), the admin token, and certificates under mutual TLS.
     */
    public Authenticator authenticator(String self) {
        if (!clusters.containsKey(self)) {
            throw new IllegalArgumentException("no cluster named '" + self + "' in the config");
        }
        Map<String, VerifyingKey> keys = new LinkedHashMap<>();
        Map<String, String> names = new LinkedHashMap<>();
        clusters.forEach((name, c) -> {
            keys.put(name, c.token().verifying());
            c.certificateName().ifPresent(n -> names.put(name, n));
        });
        return new Authenticator(self, keys, adminToken, names, openStatus, signatureWindow, maxCallsPerWindow);
    }

    /**
     * The key {@code cluster} signs its calls to peers with: its secret must be given.
     *
     * @throws ConfigException naming the key when only the verifying key was given
     */
    public SigningKey signingKey(String cluster) {
        ClusterCredentials c = clusters.get(cluster);
        if (c == null) {
            throw new IllegalArgumentException("no cluster named '" + cluster + "' in the config");
        }
        return c.token().signing().orElseThrow(() -> new ConfigException(c.key(), "is a verifying key, but cluster "
                + cluster + " signs its calls to its peers with its secret (expected the secret itself, or env:NAME, "
                + "on a node of " + cluster + ")"));
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
