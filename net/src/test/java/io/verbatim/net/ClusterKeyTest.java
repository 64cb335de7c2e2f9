package io.verbatim.net;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class ClusterKeyTest {

    @Test
    void aSecretSignsAndItsVerifyingKeyAloneOnlyVerifies() {
        ClusterKey secret = ClusterKey.parse("east-secret");
        ClusterKey verifyOnly = ClusterKey.parse(secret.verifying().form());
        assertThat(secret.signing()).isPresent();
        assertThat(verifyOnly.signing()).isEmpty();
        assertThat(verifyOnly.sameAs(secret)).isTrue();
        assertThat(ClusterKey.parse("west-secret").sameAs(secret)).isFalse();
        assertThat(verifyOnly.toString()).isEqualTo(secret.verifying().form()).doesNotContain("east-secret");
    }

    @Test
    void aDigestCannotCheckASignatureAndIsRefusedSayingWhatToGiveInstead() {
        String digest = Token.clear("east-secret").digestForm();
        assertThatThrownBy(() -> ClusterKey.parse(digest)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("is a SHA-256 digest, which cannot check a cluster's signatures")
                .hasMessageContaining("ed25519:<base64>").hasMessageContaining("verbatim key public");
        assertThatThrownBy(() -> ClusterKey.parse("ed25519:AAAA")).hasMessageContaining("3 bytes, not 32");
        assertThatThrownBy(() -> ClusterKey.parse("")).hasMessageContaining("must not be empty");
    }

    @Test
    void theAdminTokenIsRecognisedAsAClustersSecretWhicheverFormEachIsGivenIn() {
        ClusterKey secret = ClusterKey.parse("same");
        ClusterKey verifyOnly = ClusterKey.parse(secret.verifying().form());
        assertThat(secret.sameSecretAs(Token.clear("same"))).isTrue();
        assertThat(secret.sameSecretAs(Token.parse(Token.clear("same").digestForm()))).isTrue();
        assertThat(verifyOnly.sameSecretAs(Token.clear("same"))).isTrue();
        assertThat(verifyOnly.sameSecretAs(Token.parse(Token.clear("same").digestForm())))
                .as("a digest against a verifying key cannot be compared").isFalse();
        assertThat(secret.sameSecretAs(Token.clear("other"))).isFalse();
    }

    @Test
    void tokensAreHeldAsDigestsAndNeverPrinted() {
        Token t = Token.clear("s3cret");
        assertThat(t.toString()).startsWith("sha256:").doesNotContain("s3cret");
        assertThat(Token.parse(t.digestForm()).sameAs(t)).isTrue();
        assertThat(Token.parse(t.digestForm()).clear()).isEmpty();
        assertThat(Token.parse(t.digestForm()).matches("s3cret")).isTrue();
        assertThat(t.matches("s3cret ")).as("exactly the token").isFalse();
        assertThatThrownBy(() -> Token.parse("sha256:abc")).hasMessageContaining("is not a SHA-256 digest");
    }
}
