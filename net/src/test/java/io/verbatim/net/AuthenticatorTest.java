package io.verbatim.net;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.Base64;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * The authenticator's rules, one refusal each: a cluster is taken on its signature of this very call, made
 * for this cluster, within the window, once; the admin on its exact token; under mutual TLS a cluster on its
 * certificate.
 */
class AuthenticatorTest {
    private static final long NOW = 1_700_000_000_000L;
    private static final SigningKey EAST = SigningKey.fromSecret("east-secret");
    private static final SigningKey WEST = SigningKey.fromSecret("west-secret");
    private static final SigningKey MALLORY = SigningKey.fromSecret("mallory-secret");
    private static final String TARGET = "/admin/v2/scalable/exchange";
    private static final String NONCE = "00112233445566778899aabbccddeeff";

    /** ap-south's view: it holds us-east's and eu-west's verifying keys only. */
    private static Authenticator apSouth(boolean openStatus) {
        return new Authenticator("ap-south", Map.of("us-east", EAST.verifying(), "eu-west", WEST.verifying(),
                "ap-south", SigningKey.fromSecret("south-secret").verifying()), Optional.of(Token.clear("admin-secret")),
                Map.of("eu-west", "broker.eu-west.example"), openStatus, Duration.ofSeconds(60), 3);
    }

    private final Authenticator auth = apSouth(true);

    private static String signed(SigningKey key, String caller, String callee, long issuedMs, String nonce,
            String method, String target) {
        return SignedCall.authorization(new CallClaims(caller, callee, issuedMs, nonce, method, target), key);
    }

    private static String east(String callee, long issuedMs, String nonce) {
        return signed(EAST, "us-east", callee, issuedMs, nonce, "POST", TARGET);
    }

    private Verdict post(Role role, String authorization, long nowMs) {
        return auth.check(role, new Authenticator.Call("POST", TARGET, Optional.ofNullable(authorization),
                Optional.empty()), nowMs, "the exchange");
    }

    private static Verdict.Refused refused(Verdict v) {
        assertThat(v).isInstanceOf(Verdict.Refused.class);
        return (Verdict.Refused) v;
    }

    @Test
    void aClustersSignatureOfThisCallForThisClusterIsThatCluster() {
        assertThat(post(Role.BROKER, east("ap-south", NOW, NONCE), NOW)).isEqualTo(allowed(new Principal.Cluster("us-east")));
        assertThat(post(Role.BROKER, signed(WEST, "eu-west", "ap-south", NOW, NONCE, "POST", TARGET), NOW))
                .as("one nonce per caller: another cluster's same nonce is its own").isEqualTo(allowed(new Principal.Cluster("eu-west")));
    }

    @Test
    void aSignatureMadeForAnotherClusterIsRefusedThere() {
        // what eu-west received from us-east, replayed at ap-south
        Verdict.Refused r = refused(post(Role.BROKER, east("eu-west", NOW, NONCE), NOW));
        assertThat(r.status()).isEqualTo(403);
        assertThat(r.reason()).isEqualTo("the call is signed for cluster eu-west, not for ap-south (a signature is good "
                + "at the cluster it was made for only)");
    }

    @Test
    void aCallerOutsideTheConfigurationIsRefused() {
        Verdict.Refused r = refused(post(Role.BROKER, signed(MALLORY, "mallory", "ap-south", NOW, NONCE, "POST", TARGET), NOW));
        assertThat(r.status()).isEqualTo(403);
        assertThat(r.reason()).contains("signed as 'mallory', which is not a cluster of the configuration");
    }

    @Test
    void aSignatureByAnyOtherKeyThanTheCallersIsRefused() {
        Verdict.Refused r = refused(post(Role.BROKER, signed(MALLORY, "us-east", "ap-south", NOW, NONCE, "POST", TARGET), NOW));
        assertThat(r.status()).isEqualTo(403);
        assertThat(r.reason()).isEqualTo("the signature is not cluster us-east's");
        // the claims changed after signing (another callee spliced in) no longer verify either
        String good = east("eu-west", NOW, NONCE);
        String claims = Base64.getUrlEncoder().withoutPadding().encodeToString(new CallClaims("us-east",
                "ap-south", NOW, NONCE, "POST", TARGET).encode());
        String spliced = "Verbatim " + claims + good.substring(good.indexOf('.'));
        assertThat(refused(post(Role.BROKER, spliced, NOW)).reason()).isEqualTo("the signature is not cluster us-east's");
    }

    @Test
    void aSignatureIssuedOutsideTheWindowEitherWayIsRefused() {
        assertThat(post(Role.BROKER, east("ap-south", NOW - 60_000, NONCE), NOW)).as("at the window's edge")
                .isInstanceOf(Verdict.Allowed.class);
        Verdict.Refused old = refused(post(Role.BROKER, east("ap-south", NOW - 60_001, NONCE), NOW));
        assertThat(old.status()).isEqualTo(403);
        assertThat(old.reason()).contains("was made 60001 ms before this node's clock, outside the window of 60000 ms");
        Verdict.Refused ahead = refused(post(Role.BROKER, east("ap-south", NOW + 60_001, NONCE), NOW));
        assertThat(ahead.reason()).contains("60001 ms after this node's clock");
    }

