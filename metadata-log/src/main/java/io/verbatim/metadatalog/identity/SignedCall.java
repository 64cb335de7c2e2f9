package io.verbatim.metadatalog.identity;

import io.verbatim.net.LogText;
import io.verbatim.net.SigningKey;
import io.verbatim.net.VerifyingKey;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.Base64;
import java.util.HexFormat;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * A member's HTTP call to another member of its metadata log (the brokers' report to the controller leader),
 * signed with the caller's own key. The signature covers the group, the caller, the member called, the
 * method, the path, the time, a random nonce and the body's SHA-256: it proves who calls without showing a
 * secret, and is good for that request, at that member, within {@link #WINDOW} of its time, once.
 *
 * <pre>
 * Authorization: VerbatimMember from=brokers,to=c1,time=1767225600000,nonce=&lt;base64url&gt;,signature=&lt;base64url&gt;
 * </pre>
 *
 * <p>A redirect to another member needs a new signature (it names the member called): the caller signs
 * again for the member the redirect names, and only for a member of its own group.
 */
public final class SignedCall {
    /** The scheme of the {@code Authorization} header. */
    public static final String SCHEME = "VerbatimMember";
    /** How far a call's time may be from the receiver's clock, either way. */
    public static final Duration WINDOW = Duration.ofSeconds(30);
    private static final String LABEL = "verbatim-member-call/v1";
    private static final int NONCE_BYTES = 16;
    private static final SecureRandom RANDOM = new SecureRandom();
    private static final Base64.Encoder B64 = Base64.getUrlEncoder().withoutPadding();

    private SignedCall() {
    }

    /**
     * The {@code Authorization} value of {@code method path} with {@code body}, from {@code keys.self()} to
     * member {@code to} of {@code group}, at {@code nowMillis}.
     */
    public static String authorization(String group, MemberKeys keys, String to, String method, String path,
            byte[] body, long nowMillis) {
        byte[] nonce = new byte[NONCE_BYTES];
        RANDOM.nextBytes(nonce);
        Claim c = new Claim(keys.self(), to, nowMillis, B64.encodeToString(nonce), "");
        byte[] signature = keys.own().sign(c.signed(group, method, path, body));
        return SCHEME + " from=" + c.from() + ",to=" + c.to() + ",time=" + c.time() + ",nonce=" + c.nonce()
                + ",signature=" + B64.encodeToString(signature);
    }

    /** What the receiver decided. */
    public sealed interface Result {
        /** A call of {@code member}, checked. */
        record Accepted(String member) implements Result {
        }

        /** Refused: {@code status} 401 (no usable credential), 403 (not this caller, here, now) or 429. */
        record Refused(int status, String why) implements Result {
        }
    }

    /** What a header claims, before the signature is checked. */
    private record Claim(String from, String to, long time, String nonce, String signature) {
        byte[] signed(String group, String method, String path, byte[] body) {
            return String.join("\n", LABEL, group, from, to, method, path, Long.toString(time), nonce,
                    HexFormat.of().formatHex(sha256(body))).getBytes(StandardCharsets.UTF_8);
        }

        static @Nullable Claim parse(String header) {
            if (!header.startsWith(SCHEME + " ")) {
                return null;
            }
            Map<String, String> fields = new LinkedHashMap<>();
            for (String part : header.substring(SCHEME.length() + 1).split(",", -1)) {
                int eq = part.indexOf('=');
                if (eq <= 0 || fields.put(part.substring(0, eq).trim(), part.substring(eq + 1).trim()) != null) {
                    return null;
                }
            }
            if (!fields.keySet().equals(Set.of("from", "to", "time", "nonce", "signature"))) {
                return null;
            }
            try {
                return new Claim(field(fields, "from"), field(fields, "to"), Long.parseLong(field(fields, "time")),
                        field(fields, "nonce"), field(fields, "signature"));
            } catch (NumberFormatException e) {
                return null;
            }
        }

        private static String field(Map<String, String> fields, String name) {
            return Objects.requireNonNull(fields.get(name), name);
        }
    }

    /**
     * The receiving member's side: calls to {@code self} of {@code group} from the members {@code callers}
     * names, each call at most once (a replay within the window is refused; beyond it, its time is). It
     * remembers at most {@code maxRemembered} calls of the window; more are refused (429) until some expire.
     * Thread-safe.
     */
    public static final class Verifier {
        private static Supplier<Map<String, VerifyingKey>> constant(Map<String, VerifyingKey> callers) {
            Map<String, VerifyingKey> copy = Map.copyOf(callers);
            return () -> copy;
        }

        private final String group;
        private final String self;
        private final Supplier<Map<String, VerifyingKey>> callers;
        private final long windowMillis;
        private final int maxRemembered;
        /** The signatures seen, with the time after which their calls are refused by time anyway. */
        private final LinkedHashMap<String, Long> seen = new LinkedHashMap<>();

        public Verifier(String group, String self, Map<String, VerifyingKey> callers, Duration window,
                int maxRemembered) {
            this(group, self, constant(callers), window, maxRemembered);
        }

        /**
         * As {@link #Verifier(String, String, Map, Duration, int)}, the callers read at each call: members added at
         * run time (the admin registered their keys) may call from then on, members removed no longer.
         */
        public Verifier(String group, String self, Supplier<Map<String, VerifyingKey>> callers, Duration window,
                int maxRemembered) {
            if (window.isNegative() || window.isZero() || maxRemembered < 1) {
                throw new IllegalArgumentException("window is " + window + " and maxRemembered " + maxRemembered
                        + ": both must be positive");
            }
            this.group = group;
            this.self = self;
            this.callers = Objects.requireNonNull(callers, "callers");
            this.windowMillis = window.toMillis();
            this.maxRemembered = maxRemembered;
        }

        /**
         * What can be told from the header alone (its form, the caller, the member called, the time), so a
         * call can be refused before its body is read; {@code null} if it may go on to {@link #check}.
         */
        public Result.@Nullable Refused precheck(@Nullable String authorization, long nowMillis) {
            if (authorization == null || authorization.isBlank()) {
                return new Result.Refused(401, "no credential (expected Authorization: " + SCHEME + " from=..., "
                        + "signed with the calling member's own key)");
            }
            Claim c = Claim.parse(authorization);
            if (c == null) {
                return new Result.Refused(401, "the credential is not " + SCHEME
                        + " from=<member>,to=<member>,time=<ms>,nonce=<base64>,signature=<base64>");
            }
            Map<String, VerifyingKey> known = callers.get();
            if (!known.containsKey(c.from())) {
                return new Result.Refused(403, "member '" + LogText.escape(c.from()) + "' may not make this call here "
                        + "(expected one of " + new TreeSet<>(known.keySet()) + ")");
            }
            if (!c.to().equals(self)) {
                return new Result.Refused(403, "the call is signed for member '" + LogText.escape(c.to()) + "', not "
                        + self);
            }
            if (Math.abs(nowMillis - c.time()) > windowMillis) {
                return new Result.Refused(403, "the call is signed at " + c.time() + ", " + Math.abs(nowMillis - c.time())
                        + " ms " + (nowMillis >= c.time() ? "before" : "after") + " this member's clock (at most "
                        + windowMillis + " ms either way)");
            }
            return null;
        }

        /** Whether {@code method path} with {@code body}, authorized so, is a call of one of the callers, now. */
        public Result check(@Nullable String authorization, String method, String path, byte[] body, long nowMillis) {
            Result.Refused early = precheck(authorization, nowMillis);
            if (early != null) {
                return early;
            }
            Claim c = Objects.requireNonNull(Claim.parse(Objects.requireNonNull(authorization)));
            byte[] signature;
            try {
                signature = Base64.getUrlDecoder().decode(c.signature());
            } catch (IllegalArgumentException e) {
                return new Result.Refused(401, "the signature is not base64");
            }
            VerifyingKey key = callers.get().get(c.from());
            if (key == null) { // removed between the precheck and now
                return new Result.Refused(403, "member '" + LogText.escape(c.from()) + "' may no longer make this call "
                        + "here");
            }
            if (!key.verifies(c.signed(group, method, path, body), signature)) {
                return new Result.Refused(403, "the signature is not member " + c.from() + "'s over this request");
            }
            synchronized (seen) {
                expire(nowMillis);
                if (seen.containsKey(c.signature())) {
                    return new Result.Refused(403, "the call was made before (a replay)");
                }
                if (seen.size() >= maxRemembered) {
                    return new Result.Refused(429, "more than " + maxRemembered + " calls within " + windowMillis
                            + " ms; try again");
                }
                seen.put(c.signature(), Math.max(nowMillis, c.time()) + windowMillis);
            }
            return new Result.Accepted(c.from());
        }

        private void expire(long nowMillis) {
            for (Iterator<Long> it = seen.values().iterator(); it.hasNext(); ) {
                if (it.next() >= nowMillis) {
                    return; // entries are in the order they came, their expiries nearly so
                }
                it.remove();
            }
        }
    }

    private static byte[] sha256(byte[] body) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(body);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("every JDK has SHA-256", e);
        }
    }
}
