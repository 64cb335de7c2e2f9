package io.verbatim.net;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * Decides who a caller is and whether it may use an endpoint of a {@link Role}. A cluster proves itself
 * with a signature of the call ({@code Authorization: Verbatim …}, {@link SignedCall}) or, under mutual
 * TLS, with its verified client certificate; the admin with its bearer token. Every refusal names why: 401
 * when no credential came or it is garbled, 403 when one came that does not do.
 *
 * <p>A cluster's signature is taken only when it was made for this cluster, verifies with the cluster's
 * key, was issued within the signature window of this node's clock, is for this very request (method and
 * target), and its nonce was not taken before ({@link ReplayCache}). So what a cluster sends one peer is
 * worth nothing at another, for another request, later, or a second time. A cluster's secret presented as
 * a bearer token is refused: clusters sign their calls.
 *
 * <p>The decision is a function of the call, the time passed in and the nonces taken so far: no I/O, no
 * clock of its own. The admin token is compared as a SHA-256 digest in constant time, the token exactly as
 * presented (a space more is another token).
 */
public final class Authenticator {
    /** The signature window when none is configured. */
    public static final Duration DEFAULT_WINDOW = Duration.ofSeconds(60);
    /** The signed calls of one cluster remembered within the window when no bound is configured. */
    public static final int DEFAULT_MAX_CALLS_PER_WINDOW = 100_000;

    private final String self;
    private final Map<String, VerifyingKey> clusters;
    private final Optional<Token> admin;
    private final Map<String, String> clusterByCertificate;
    private final boolean openStatus;
    private final long windowMs;
    private final ReplayCache seen;

    /**
     * One request as the authenticator sees it.
     *
     * @param method the request's method
     * @param target the request target as received (path and query)
     * @param authorization the {@code Authorization} header, if the request has one
     * @param certificateName the CN of the client certificate TLS verified, if any
     */
    public record Call(String method, String target, Optional<String> authorization, Optional<String> certificateName) {
        public Call {
            Objects.requireNonNull(method, "method");
            Objects.requireNonNull(target, "target");
            Objects.requireNonNull(authorization, "authorization");
            Objects.requireNonNull(certificateName, "certificateName");
        }
    }

    /**
     * @param self the cluster this node belongs to: signatures made for another are refused
     * @param clusters each cluster's key (its own too)
     * @param admin the admin token, or empty when this node takes no layout operations
     * @param certificateNames each cluster's certificate name (its CN), by cluster; a cluster not listed is
     *        named by its own name
     * @param openStatus whether status, status page and metrics need no credential
     * @param window how far a signature's time of issue may be from this node's clock, either way
     * @param maxCallsPerWindow the signed calls of one cluster remembered within the window (their nonces);
     *        a call beyond is refused (429) until older ones leave it
     */
    public Authenticator(String self, Map<String, VerifyingKey> clusters, Optional<Token> admin,
            Map<String, String> certificateNames, boolean openStatus, Duration window, int maxCallsPerWindow) {
        this.self = Objects.requireNonNull(self, "self");
        this.clusters = Map.copyOf(clusters);
        this.admin = Objects.requireNonNull(admin, "admin (Optional.empty() for none)");
        Map<String, String> byCertificate = new LinkedHashMap<>();
        for (String cluster : clusters.keySet()) {
            byCertificate.put(certificateNames.getOrDefault(cluster, cluster), cluster);
        }
        this.clusterByCertificate = Map.copyOf(byCertificate);
        this.openStatus = openStatus;
        if (window.isNegative() || window.isZero()) {
            throw new IllegalArgumentException("the signature window is " + window + ": must be positive");
        }
        this.windowMs = window.toMillis();
        this.seen = new ReplayCache(maxCallsPerWindow, windowMs);
    }

    /** With the default window and bound. */
    public Authenticator(String self, Map<String, VerifyingKey> clusters, Optional<Token> admin,
            Map<String, String> certificateNames, boolean openStatus) {
        this(self, clusters, admin, certificateNames, openStatus, DEFAULT_WINDOW, DEFAULT_MAX_CALLS_PER_WINDOW);
    }

    /**
     * May this caller use an endpoint of {@code role}?
     *
     * @param nowMs this node's clock, in ms since the epoch
     * @param what the endpoint, for the refusal's text ("the exchange")
     */
    public Verdict check(Role role, Call call, long nowMs, String what) {
        if (role == Role.STATUS && openStatus && call.authorization().isEmpty()) {
            return new Verdict.Allowed(new Principal.Anonymous());
        }
        Verdict who = authenticate(call, nowMs, role, what);
        if (!(who instanceof Verdict.Allowed allowed)) {
            return who;
        }
        Principal p = allowed.principal();
        return switch (role) {
            case STATUS -> who;
            case BROKER -> p instanceof Principal.Cluster ? who
                    : new Verdict.Refused(403, p + " may not call " + what + ": it needs a cluster's signature");
            case ADMIN -> p instanceof Principal.Admin ? who
                    : new Verdict.Refused(403, p + " may not call " + what + ": it needs the admin token");
        };
    }

