package io.verbatim.net;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * Decides who a caller is from its bearer token and, under TLS, the name in its verified client
 * certificate, and whether that caller may use an endpoint of a {@link Role}. Pure: no I/O; every
 * refusal names why. A presented token is compared with every known digest in constant time, so how
 * long a refusal takes does not tell which token came close.
 */
public final class Authenticator {
    private final Map<String, Token> clusters;
    private final Optional<Token> admin;
    private final Map<String, String> clusterByCertificate;
    private final boolean openStatus;

    /**
     * @param clusters each cluster's broker credential
     * @param admin the admin token, or empty when this node takes no layout operations
     * @param certificateNames each cluster's certificate name (its CN), by cluster; a cluster not listed is
     *        named by its own name
     * @param openStatus whether status, status page and metrics need no credential
     */
    public Authenticator(Map<String, Token> clusters, Optional<Token> admin, Map<String, String> certificateNames,
            boolean openStatus) {
        this.clusters = Map.copyOf(clusters);
        this.admin = Objects.requireNonNull(admin, "admin (Optional.empty() for none)");
        Map<String, String> byCertificate = new LinkedHashMap<>();
        for (String cluster : clusters.keySet()) {
            byCertificate.put(certificateNames.getOrDefault(cluster, cluster), cluster);
        }
        this.clusterByCertificate = Map.copyOf(byCertificate);
        this.openStatus = openStatus;
    }

    /**
     * May this caller use an endpoint of {@code role}?
     *
     * @param authorization the {@code Authorization} header, if the request has one
     * @param certificateName the CN of the client certificate TLS verified, if any
     * @param what the endpoint, for the refusal's text ("the exchange")
     */
    public Verdict check(Role role, Optional<String> authorization, Optional<String> certificateName, String what) {
        if (role == Role.STATUS && openStatus && authorization.isEmpty()) {
            return new Verdict.Allowed(new Principal.Anonymous());
        }
        Verdict who = authenticate(authorization, certificateName, role, what);
        if (!(who instanceof Verdict.Allowed allowed)) {
            return who;
        }
        Principal p = allowed.principal();
        return switch (role) {
            case STATUS -> who;
            case BROKER -> p instanceof Principal.Cluster ? who
                    : new Verdict.Refused(403, p + " may not call " + what + ": it needs a cluster's broker credential");
            case ADMIN -> p instanceof Principal.Admin ? who
                    : new Verdict.Refused(403, p + " may not call " + what + ": it needs the admin token");
        };
    }

    /** The caller's identity, whatever the endpoint. */
    public Verdict authenticate(Optional<String> authorizationHeader, Optional<String> certificateName, Role role,
            String what) {
        String certified = certificateName.map(clusterByCertificate::get).orElse(null);
        if (authorizationHeader.isEmpty()) {
            return certified != null ? new Verdict.Allowed(new Principal.Cluster(certified))
                    : new Verdict.Refused(401, "no credential: " + what + " needs " + needs(role));
        }
        String authorization = authorizationHeader.get();
        if (!authorization.regionMatches(true, 0, "Bearer ", 0, 7)) {
            return new Verdict.Refused(401, "the Authorization header is not a bearer token: " + what + " needs "
                    + needs(role));
        }
        Principal p = byToken(authorization.substring(7).trim());
        if (p == null) {
            return new Verdict.Refused(403, "the bearer token is not valid here");
        }
        if (certified != null && !p.equals(new Principal.Cluster(certified))) {
            return new Verdict.Refused(403, "the client certificate identifies cluster " + certified
                    + " but the bearer token is " + (p instanceof Principal.Cluster c ? "cluster " + c.name() + "'s"
                    : "the admin token"));
        }
        return new Verdict.Allowed(p);
    }

    /** Every digest is compared, found or not: the time taken does not depend on which one matches. */
    private @Nullable Principal byToken(String presented) {
        Principal found = null;
        for (var e : clusters.entrySet()) {
            if (e.getValue().matches(presented) && found == null) {
                found = new Principal.Cluster(e.getKey());
            }
        }
        if (admin.isPresent() && admin.get().matches(presented) && found == null) {
            found = new Principal.Admin();
        }
        return found;
    }

    private static String needs(Role role) {
        return switch (role) {
            case BROKER -> "a cluster's broker credential (a bearer token, or a cluster's client certificate)";
            case ADMIN -> "the admin token (a bearer token)";
            case STATUS -> "a bearer token";
        };
    }

    public boolean openStatus() {
        return openStatus;
    }
}