    @Test
    void aSignatureForAnotherRequestIsRefused() {
        String forPost = east("ap-south", NOW, NONCE);
        Verdict.Refused otherTarget = refused(auth.check(Role.BROKER, new Authenticator.Call("POST",
                TARGET + "?x=1", Optional.of(forPost), Optional.empty()), NOW, "the exchange"));
        assertThat(otherTarget.status()).isEqualTo(403);
        assertThat(otherTarget.reason()).isEqualTo("the signature is for POST " + TARGET + ", not for POST " + TARGET + "?x=1");
        Verdict.Refused otherMethod = refused(auth.check(Role.BROKER, new Authenticator.Call("GET", TARGET,
                Optional.of(forPost), Optional.empty()), NOW, "the exchange"));
        assertThat(otherMethod.reason()).isEqualTo("the signature is for POST " + TARGET + ", not for GET " + TARGET);
    }

    @Test
    void aSignatureIsTakenOnceThenRefusedAsReplayed() {
        String call = east("ap-south", NOW, NONCE);
        assertThat(post(Role.BROKER, call, NOW)).isInstanceOf(Verdict.Allowed.class);
        Verdict.Refused again = refused(post(Role.BROKER, call, NOW + 1_000));
        assertThat(again.status()).isEqualTo(403);
        assertThat(again.reason()).isEqualTo("the call replays a signature of cluster us-east taken before (nonce " + NONCE + ")");
        // once the window passed it is refused as expired, never taken again
        assertThat(refused(post(Role.BROKER, call, NOW + 60_001)).reason()).contains("outside the window");
    }

    @Test
    void aCallerOverItsBoundIsRefusedUntilOlderCallsLeaveTheWindowAndNeverTakenUnchecked() {
        for (int i = 0; i < 3; i++) {
            assertThat(post(Role.BROKER, east("ap-south", NOW + i, nonce(i)), NOW + i)).isInstanceOf(Verdict.Allowed.class);
        }
        Verdict.Refused full = refused(post(Role.BROKER, east("ap-south", NOW + 3, nonce(3)), NOW + 3));
        assertThat(full.status()).isEqualTo(429);
        assertThat(full.reason()).isEqualTo("cluster us-east made more than 3 signed calls within the signature window "
                + "(60000 ms); refused until older ones leave it");
        assertThat(post(Role.BROKER, signed(WEST, "eu-west", "ap-south", NOW + 3, nonce(3), "POST", TARGET), NOW + 3))
                .as("another caller has its own share").isInstanceOf(Verdict.Allowed.class);
        assertThat(auth.remembered("us-east")).isEqualTo(3);
        // the first call leaves the window: one place again
        assertThat(post(Role.BROKER, east("ap-south", NOW + 60_001, nonce(4)), NOW + 60_001)).isInstanceOf(Verdict.Allowed.class);
        assertThat(auth.remembered("us-east")).isEqualTo(3);
    }

    @Test
    void aClockSteppingBackCannotBringBackAForgottenCall() {
        String call = east("ap-south", NOW, NONCE);
        assertThat(post(Role.BROKER, call, NOW)).isInstanceOf(Verdict.Allowed.class);
        // much later another call makes the cache forget the first nonce...
        assertThat(post(Role.BROKER, east("ap-south", NOW + 120_000, nonce(1)), NOW + 120_000)).isInstanceOf(Verdict.Allowed.class);
        // ...then the clock steps back: the first call is inside the window again by the clock, but refused
        Verdict.Refused r = refused(post(Role.BROKER, call, NOW + 30_000));
        assertThat(r.status()).isEqualTo(403);
        assertThat(r.reason()).contains("before the window as this node last saw its clock");
    }

    @Test
    void aGarbledSignatureIs401NamingWhat() {
        assertThat(refused(post(Role.BROKER, "Verbatim nodot", NOW)).reason())
                .isEqualTo("the cluster's signature is garbled: expected <claims>.<signature>, each base64url");
        assertThat(refused(post(Role.BROKER, "Verbatim a.b.c", NOW)).status()).isEqualTo(401);
        assertThat(refused(post(Role.BROKER, "Verbatim !!.AA", NOW)).reason()).contains("the claims are not base64url");
        String claims = Base64.getUrlEncoder().withoutPadding().encodeToString("v0\nus-east".getBytes());
        assertThat(refused(post(Role.BROKER, "Verbatim " + claims + "." + "A".repeat(86), NOW)).reason())
                .contains("the claims have 2 lines, not 7");
        assertThat(refused(post(Role.BROKER, "Basic eDp5", NOW))).satisfies(r -> {
            assertThat(r.status()).isEqualTo(401);
            assertThat(r.reason()).contains("neither a cluster's signature (Verbatim) nor a bearer token");
        });
        assertThat(refused(post(Role.BROKER, null, NOW))).satisfies(r -> {
            assertThat(r.status()).isEqualTo(401);
            assertThat(r.reason()).isEqualTo("no credential: the exchange needs a cluster's signature (Authorization: "
                    + "Verbatim) or a cluster's client certificate");
        });
    }

