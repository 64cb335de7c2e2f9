package io.verbatim.metadatalog.identity;

import static org.assertj.core.api.Assertions.assertThat;

import io.verbatim.net.SigningKey;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Issue 23 (7): the brokers' report carried the group's secret in clear ({@code Bearer}). Now it carries the
 * brokers' signature over the request, bound to the member called and the time, good once.
 */
class SignedCallTest {
    private static final String GROUP = "east";
    private static final SigningKey BROKERS = SigningKey.fromSecret("brokers-secret");
    private static final SigningKey C1 = SigningKey.fromSecret("c1-secret");
    private static final MemberKeys AS_BROKERS = MemberKeys.of("brokers", BROKERS);
    private static final byte[] BODY = "{\"topics\":{}}".getBytes(StandardCharsets.UTF_8);
    private static final long NOW = 1_767_225_600_000L;

    private static SignedCall.Verifier atC1() {
        return new SignedCall.Verifier(GROUP, "c1", Map.of("brokers", BROKERS.verifying()), SignedCall.WINDOW, 100);
    }

    private static String signed(MemberKeys keys, String to, byte[] body, long at) {
        return SignedCall.authorization(GROUP, keys, to, "POST", "/controller/report", body, at);
    }

    private static SignedCall.Result check(SignedCall.Verifier v, String header, byte[] body, long at) {
        return v.check(header, "POST", "/controller/report", body, at);
    }

    @Test
    void theBrokersCallIsAcceptedOnceAndShowsNoSecret() {
        SignedCall.Verifier v = atC1();
        String header = signed(AS_BROKERS, "c1", BODY, NOW);
        assertThat(header).startsWith("VerbatimMember from=brokers,to=c1,time=" + NOW + ",nonce=")
                .doesNotContain("brokers-secret");
        assertThat(check(v, header, BODY, NOW + 2000)).isEqualTo(new SignedCall.Result.Accepted("brokers"));
        assertThat(check(v, header, BODY, NOW + 3000)).isEqualTo(new SignedCall.Result.Refused(403,
                "the call was made before (a replay)"));
        assertThat(check(v, signed(AS_BROKERS, "c1", BODY, NOW + 3000), BODY, NOW + 3000))
                .as("a new call, signed anew").isInstanceOf(SignedCall.Result.Accepted.class);
    }

    @Test
    void aCallSignedForAnotherReplicaAnotherBodyOrTimeOrByAnotherKeyIsRefused() {
        SignedCall.Verifier v = atC1();
        assertThat(check(v, signed(AS_BROKERS, "c2", BODY, NOW), BODY, NOW)).isEqualTo(new SignedCall.Result.Refused(
                403, "the call is signed for member 'c2', not c1"));
        assertThat(check(v, signed(AS_BROKERS, "c1", BODY, NOW), "{}".getBytes(StandardCharsets.UTF_8), NOW))
                .isEqualTo(new SignedCall.Result.Refused(403, "the signature is not member brokers's over this request"));
        assertThat(check(v, signed(AS_BROKERS, "c1", BODY, NOW), BODY, NOW + 30_001)).isInstanceOfSatisfying(
                SignedCall.Result.Refused.class, r -> assertThat(r.why()).contains("30001 ms before").contains("at most 30000 ms"));
        assertThat(check(v, signed(MemberKeys.of("brokers", C1), "c1", BODY, NOW), BODY, NOW))
                .as("c1's key, claiming to be the brokers").isInstanceOfSatisfying(SignedCall.Result.Refused.class,
                        r -> assertThat(r.status()).isEqualTo(403));
        assertThat(check(v, signed(MemberKeys.of("c2", C1), "c1", BODY, NOW), BODY, NOW)).isInstanceOfSatisfying(
                SignedCall.Result.Refused.class, r -> assertThat(r.why()).contains("member 'c2' may not"));
        assertThat(v.check(signed(AS_BROKERS, "c1", BODY, NOW), "POST", "/admin", BODY, NOW))
                .as("another path").isInstanceOf(SignedCall.Result.Refused.class);
    }

    @Test
    void noCredentialOrAnotherFormIs401() {
        SignedCall.Verifier v = atC1();
        assertThat(v.precheck(null, NOW)).isEqualTo(new SignedCall.Result.Refused(401,
                "no credential (expected Authorization: VerbatimMember from=..., signed with the calling member's own key)"));
        assertThat(v.precheck("Bearer east-inner-secret", NOW)).isNotNull().extracting(SignedCall.Result.Refused::status)
                .isEqualTo(401);
        assertThat(v.precheck("VerbatimMember from=brokers,to=c1,time=x,nonce=n,signature=s", NOW)).isNotNull();
        assertThat(v.precheck("VerbatimMember from=brokers,from=c1,to=c1,time=1,nonce=n", NOW)).isNotNull();
        String forged = "VerbatimMember from=brokers\nINFO forged,to=c1,time=" + NOW + ",nonce=n,signature=s";
        assertThat(v.precheck(forged, NOW)).isNotNull().extracting(SignedCall.Result.Refused::why).asString()
                .contains("brokers\\nINFO forged").doesNotContain("\n");
    }

    @Test
    void theCallsRememberedAreBounded() {
        SignedCall.Verifier v = new SignedCall.Verifier(GROUP, "c1", Map.of("brokers", BROKERS.verifying()),
                Duration.ofSeconds(30), 2);
        assertThat(check(v, signed(AS_BROKERS, "c1", BODY, NOW), BODY, NOW)).isInstanceOf(SignedCall.Result.Accepted.class);
        assertThat(check(v, signed(AS_BROKERS, "c1", BODY, NOW), BODY, NOW)).isInstanceOf(SignedCall.Result.Accepted.class);
        assertThat(check(v, signed(AS_BROKERS, "c1", BODY, NOW), BODY, NOW)).isInstanceOfSatisfying(
                SignedCall.Result.Refused.class, r -> assertThat(r.status()).isEqualTo(429));
        long later = NOW + 30_001;
        assertThat(check(v, signed(AS_BROKERS, "c1", BODY, later), BODY, later)).as("the first two expired")
                .isInstanceOf(SignedCall.Result.Accepted.class);
    }
}
