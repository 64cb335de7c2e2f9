package io.verbatim.net;

import java.security.MessageDigest;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * A cluster's credential as a node holds it ({@code clusters[].token}): always the cluster's
 * {@link VerifyingKey}, which checks the signatures of its calls, and its {@link SigningKey} only where the
 * node was given the secret (on the cluster's own nodes). A node of another cluster may be given the
 * verifying key alone, {@code ed25519:<base64>}: it can check the cluster and cannot speak for it.
 *
 * <p>The secret itself never goes on the wire: a call carries a signature bound to the cluster it calls,
 * the time, the request and a nonce ({@link CallClaims}).
 */
public final class ClusterKey {
    private static final String DIGEST_PREFIX = "sha256:";
    private final VerifyingKey verifying;
    private final @Nullable SigningKey signing;
    /** SHA-256 of the secret, when held: compared with the admin token's digest at load. */
    private final byte @Nullable [] secretDigest;

    private ClusterKey(VerifyingKey verifying, @Nullable SigningKey signing, byte @Nullable [] secretDigest) {
        this.verifying = verifying;
        this.signing = signing;
        this.secretDigest = secretDigest;
    }

    /** The key of a secret given in clear: it signs and verifies. */
    public static ClusterKey secret(String secret) {
        if (secret == null || secret.isEmpty()) {
            throw new IllegalArgumentException("a cluster's secret must not be empty");
        }
        SigningKey key = SigningKey.fromSecret(secret);
        return new ClusterKey(key.verifying(), key, Token.sha256(secret));
    }

    /**
     * A credential as written in a configuration: {@code ed25519:<base64>} is a verifying key (verified only),
     * anything else the secret. {@code sha256:<hex>}, the digest earlier versions took, is refused: a digest
     * cannot check a signature.
     *
     * @throws IllegalArgumentException naming what is wrong and how to get the verifying key
     */
    public static ClusterKey parse(String value) {
        if (value != null && value.startsWith(VerifyingKey.PREFIX)) {
            return new ClusterKey(VerifyingKey.parse(value), null, null);
        }
        if (value != null && value.startsWith(DIGEST_PREFIX)) {
            throw new IllegalArgumentException("'" + shown(value) + "' is a SHA-256 digest, which cannot check a "
                    + "cluster's signatures (clusters sign their calls; expected the secret, env:NAME, or its verifying "
                    + "key ed25519:<base64>, which `verbatim key public` prints from the secret)");
        }
        return secret(value);
    }

    /** The key that checks the cluster's signatures. */
    public VerifyingKey verifying() {
        return verifying;
    }

    /** The key the cluster signs with, when this node was given its secret. */
    public Optional<SigningKey> signing() {
        return Optional.ofNullable(signing);
    }

    /** Whether both are the same cluster credential, whichever form each was given in. */
    public boolean sameAs(ClusterKey other) {
        return verifying.equals(other.verifying);
    }

    /** Whether {@code token} (the admin's, say) is this credential's secret, whichever form each was given in. */
    public boolean sameSecretAs(Token token) {
        if (secretDigest != null) {
            return MessageDigest.isEqual(secretDigest, token.digest());
        }
        return token.clear().map(t -> SigningKey.fromSecret(t).verifying().equals(verifying)).orElse(false);
    }

    private static String shown(String value) {
        return value.length() > 16 ? value.substring(0, 16) + "…" : value;
    }

    /** Never the secret: the verifying key's form. */
    @Override
    public String toString() {
        return verifying.form();
    }
}
