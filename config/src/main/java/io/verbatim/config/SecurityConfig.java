package io.verbatim.config;

import io.verbatim.net.Authenticator;
import io.verbatim.net.ClusterKey;
import io.verbatim.net.SigningKey;
import io.verbatim.net.Tls;
import io.verbatim.net.Token;
import io.verbatim.net.VerifyingKey;
import java.time.Duration;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Who may call a node and how its ports are secured: each cluster's credential ({@code clusters[].token}:
 * its secret where the cluster runs, its verifying key elsewhere; its certificate name under mutual TLS),
 * the admin token, whether status needs a credential, how signatures are checked, each cluster's TLS
 * ({@code security.tls}, a cluster's own certificate and key from {@code clusters[].tls}), and the
 * credentials of each cluster's metadata log's members when its controller replicas run apart ({@link #members}).
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
     * @param members the credentials given of its metadata log's members when its controller replicas run apart
     *        (each replica's {@code controllers[].secret}, each broker member's {@code brokerMembers[].secret} or
     *        the brokers' {@code brokersSecret}), by member id
     */
    public record ClusterCredentials(String key, ClusterKey token, Optional<String> certificateName,
            Map<String, MemberCredential> members) {
        public ClusterCredentials {
            members = Collections.unmodifiableMap(new LinkedHashMap<>(members));
        }

        public ClusterCredentials(String key, ClusterKey token, Optional<String> certificateName) {
            this(key, token, certificateName, Map.of());
        }

        /** Where a key of the cluster's own entry is given ({@code clusters[1].brokersSecret}), for errors. */
        String keyOf(String name) {
            return key.replaceAll("token$", name);
        }
    }

    public SecurityConfig {
        clusters = Collections.unmodifiableMap(new LinkedHashMap<>(clusters));
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
     * The credentials of the members of {@code cluster}'s metadata log, by member id, as a process that runs
     * member {@code self} of it needs them: every controller replica's ({@code clusters[].controllers[].secret})
     * and every broker member's ({@code clusters[].brokerMembers[].secret}, or the one brokers process's
     * {@code clusters[].brokersSecret}), each a secret or a verifying key, and
     * {@code self}'s own secret, with which it signs. Checked here, not at load: a node of another cluster
     * needs none of them.
     *
     * @throws ConfigException naming the key of a member not given, or of {@code self} given as a verifying key
     * @throws IllegalArgumentException when the cluster names no controllers or {@code self} is not a member
     */
    public Map<String, MemberCredential> members(ClusterConfig cluster, String self) {
        ClusterCredentials c = clusters.get(cluster.name());
        if (c == null || !cluster.separateControllers()) {
            throw new IllegalArgumentException("cluster " + cluster.name() + " names no controllers in the config: its "
                    + "metadata log has no members of their own");
        }
        Map<String, MemberCredential> out = new LinkedHashMap<>();
        for (int r = 0; r < cluster.controllers().size(); r++) {
            String id = cluster.controllers().get(r).id();
            out.put(id, given(c, id, c.keyOf("controllers[" + r + "].secret"), cluster.name()));
        }
        List<BrokerMember> brokers = cluster.brokerMembers();
        for (int m = 0; m < brokers.size(); m++) {
            String id = brokers.get(m).id();
            out.put(id, given(c, id, c.keyOf(cluster.namesBrokerMembers() ? "brokerMembers[" + m + "].secret"
                    : "brokersSecret"), cluster.name()));
        }
        MemberCredential own = out.get(self);
        if (own == null) {
            throw new IllegalArgumentException("cluster " + cluster.name() + " has no member '" + self + "' (it has "
                    + out.keySet() + ")");
        }
        if (own.signing().isEmpty()) {
            throw new ConfigException(own.key(), "is a verifying key, but this process runs member " + self + " of "
                    + cluster.name() + ", which signs with its secret (expected the secret itself, or env:NAME)");
        }
        return out;
    }

    private static MemberCredential given(ClusterCredentials c, String member, String key, String cluster) {
        MemberCredential m = c.members().get(member);
        if (m == null) {
            throw new ConfigException(key, "is missing (expected " + MemberSecrets.forms() + ": each member of "
                    + cluster + "'s metadata log proves who it is with a secret of its own, member " + member
                    + " too)");
        }
        return m;
    }

    /** {@code cluster}'s TLS, when enabled. */
    public Optional<Tls> tls(String cluster) {
        return Optional.ofNullable(tls.get(cluster));
    }
}