    /** The caller's identity, whatever the endpoint. */
    public Verdict authenticate(Call call, long nowMs, Role role, String what) {
        String certified = call.certificateName().map(clusterByCertificate::get).orElse(null);
        if (call.authorization().isEmpty()) {
            return certified != null ? new Verdict.Allowed(new Principal.Cluster(certified))
                    : new Verdict.Refused(401, "no credential: " + what + " needs " + needs(role));
        }
        String authorization = call.authorization().get();
        Verdict who;
        if (SignedCall.isOfScheme(authorization)) {
            who = signed(authorization, call, nowMs);
        } else if (authorization.regionMatches(true, 0, "Bearer ", 0, 7)) {
            who = bearer(authorization.substring(7), role);
        } else {
            return new Verdict.Refused(401, "the Authorization header is neither a cluster's signature (Verbatim) "
                    + "nor a bearer token: " + what + " needs " + needs(role));
        }
        if (certified != null && who instanceof Verdict.Allowed a && !a.principal().equals(new Principal.Cluster(certified))) {
            return new Verdict.Refused(403, "the client certificate identifies cluster " + certified + " but the "
                    + (a.principal() instanceof Principal.Cluster c ? "call is signed by cluster " + c.name()
                    : "bearer token is the admin token"));
        }
        return who;
    }

    private Verdict bearer(String presented, Role role) {
        if (admin.isPresent() && admin.get().matches(presented)) {
            return new Verdict.Allowed(new Principal.Admin());
        }
        return new Verdict.Refused(403, role == Role.BROKER
                ? "a bearer token is not a cluster's credential: clusters sign their calls (Authorization: Verbatim; "
                        + "a node of an earlier version presents its token instead)"
                : "the bearer token is not valid here (the admin token is the only bearer token; clusters sign their "
                        + "calls)");
    }

    private Verdict signed(String authorization, Call call, long nowMs) {
        SignedCall signed;
        try {
            signed = SignedCall.parse(authorization);
        } catch (IllegalArgumentException e) {
            return new Verdict.Refused(401, "the cluster's signature is garbled: " + e.getMessage());
        }
        CallClaims c = signed.claims();
        if (!c.callee().equals(self)) {
            return new Verdict.Refused(403, "the call is signed for cluster " + c.callee() + ", not for " + self
                    + " (a signature is good at the cluster it was made for only)");
        }
        VerifyingKey key = clusters.get(c.caller());
        if (key == null) {
            return new Verdict.Refused(403, "the call is signed as '" + c.caller() + "', which is not a cluster of "
                    + "the configuration");
        }
        long skewMs = nowMs - c.issuedMs();
        if (Math.abs(skewMs) > windowMs) {
            return new Verdict.Refused(403, "the signature of cluster " + c.caller() + " was made " + Math.abs(skewMs)
                    + " ms " + (skewMs > 0 ? "before" : "after") + " this node's clock, outside the window of "
                    + windowMs + " ms (expired, or the clocks differ; security.signatureWindow)");
        }
        if (!c.method().equals(call.method()) || !c.target().equals(call.target())) {
            return new Verdict.Refused(403, "the signature is for " + c.method() + " " + shown(c.target()) + ", not for "
                    + call.method() + " " + shown(call.target()));
        }
        // the costliest check (an Ed25519 verification), so the last of the claims'; the nonce only once it held
        if (!signed.verifiedBy(key)) {
            return new Verdict.Refused(403, "the signature is not cluster " + c.caller() + "'s");
        }
        ReplayCache.Admission admission = seen.admit(c.caller(), c.nonce(), c.issuedMs(), nowMs);
        if (admission instanceof ReplayCache.Admission.Replayed) {
            return new Verdict.Refused(403, "the call replays a signature of cluster " + c.caller() + " taken before "
                    + "(nonce " + c.nonce() + ")");
        }
        if (admission instanceof ReplayCache.Admission.Full f) {
            return new Verdict.Refused(429, "cluster " + c.caller() + " made more than " + f.max() + " signed calls "
                    + "within the signature window (" + windowMs + " ms); refused until older ones leave it");
        }
        if (admission instanceof ReplayCache.Admission.Forgotten f) {
            return new Verdict.Refused(403, "the signature of cluster " + c.caller() + " was made at " + c.issuedMs()
                    + " ms, before the window as this node last saw its clock (" + f.latestMs() + " ms): expired");
        }
        return new Verdict.Allowed(new Principal.Cluster(c.caller()));
    }

    private static String needs(Role role) {
        return switch (role) {
            case BROKER -> "a cluster's signature (Authorization: Verbatim) or a cluster's client certificate";
            case ADMIN -> "the admin token (a bearer token)";
            case STATUS -> "the admin token, a cluster's signature or a cluster's client certificate";
        };
    }

    private static String shown(String s) {
        String t = s.length() > 128 ? s.substring(0, 128) + "…" : s;
        return t.replaceAll("[^\\x20-\\x7e]", "?");
    }

    /** The cluster this node belongs to. */
    public String self() {
        return self;
    }

    public boolean openStatus() {
        return openStatus;
    }

    /** How many signed calls of {@code cluster} are remembered now (their nonces). */
    public int remembered(String cluster) {
        return seen.held(cluster);
    }
}
