package io.verbatim.net;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class AuthenticatorTest {
    private static final Authenticator AUTH = new Authenticator(Map.of("us-east", Token.clear("east-secret"),
            "eu-west", Token.parse(Token.clear("west-secret").digestForm())), Optional.of(Token.clear("admin-secret")),
            Map.of("eu-west", "broker.eu-west.example"), true);

    private static Verdict check(Role role, String token, String certificate) {
        return AUTH.check(role, Optional.ofNullable(token).map(t -> "Bearer " + t), Optional.ofNullable(certificate),
                "the endpoint");
    }

    @Test
    void eachClusterIsItsOwnIdentityAndTheAdminAnother() {
        assertThat(check(Role.BROKER, "east-secret", null)).isEqualTo(allowed(new Principal.Cluster("us-east")));
        assertThat(check(Role.BROKER, "west-secret", null)).as("verified by its digest alone")
                .isEqualTo(allowed(new Principal.Cluster("eu-west")));
        assertThat(check(Role.ADMIN, "admin-secret", null)).isEqualTo(allowed(new Principal.Admin()));
    }

    @Test
    void aBrokerCredentialIsRefusedOnAdminEndpointsAndTheAdminTokenOnBrokerEndpoints() {
        assertThat(check(Role.ADMIN, "east-secret", null)).isEqualTo(new Verdict.Refused(403,
                "cluster us-east may not call the endpoint: it needs the admin token"));
        assertThat(check(Role.BROKER, "admin-secret", null)).isEqualTo(new Verdict.Refused(403,
                "the admin may not call the endpoint: it needs a cluster's broker credential"));
    }

    @Test
    void noCredentialIs401AndAWrongOne403() {
        assertThat(check(Role.BROKER, null, null)).isInstanceOfSatisfying(Verdict.Refused.class,
                r -> assertThat(r.status()).isEqualTo(401));
        assertThat(AUTH.check(Role.ADMIN, Optional.of("Basic eDp5"), Optional.empty(), "x")).isInstanceOfSatisfying(Verdict.Refused.class,
                r -> assertThat(r.reason()).contains("not a bearer token"));
        assertThat(check(Role.BROKER, "east-secreT", null)).isEqualTo(new Verdict.Refused(403,
                "the bearer token is not valid here"));
    }

    @Test
    void openStatusNeedsNoTokenButATokenGivenMustBeValid() {
        assertThat(check(Role.STATUS, null, null)).isEqualTo(allowed(new Principal.Anonymous()));
        assertThat(check(Role.STATUS, "nope", null)).isInstanceOf(Verdict.Refused.class);
        Authenticator closed = new Authenticator(Map.of("a", Token.clear("a")), Optional.empty(), Map.of(), false);
        assertThat(closed.check(Role.STATUS, Optional.empty(), Optional.empty(), "status")).isInstanceOfSatisfying(Verdict.Refused.class,
                r -> assertThat(r.status()).isEqualTo(401));
        assertThat(closed.check(Role.STATUS, Optional.of("Bearer a"), Optional.empty(), "status")).isEqualTo(allowed(new Principal.Cluster("a")));
        assertThat(closed.check(Role.ADMIN, Optional.of("Bearer a"), Optional.empty(), "admin")).as("no admin token: nobody is the admin")
                .isInstanceOf(Verdict.Refused.class);
    }

    @Test
    void underMutualTlsTheCertificateNamesTheClusterAndATokenOfAnotherIsRefused() {
        assertThat(check(Role.BROKER, null, "us-east")).isEqualTo(allowed(new Principal.Cluster("us-east")));
        assertThat(check(Role.BROKER, null, "broker.eu-west.example")).as("clusters[].certificateName")
                .isEqualTo(allowed(new Principal.Cluster("eu-west")));
        assertThat(check(Role.BROKER, "east-secret", "us-east")).isEqualTo(allowed(new Principal.Cluster("us-east")));
        assertThat(check(Role.BROKER, "west-secret", "us-east")).isEqualTo(new Verdict.Refused(403,
                "the client certificate identifies cluster us-east but the bearer token is cluster eu-west's"));
        assertThat(check(Role.BROKER, null, "someone-else")).as("a certificate naming no cluster identifies nobody")
                .isInstanceOfSatisfying(Verdict.Refused.class, r -> assertThat(r.status()).isEqualTo(401));
    }

    @Test
    void tokensAreHeldAsDigestsAndNeverPrinted() {
        Token t = Token.clear("s3cret");
        assertThat(t.toString()).startsWith("sha256:").doesNotContain("s3cret");
        assertThat(Token.parse(t.digestForm()).sameAs(t)).isTrue();
        assertThat(Token.parse(t.digestForm()).clear()).isEmpty();
        assertThat(Token.parse(t.digestForm()).matches("s3cret")).isTrue();
        assertThatThrownBy(() -> Token.parse("sha256:abc")).hasMessageContaining("is not a SHA-256 digest");
    }

    private static Verdict allowed(Principal p) {
        return new Verdict.Allowed(p);
    }
}
