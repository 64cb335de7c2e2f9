package io.verbatim.net;

import java.util.Base64;

/**
 * A cluster's credential on one request: {@code Authorization: Verbatim <claims>.<signature>}, each part
 * base64url without padding, the signature Ed25519's over the claims' bytes ({@link CallClaims#encode}).
 *
 * @param claims what was signed, parsed
 * @param signed the claims' bytes as received (what the signature is checked against)
 * @param signature the signature's bytes
 */
public record SignedCall(CallClaims claims, byte[] signed, byte[] signature) {
    /** The {@code Authorization} scheme, followed by one space. */
    public static final String SCHEME = "Verbatim";
    private static final Base64.Encoder ENCODER = Base64.getUrlEncoder().withoutPadding();

    /** The {@code Authorization} header's value that carries {@code claims} signed with {@code key}. */
    public static String authorization(CallClaims claims, SigningKey key) {
        byte[] bytes = claims.encode();
        return SCHEME + " " + ENCODER.encodeToString(bytes) + "." + ENCODER.encodeToString(key.sign(bytes));
    }

    /** Whether an {@code Authorization} header's value is of this scheme (case-insensitive, as HTTP has it). */
    public static boolean isOfScheme(String authorization) {
        return authorization.regionMatches(true, 0, SCHEME + " ", 0, SCHEME.length() + 1);
    }

    /**
     * The credential of an {@code Authorization} header's value of this scheme.
     *
     * @throws IllegalArgumentException naming what is garbled
     */
    public static SignedCall parse(String authorization) {
        if (!isOfScheme(authorization)) {
            throw new IllegalArgumentException("not of the " + SCHEME + " scheme");
        }
        String credential = authorization.substring(SCHEME.length() + 1);
        int dot = credential.indexOf('.');
        if (dot < 0 || credential.indexOf('.', dot + 1) >= 0) {
            throw new IllegalArgumentException("expected <claims>.<signature>, each base64url");
        }
        byte[] signed = decode(credential.substring(0, dot), "the claims are");
        byte[] signature = decode(credential.substring(dot + 1), "the signature is");
        if (signature.length != 64) {
            throw new IllegalArgumentException("the signature has " + signature.length + " bytes, not 64");
        }
        return new SignedCall(CallClaims.parse(signed), signed, signature);
    }

    private static byte[] decode(String part, String what) {
        if (part.isEmpty() || part.length() > 4 * CallClaims.MAX_BYTES / 3 + 4 || !part.matches("[A-Za-z0-9_-]+")) {
            throw new IllegalArgumentException(what + " not base64url");
        }
        try {
            return Base64.getUrlDecoder().decode(part);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(what + " not base64url: " + e.getMessage(), e);
        }
    }

    /** Whether the signature is {@code key}'s over the claims' bytes. */
    public boolean verifiedBy(VerifyingKey key) {
        return key.verifies(signed, signature);
    }
}
