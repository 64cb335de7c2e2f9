package io.verbatim.net;

import org.jspecify.annotations.Nullable;

/**
 * Text a peer chose (a {@code replicated_from}, a producer name, a topic, the detail of a refusal, the body of
 * an answer), made safe to put in a log line: one line whatever it holds, so that a peer cannot forge lines
 * of its own. A backslash, a line break, a tab, any other control character and the Unicode characters that
 * break or reorder a line (line and paragraph separators, bidirectional overrides) are written as escapes
 * (a backslash as two, {@code \n}, {@code \r}, {@code \t}, and the others as a backslash, {@code u} and four hex
 * digits); past a length the rest is counted, not shown.
 */
public final class LogText {
    /** What {@link #escape(String)} keeps of a longer text. */
    public static final int MAX_CHARS = 500;

    private LogText() {
    }

    /** {@code text} on one line, at most {@value #MAX_CHARS} characters of it; {@code "null"} for null. */
    public static String escape(@Nullable String text) {
        return escape(text, MAX_CHARS);
    }

    /** {@code text} on one line, at most {@code maxChars} characters of it; {@code "null"} for null. */
    public static String escape(@Nullable String text, int maxChars) {
        if (text == null) {
            return "null";
        }
        int shown = Math.min(text.length(), maxChars);
        StringBuilder b = new StringBuilder(shown + 16);
        for (int i = 0; i < shown; i++) {
            char c = text.charAt(i);
            switch (c) {
                case '\\' -> b.append("\\\\");
                case '\n' -> b.append("\\n");
                case '\r' -> b.append("\\r");
                case '\t' -> b.append("\\t");
                default -> {
                    if (breaksALine(c)) {
                        b.append(String.format("\\u%04x", (int) c));
                    } else {
                        b.append(c);
                    }
                }
            }
        }
        if (text.length() > shown) {
            b.append("…(").append(text.length() - shown).append(" more characters)");
        }
        return b.toString();
    }

    /** Control characters (C0, DEL, C1), line and paragraph separators, and bidirectional controls. */
    private static boolean breaksALine(char c) {
        return Character.isISOControl(c) || c == '\u2028' || c == '\u2029' || (c >= '\u202a' && c <= '\u202e')
                || (c >= '\u2066' && c <= '\u2069') || c == '\u061c' || c == '\u200e' || c == '\u200f';
    }
}