    @Test
    void aClustersSecretAsABearerTokenIsRefusedNamingWhy() {
        Verdict.Refused r = refused(post(Role.BROKER, "Bearer east-secret", NOW));
        assertThat(r.status()).isEqualTo(403);
        assertThat(r.reason()).contains("clusters sign their calls");
        assertThat(refused(post(Role.STATUS, "Bearer east-secret", NOW)).reason()).contains("clusters sign their calls");
    }

    @Test
    void theAdminTokenMatchesOnlyExactly() {
        assertThat(post(Role.ADMIN, "Bearer admin-secret", NOW)).isEqualTo(allowed(new Principal.Admin()));
        assertThat(post(Role.ADMIN, "bearer admin-secret", NOW)).as("the scheme is case-insensitive")
                .isEqualTo(allowed(new Principal.Admin()));
        for (String near : new String[] {"admin-secret ", " admin-secret", "admin-secret\t", "admin-secreT", "admin-secret\n"}) {
            assertThat(refused(post(Role.ADMIN, "Bearer " + near, NOW))).as("'%s'", near).satisfies(r -> {
                assertThat(r.status()).isEqualTo(403);
                assertThat(r.reason()).startsWith("the bearer token is not valid here");
            });
        }
    }

    @Test
    void aClusterMayNotCallAdminEndpointsNorTheAdminBrokerEndpoints() {
        assertThat(refused(post(Role.ADMIN, east("ap-south", NOW, NONCE), NOW)).reason())
                .isEqualTo("cluster us-east may not call the exchange: it needs the admin token");
        assertThat(refused(post(Role.BROKER, "Bearer admin-secret", NOW)).reason())
                .isEqualTo("the admin may not call the exchange: it needs a cluster's signature");
    }

    @Test
    void openStatusNeedsNothingAndClosedStatusTakesTheAdminTokenASignatureOrACertificate() {
        assertThat(post(Role.STATUS, null, NOW)).isEqualTo(allowed(new Principal.Anonymous()));
        assertThat(post(Role.STATUS, "Bearer nope", NOW)).as("a credential given must be valid").isInstanceOf(Verdict.Refused.class);
        Authenticator closed = apSouth(false);
        assertThat(refused(closed.check(Role.STATUS, new Authenticator.Call("GET", "/metrics", Optional.empty(),
                Optional.empty()), NOW, "the metrics")).status()).isEqualTo(401);
        assertThat(closed.check(Role.STATUS, new Authenticator.Call("GET", "/metrics", Optional.of("Bearer admin-secret"),
                Optional.empty()), NOW, "the metrics")).isEqualTo(allowed(new Principal.Admin()));
        assertThat(closed.check(Role.STATUS, new Authenticator.Call("GET", "/metrics", Optional.of(signed(EAST, "us-east",
                "ap-south", NOW, NONCE, "GET", "/metrics")), Optional.empty()), NOW, "the metrics"))
                .isEqualTo(allowed(new Principal.Cluster("us-east")));
        assertThat(closed.check(Role.STATUS, new Authenticator.Call("GET", "/metrics", Optional.empty(),
                Optional.of("us-east")), NOW, "the metrics")).isEqualTo(allowed(new Principal.Cluster("us-east")));
    }

    @Test
    void underMutualTlsTheCertificateNamesTheClusterAndASignatureOfAnotherIsRefused() {
        assertThat(auth.check(Role.BROKER, new Authenticator.Call("POST", TARGET, Optional.empty(), Optional.of("us-east")),
                NOW, "x")).isEqualTo(allowed(new Principal.Cluster("us-east")));
        assertThat(auth.check(Role.BROKER, new Authenticator.Call("POST", TARGET, Optional.empty(),
                Optional.of("broker.eu-west.example")), NOW, "x")).as("clusters[].certificateName")
                .isEqualTo(allowed(new Principal.Cluster("eu-west")));
        assertThat(auth.check(Role.BROKER, new Authenticator.Call("POST", TARGET, Optional.of(east("ap-south", NOW, NONCE)),
                Optional.of("us-east")), NOW, "x")).isEqualTo(allowed(new Principal.Cluster("us-east")));
        Verdict.Refused other = refused(auth.check(Role.BROKER, new Authenticator.Call("POST", TARGET,
                Optional.of(signed(WEST, "eu-west", "ap-south", NOW, NONCE, "POST", TARGET)), Optional.of("us-east")), NOW, "x"));
        assertThat(other.status()).isEqualTo(403);
        assertThat(other.reason()).isEqualTo("the client certificate identifies cluster us-east but the call is signed "
                + "by cluster eu-west");
        assertThat(refused(auth.check(Role.BROKER, new Authenticator.Call("POST", TARGET, Optional.empty(),
                Optional.of("someone-else")), NOW, "x")).status()).as("a certificate naming no cluster identifies nobody")
                .isEqualTo(401);
    }

    private static String nonce(int i) {
        return String.format("%032x", i);
    }

    private static Verdict allowed(Principal p) {
        return new Verdict.Allowed(p);
    }
}
