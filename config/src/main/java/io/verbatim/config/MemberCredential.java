package io.verbatim.config;

import io.verbatim.net.SigningKey;
import io.verbatim.net.ClusterKey;
import io.verbatim.net.Token;
import io.verbatim.net.VerifyingKey;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * One member of a cluster's metadata log as a node knows it: its own secret where the member runs (it signs
 * with the key derived from it, {@link SigningKey#fromSecret}), or elsewhere its verifying key alone
 * ({@code ed25519:<base64>}), with which the other members check that a peer is that member. Read from
 * {@code clusters[].controllers[].secret} (a controller replica) and {@code clusters[].brokersSecret} (the
 * brokers' process). Never shows the secret.
 */
public final class MemberCredential {
    private final String key;
    private final VerifyingKey verifying;
    private final @Nullable SigningKey signing;
    private final @Nullable Token secret;

    private MemberCredential(String key, VerifyingKey verifying, @Nullable SigningKey signing, @Nullable Token secret) {
        this.key = key;
        this.verifying = verifying;
        this.signing = signing;
        this.secret = secret;
    }

    /**
     * {@code value} as written at {@code key} (after {@code env:} was read): {@code ed25519:<base64>} is a
     * verifying key; anything else the member's secret.
     *
     * @throws IllegalArgumentException naming what is wrong: a bad verifying key, a digest (it cannot check a
     *     signature), white space at either end
     */
    static MemberCredential parse(String key, String value) {
        if (value.startsWith(VerifyingKey.PREFIX)) {
            return new MemberCredential(key, VerifyingKey.parse(value), null, null);
        }
        if (value.startsWith("sha256:")) {
            throw new IllegalArgumentException("is a digest, which cannot check a member's signature (expected the "
                    + "member's secret, env:NAME, or its verifying key " + VerifyingKey.PREFIX + "<base64>)");
        }
        if (!value.equals(value.strip())) {
            throw new IllegalArgumentException("has white space at its start or end (expected the member's secret, "
                    + "compared exactly)");
        }
        SigningKey signing = SigningKey.fromSecret(value);
        return new MemberCredential(key, signing.verifying(), signing, Token.clear(value));
    }

    /** Where it was given ({@code clusters[0].controllers[1].secret}), for errors. */
    public String key() {
        return key;
    }

    /** What checks the member's signatures. */
    public VerifyingKey verifying() {
        return verifying;
    }

    /** The member's signing key, when this node was given its secret. */
    public Optional<SigningKey> signing() {
        return Optional.ofNullable(signing);
    }

    /** Whether {@code token} is this member's secret, whichever form either was given in. */
    boolean sameSecretAs(Token token) {
        if (secret != null) {
            return secret.sameAs(token);
        }
        return token.clear().map(t -> SigningKey.fromSecret(t).verifying().equals(verifying)).orElse(false);
    }

    /** Whether a cluster's credential is this member's secret (or its verifying key is this member's). */
    boolean sameSecretAs(ClusterKey cluster) {
        return cluster.verifying().equals(verifying);
    }

    /** Never the secret: where it was given and the verifying key. */
    @Override
    public String toString() {
        return key + " (" + verifying + ")";
    }
}
