package io.verbatim.net;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.security.KeyPairGenerator;
import java.security.Signature;
import java.util.Random;
import org.junit.jupiter.api.Test;

class SigningKeyTest {
    private static final byte[] MESSAGE = "to eu-west at 1700000000000".getBytes(StandardCharsets.UTF_8);

    @Test
    void theSameSecretGivesTheSameKeyAndAnotherSecretAnother() {
        SigningKey a = SigningKey.fromSecret("east-secret");
        assertThat(SigningKey.fromSecret("east-secret").verifying()).isEqualTo(a.verifying());
        assertThat(SigningKey.fromSecret("east-secret ").verifying()).isNotEqualTo(a.verifying());
        assertThat(SigningKey.fromSecret("west-secret").verifying()).isNotEqualTo(a.verifying());
    }

    @Test
    void aVerifyingKeyInItsWrittenFormChecksTheSignaturesOfItsKeyOnly() {
        SigningKey east = SigningKey.fromSecret("east-secret");
        VerifyingKey written = VerifyingKey.parse(east.verifying().form());
        byte[] signature = east.sign(MESSAGE);
        assertThat(written.verifies(MESSAGE, signature)).isTrue();
        assertThat(written.verifies("to ap-south at 1700000000000".getBytes(StandardCharsets.UTF_8), signature))
                .as("bound to what was signed").isFalse();
        assertThat(SigningKey.fromSecret("west-secret").verifying().verifies(MESSAGE, signature)).isFalse();
        assertThat(written.verifies(MESSAGE, new byte[3])).as("a malformed signature verifies nothing").isFalse();
    }

    /** The derivation leans on how the JDK's generator draws its seed: the derived pair must be a real pair. */
    @Test
    void theDerivedKeysAreAnEd25519PairTheJdkAgreesWith() throws Exception {
        Random random = new Random(7);
        for (int i = 0; i < 20; i++) {
            byte[] secret = new byte[1 + random.nextInt(40)];
            random.nextBytes(secret);
            SigningKey key = SigningKey.fromSecret(new String(secret, StandardCharsets.ISO_8859_1));
            byte[] signature = key.sign(MESSAGE);
            Signature jdk = Signature.getInstance("Ed25519");
            jdk.initVerify(KeyPairGenerator.getInstance("Ed25519").generateKeyPair().getPublic());
            jdk.update(MESSAGE);
            assertThat(jdk.verify(signature)).as("a stranger's key").isFalse();
            assertThat(VerifyingKey.parse(key.verifying().form()).verifies(MESSAGE, signature)).isTrue();
        }
    }

    @Test
    void aKnownSecretGivesItsKnownKey() {
        // pinned: a JDK whose generator stopped deriving keys from the seed would change it, and every
        // configuration written with verifying keys would stop working
        assertThat(SigningKey.fromSecret("east-secret").verifying().form())
                .isEqualTo("ed25519:WzqJUMEgXo9Ekxj5pNgSROH5J3zJjt3B7KhpUUyy2ag=");
    }

    @Test
    void badFormsAreRefusedNamingWhatIsWrong() {
        assertThatThrownBy(() -> VerifyingKey.parse("sha256:00")).hasMessageContaining("expected ed25519:");
        assertThatThrownBy(() -> VerifyingKey.parse("ed25519:%%%")).hasMessageContaining("not base64");
        assertThatThrownBy(() -> VerifyingKey.parse("ed25519:AAAA")).hasMessageContaining("3 bytes, not 32");
        assertThatThrownBy(() -> SigningKey.fromSecret("")).hasMessageContaining("must not be empty");
    }

    @Test
    void neitherKeyPrintsTheSecret() {
        SigningKey key = SigningKey.fromSecret("east-secret");
        assertThat(key.toString()).doesNotContain("east-secret").contains(VerifyingKey.PREFIX);
    }
}
