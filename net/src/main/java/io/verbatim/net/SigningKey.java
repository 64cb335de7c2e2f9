package io.verbatim.net;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.MessageDigest;
import java.security.PrivateKey;
import java.security.SecureRandom;
import java.security.Signature;
import java.security.spec.NamedParameterSpec;

/**
 * An Ed25519 private key derived from a secret (a cluster's token, a metadata-log member's secret): what a
 * party signs with, so that it proves who it is without showing the secret. The same secret always gives
 * the same key, so a configuration names a party by its secret where the party runs and by its
 * {@link VerifyingKey} ({@code ed25519:<base64>}) everywhere else: a node that holds only the verifying key
 * can check the party's signatures and cannot make one.
 *
 * <p>The seed is SHA-256 of a fixed label and the secret: one key per secret, never the secret itself. A
 * secret that can be guessed gives a key that can be found from its verifying key by trying guesses, as a
 * digest of it could: secrets should be long and random.
 */
public final class SigningKey {
    private static final byte[] LABEL = "verbatim/ed25519/v1\0".getBytes(StandardCharsets.UTF_8);

    private final PrivateKey key;
    private final VerifyingKey verifying;

    private SigningKey(KeyPair pair) {
        this.key = pair.getPrivate();
        this.verifying = VerifyingKey.of(pair.getPublic());
    }

    /** The key {@code secret} gives (the same for the same secret, on every node). */
    public static SigningKey fromSecret(String secret) {
        if (secret == null || secret.isEmpty()) {
            throw new IllegalArgumentException("a secret must not be empty");
        }
        byte[] seed = seed(secret);
        try {
            KeyPairGenerator generator = KeyPairGenerator.getInstance("Ed25519");
            // The JDK's Ed25519 generator takes the private key's 32 bytes from the random source and computes the
            // public key from them: a source that answers with the seed derives the pair (checked by a test).
            generator.initialize(NamedParameterSpec.ED25519, new SeedSource(seed));
            return new SigningKey(generator.generateKeyPair());
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("every JDK 15+ has Ed25519", e);
        }
    }

    /** The key that checks this one's signatures: what other nodes are given. */
    public VerifyingKey verifying() {
        return verifying;
    }

    /** The Ed25519 signature of {@code message} (64 bytes). */
    public byte[] sign(byte[] message) {
        try {
            Signature s = Signature.getInstance("Ed25519");
            s.initSign(key);
            s.update(message);
            return s.sign();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("Ed25519 cannot sign: " + e.getMessage(), e);
        }
    }

    private static byte[] seed(String secret) {
        try {
            MessageDigest sha = MessageDigest.getInstance("SHA-256");
            sha.update(LABEL);
            return sha.digest(secret.getBytes(StandardCharsets.UTF_8));
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("every JDK has SHA-256", e);
        }
    }

    /** Never the key: its verifying key's form. */
    @Override
    public String toString() {
        return "signing key of " + verifying;
    }

    /** A random source that hands out one seed, for the key generator's one draw. */
    private static final class SeedSource extends SecureRandom {
        private static final long serialVersionUID = 1L;
        private final transient byte[] seed;

        SeedSource(byte[] seed) {
            this.seed = seed.clone();
        }

        @Override
        public void nextBytes(byte[] bytes) {
            if (bytes.length != seed.length) {
                throw new IllegalStateException("the Ed25519 generator asked for " + bytes.length + " bytes, not "
                        + seed.length + ": it no longer derives keys from a seed");
            }
            System.arraycopy(seed, 0, bytes, 0, bytes.length);
        }
    }
}
