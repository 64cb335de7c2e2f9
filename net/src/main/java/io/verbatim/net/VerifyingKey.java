package io.verbatim.net;

import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.PublicKey;
import java.security.Signature;
import java.security.spec.X509EncodedKeySpec;
import java.util.Arrays;
import java.util.Base64;
import java.util.HexFormat;

/**
 * An Ed25519 public key: checks the signatures of one {@link SigningKey}. Written
 * {@code ed25519:<base64 of its 32 bytes>} in a configuration, where a node needs to check a party it must
 * not be able to speak for.
 */
public final class VerifyingKey {
    /** How the form starts. */
    public static final String PREFIX = "ed25519:";
    /** X.509's header of an Ed25519 key, before the key's 32 bytes. */
    private static final byte[] X509_HEADER = HexFormat.of().parseHex("302a300506032b6570032100");
    private static final int KEY_BYTES = 32;

    private final PublicKey key;
    private final byte[] raw;

    private VerifyingKey(PublicKey key, byte[] raw) {
        this.key = key;
        this.raw = raw;
    }

    static VerifyingKey of(PublicKey key) {
        byte[] encoded = key.getEncoded();
        return new VerifyingKey(key, Arrays.copyOfRange(encoded, encoded.length - KEY_BYTES, encoded.length));
    }

    /** Parses {@code ed25519:<base64>} (standard or URL-safe base64, padded or not). */
    public static VerifyingKey parse(String form) {
        if (form == null || !form.startsWith(PREFIX)) {
            throw new IllegalArgumentException("'" + form + "' is not a verifying key (expected " + PREFIX
                    + "<base64 of 32 bytes>)");
        }
        String text = form.substring(PREFIX.length()).replace('-', '+').replace('_', '/');
        byte[] raw;
        try {
            raw = Base64.getDecoder().decode(text);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("'" + form + "' is not a verifying key: its key is not base64", e);
        }
        if (raw.length != KEY_BYTES) {
            throw new IllegalArgumentException("'" + form + "' is not a verifying key: it has " + raw.length
                    + " bytes, not " + KEY_BYTES);
        }
        byte[] encoded = Arrays.copyOf(X509_HEADER, X509_HEADER.length + KEY_BYTES);
        System.arraycopy(raw, 0, encoded, X509_HEADER.length, KEY_BYTES);
        try {
            return new VerifyingKey(KeyFactory.getInstance("Ed25519").generatePublic(new X509EncodedKeySpec(encoded)),
                    raw);
        } catch (GeneralSecurityException e) {
            throw new IllegalArgumentException("'" + form + "' is not an Ed25519 key: " + e.getMessage(), e);
        }
    }

    /** Whether {@code signature} is this key's signature of {@code message}; a malformed signature is not. */
    public boolean verifies(byte[] message, byte[] signature) {
        try {
            Signature s = Signature.getInstance("Ed25519");
            s.initVerify(key);
            s.update(message);
            return s.verify(signature);
        } catch (GeneralSecurityException | IllegalArgumentException e) {
            return false;
        }
    }

    /** {@code ed25519:<base64>}: what a configuration holds. */
    public String form() {
        return PREFIX + Base64.getEncoder().encodeToString(raw);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof VerifyingKey v && Arrays.equals(raw, v.raw);
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(raw);
    }

    @Override
    public String toString() {
        return form();
    }
}
