package io.verbatim.net;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The signed claims: every set of claims has one encoding, read back whole ({@code -Dverbatim.seed=N} replays
 * a failing seed), and what the parser takes is exactly what the encoder writes.
 */
class CallClaimsTest {
    private static final String NONCE = "00112233445566778899aabbccddeeff";

    @Test
    void claimsSurviveTheirEncodingAndTheEncodingIsCanonical() {
        long seed = Long.getLong("verbatim.seed", System.nanoTime());
        Random random = new Random(seed);
        SigningKey key = SigningKey.fromSecret("k");
        try {
            for (int i = 0; i < 1_000; i++) {
                CallClaims c = new CallClaims(name(random), name(random), random.nextLong() & Long.MAX_VALUE >>> random.nextInt(63),
                        nonce(random), random.nextBoolean() ? "GET" : "POST", target(random));
                byte[] bytes = c.encode();
                CallClaims back = CallClaims.parse(bytes);
                assertThat(back).isEqualTo(c);
                assertThat(back.encode()).isEqualTo(bytes);
                SignedCall signed = SignedCall.parse(SignedCall.authorization(c, key));
                assertThat(signed.claims()).isEqualTo(c);
                assertThat(signed.signed()).isEqualTo(bytes);
                if (i % 100 == 0) { // a signature costs about a millisecond here
                    assertThat(signed.verifiedBy(key.verifying())).isTrue();
                }
            }
        } catch (AssertionError | RuntimeException e) {
            throw new AssertionError("seed " + seed + " (-Dverbatim.seed=" + seed + " replays it): " + e.getMessage(), e);
        }
    }

    @Test
    void theParserTakesOnlyTheEncodersForm() {
        String good = String.join("\n", CallClaims.VERSION, "us-east", "eu-west", "1700000000000", NONCE, "POST", "/x?a=1");
        assertThat(CallClaims.parse(bytes(good)).target()).isEqualTo("/x?a=1");
        assertThatThrownBy(() -> CallClaims.parse(bytes(good + "\n"))).hasMessage("the claims have 8 lines, not 7");
        assertThatThrownBy(() -> CallClaims.parse(bytes(good.replace(CallClaims.VERSION, "verbatim-call/2"))))
                .hasMessage("the claims are of version 'verbatim-call/2', not verbatim-call/1");
        assertThatThrownBy(() -> CallClaims.parse(bytes(good.replace("1700000000000", "01700000000000"))))
                .as("a leading zero would give one time two encodings").hasMessageContaining("is not a number of ms");
        assertThatThrownBy(() -> CallClaims.parse(bytes(good.replace("1700000000000", "99999999999999999999"))))
                .hasMessageContaining("is not a number of ms");
        assertThatThrownBy(() -> CallClaims.parse(bytes(good.replace(NONCE, NONCE.toUpperCase()))))
                .hasMessageContaining("is not 32 lowercase hex digits");
        assertThatThrownBy(() -> CallClaims.parse(bytes(good.replace("/x?a=1", "@evil/x"))))
                .hasMessageContaining("is not a request target in origin form");
        assertThatThrownBy(() -> CallClaims.parse(bytes(good.replace("us-east", "us-east\r"))))
                .hasMessageContaining("is not a cluster name");
        assertThatThrownBy(() -> CallClaims.parse(new byte[] {(byte) 0xff})).hasMessage("the claims are not UTF-8");
        assertThatThrownBy(() -> CallClaims.parse(new byte[CallClaims.MAX_BYTES + 1])).hasMessageContaining("more than 8192");
    }

    @Test
    void claimsThatCannotBeSignedAreRefusedNamingTheClaim() {
        assertThatThrownBy(() -> new CallClaims("a\nb", "c", 0, NONCE, "GET", "/")).hasMessageContaining("caller");
        assertThatThrownBy(() -> new CallClaims("a", "c", -1, NONCE, "GET", "/")).hasMessageContaining("issuedMs is -1");
        assertThatThrownBy(() -> new CallClaims("a", "c", 0, NONCE, "get", "/")).hasMessageContaining("method 'get'");
        assertThatThrownBy(() -> new CallClaims("a", "c", 0, NONCE, "GET", "//evil/x")).hasMessageContaining("target");
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static String name(Random r) {
        String alphabet = "abcdefghijklmnopqrstuvwxyz0123456789-_.é";
        StringBuilder b = new StringBuilder();
        for (int i = 1 + r.nextInt(30); i > 0; i--) {
            b.append(alphabet.charAt(r.nextInt(alphabet.length())));
        }
        return b.toString();
    }

    private static String nonce(Random r) {
        byte[] n = new byte[16];
        r.nextBytes(n);
        return HexFormat.of().formatHex(n);
    }

    private static String target(Random r) {
        String alphabet = "abcXYZ019-._~%!$&'()*+,;=:@/?";
        StringBuilder b = new StringBuilder("/");
        for (int i = r.nextInt(200); i > 0; i--) {
            b.append(alphabet.charAt(r.nextInt(alphabet.length())));
        }
        return b.toString().replaceFirst("^//+", "/");
    }
}
