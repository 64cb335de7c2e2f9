package io.verbatim.net;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.regex.Pattern;

/**
 * What a cluster signs for one HTTP request to a peer: who calls, whom it calls, when (the caller's clock,
 * ms), a random nonce, and the request itself (method and target as sent). The signature is useless at any
 * other cluster, for any other request, outside the time window, and a second time at the same cluster.
 *
 * <p>The signed bytes are a canonical text: seven lines joined by {@code \n}, no trailing newline —
 * {@value #VERSION}, caller, callee, issued ms (decimal, no leading zeros), nonce (32 lowercase hex digits),
 * method, target. {@link #parse} accepts exactly what {@link #encode} writes, so one set of claims has one
 * encoding.
 *
 * @param caller the calling cluster
 * @param callee the called cluster
 * @param issuedMs the caller's clock when it signed, in ms since the epoch
 * @param nonce 128 random bits, as 32 lowercase hex digits
 * @param method the HTTP method ({@code GET}, {@code POST})
 * @param target the request target as sent: path and query ({@code /ingest/v1/session?topic=t&segment=1})
 */
public record CallClaims(String caller, String callee, long issuedMs, String nonce, String method, String target) {
    /** The first line: what the rest means. */
    public static final String VERSION = "verbatim-call/1";
    /** The longest encoding taken: a request target fits a request line, which a port caps lower. */
    public static final int MAX_BYTES = 8192;
    private static final Pattern NONCE = Pattern.compile("[0-9a-f]{32}");
    private static final Pattern METHOD = Pattern.compile("[A-Z]{1,16}");
    private static final Pattern MILLIS = Pattern.compile("0|[1-9][0-9]{0,18}");

    /** @throws IllegalArgumentException naming the claim that cannot be signed */
    public CallClaims {
        name("caller", caller);
        name("callee", callee);
        if (issuedMs < 0) {
            throw new IllegalArgumentException("issuedMs is " + issuedMs + ": must be at least 0");
        }
        if (nonce == null || !NONCE.matcher(nonce).matches()) {
            throw new IllegalArgumentException("nonce '" + nonce + "' is not 32 lowercase hex digits");
        }
        if (method == null || !METHOD.matcher(method).matches()) {
            throw new IllegalArgumentException("method '" + method + "' is not an HTTP method");
        }
        if (target == null || !target.startsWith("/") || target.startsWith("//") || !printable(target)
                || target.indexOf(' ') >= 0) {
            throw new IllegalArgumentException("target '" + target + "' is not a request target in origin form "
                    + "(a path from '/', then the query)");
        }
    }

    /** The signed bytes. */
    public byte[] encode() {
        return String.join("\n", VERSION, caller, callee, Long.toString(issuedMs), nonce, method, target)
                .getBytes(StandardCharsets.UTF_8);
    }

    /**
     * The claims {@code bytes} encode.
     *
     * @throws IllegalArgumentException naming what is wrong: not {@link #encode}'s form
     */
    public static CallClaims parse(byte[] bytes) {
        if (bytes.length > MAX_BYTES) {
            throw new IllegalArgumentException("the claims are " + bytes.length + " bytes, more than " + MAX_BYTES);
        }
        String text = new String(bytes, StandardCharsets.UTF_8);
        if (!Arrays.equals(text.getBytes(StandardCharsets.UTF_8), bytes)) {
            throw new IllegalArgumentException("the claims are not UTF-8");
        }
        String[] lines = text.split("\n", -1);
        if (lines.length != 7) {
            throw new IllegalArgumentException("the claims have " + lines.length + " lines, not 7");
        }
        if (!lines[0].equals(VERSION)) {
            throw new IllegalArgumentException("the claims are of version '" + shown(lines[0]) + "', not " + VERSION);
        }
        if (!MILLIS.matcher(lines[3]).matches()) {
            throw new IllegalArgumentException("the time of issue '" + shown(lines[3]) + "' is not a number of ms");
        }
        long issued;
        try {
            issued = Long.parseLong(lines[3]);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("the time of issue '" + shown(lines[3]) + "' is out of range", e);
        }
        return new CallClaims(lines[1], lines[2], issued, lines[4], lines[5], lines[6]);
    }

    private static void name(String what, String value) {
        if (value == null || value.isEmpty() || value.length() > 255 || !printable(value) || value.indexOf(' ') >= 0) {
            throw new IllegalArgumentException(what + " '" + (value == null ? null : shown(value))
                    + "' is not a cluster name (1 to 255 printable characters, no space)");
        }
    }

    /** No control characters: a line break above all would make two sets of claims encode alike. */
    private static boolean printable(String s) {
        return s.chars().noneMatch(c -> c < 0x20 || c == 0x7f);
    }

    private static String shown(String s) {
        String t = s.length() > 64 ? s.substring(0, 64) + "…" : s;
        return t.replaceAll("[^\\x20-\\x7e]", "?");
    }
}
