package io.verbatim.pulsar;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.SecureRandom;
import java.util.Base64;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * An HS256 secret and the JWTs it signs, made at test time: what Pulsar's {@code AuthenticationProviderToken}
 * checks with {@code tokenSecretKey=data:;base64,...}, the role being the {@code sub} claim.
 */
final class TestTokens {
    private final byte[] secret;

    /** A new random 256-bit secret. */
    TestTokens() {
        this.secret = new byte[32];
        new SecureRandom().nextBytes(secret);
    }

    /** The broker's {@code tokenSecretKey} value. */
    String secretKeySetting() {
        return "data:;base64," + Base64.getEncoder().encodeToString(secret);
    }

    /** A token for {@code role}, without expiry. */
    String token(String role) {
        Base64.Encoder b64 = Base64.getUrlEncoder().withoutPadding();
        String header = b64.encodeToString("{\"alg\":\"HS256\",\"typ\":\"JWT\"}".getBytes(StandardCharsets.UTF_8));
        String claims = b64.encodeToString(("{\"sub\":\"" + role + "\"}").getBytes(StandardCharsets.UTF_8));
        String signed = header + "." + claims;
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(secret, "HmacSHA256"));
            return signed + "." + b64.encodeToString(mac.doFinal(signed.getBytes(StandardCharsets.US_ASCII)));
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256", e);
        }
    }
}
