package io.verbatim.net;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * A bearer token as a node holds it (the admin's; the metadata log's secrets): always its SHA-256 digest
 * (what a presented token is compared with, exactly and in constant time), and the token itself only where
 * the node presents it. A node that only verifies a token may be given {@code sha256:<64 hex>} instead.
 * A cluster's credential is a {@link ClusterKey}: clusters sign their calls rather than present a token.
 */
public final class Token {
    private static final String DIGEST_PREFIX = "sha256:";
    private final byte[] digest;
    private final @Nullable String clear;

    private Token(byte[] digest, @Nullable String clear) {
        this.digest = digest;
        this.clear = clear;
    }

    /** A token given in clear: it can be presented and verified. */
    public static Token clear(String token) {
        if (token == null || token.isBlank()) {
            throw new IllegalArgumentException("a token must not be empty");
        }
        return new Token(sha256(token), token);
    }

    /**
     * A token as written in a configuration: {@code sha256:<64 hex>} is a digest (verified only), anything
     * else the token itself.
     */
    public static Token parse(String value) {
        if (value != null && value.startsWith(DIGEST_PREFIX)) {
            String hex = value.substring(DIGEST_PREFIX.length());
            if (!hex.matches("[0-9a-fA-F]{64}")) {
                throw new IllegalArgumentException("'" + DIGEST_PREFIX + hex + "' is not a SHA-256 digest (expected "
                        + DIGEST_PREFIX + " and 64 hex digits)");
            }
            return new Token(HexFormat.of().parseHex(hex), null);
        }
        return clear(value);
    }

    /** The token itself, when this node was given it (a digest-only token has none). */
    public Optional<String> clear() {
        return Optional.ofNullable(clear);
    }

    /** {@code sha256:<hex>}: what a node that only verifies this token may be given. */
    public String digestForm() {
        return DIGEST_PREFIX + HexFormat.of().formatHex(digest);
    }

    /** Whether {@code presented} is this token: digests compared in constant time. */
    public boolean matches(String presented) {
        return presented != null && MessageDigest.isEqual(digest, sha256(presented));
    }

    /** Whether both are the same token, whichever form each was given in. */
    public boolean sameAs(Token other) {
        return MessageDigest.isEqual(digest, other.digest);
    }

    byte[] digest() {
        return digest.clone();
    }

    static byte[] sha256(String token) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(token.getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JDK has SHA-256", e);
        }
    }

    /** Never the secret: the digest form. */
    @Override
    public String toString() {
        return digestForm();
    }
}
