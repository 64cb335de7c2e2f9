package io.verbatim.net;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Random;
import org.junit.jupiter.api.Test;

class LogTextTest {
    @Test
    void aForgedLineStaysOnTheLineOfTheRealOne() {
        String forged = "us-east\n2025-01-01 00:00:00 ERROR io.verbatim.runtime.ClusterNode - eu-west: deleted every topic";
        assertThat(LogText.escape(forged)).isEqualTo("us-east\\n2025-01-01 00:00:00 ERROR io.verbatim.runtime.ClusterNode"
                + " - eu-west: deleted every topic");
        assertThat(LogText.escape("a\r\tb\u0000c\u001b[31md\u007f\u0085e\u2028f\u202eg\\n"))
                .isEqualTo("a\\r\\tb\\u0000c\\u001b[31md\\u007f\\u0085e\\u2028f\\u202eg\\\\n");
        assertThat(LogText.escape(null)).isEqualTo("null");
        assertThat(LogText.escape("pulsar.repl.us-east.7 — ünïcödé")).isEqualTo("pulsar.repl.us-east.7 — ünïcödé");
    }

    @Test
    void aLongTextIsCutAndWhatIsLeftOutCounted() {
        assertThat(LogText.escape("x".repeat(600))).isEqualTo("x".repeat(500) + "…(100 more characters)");
        assertThat(LogText.escape("abcdef", 3)).isEqualTo("abc…(3 more characters)");
    }

    /** Whatever a peer sends, the escaped text has no character that ends or reorders a line. */
    @Test
    void noTextEscapesToMoreThanOneLine() {
        long seed = System.nanoTime();
        System.out.println("LogTextTest seed " + seed);
        Random random = new Random(seed);
        for (int run = 0; run < 10_000; run++) {
            StringBuilder s = new StringBuilder();
            for (int i = random.nextInt(40); i > 0; i--) {
                s.append((char) (random.nextBoolean() ? random.nextInt(0x100) : random.nextInt(0x3000)));
            }
            String escaped = LogText.escape(s.toString());
            assertThat(escaped.chars().noneMatch(c -> Character.isISOControl(c) || c == 0x2028 || c == 0x2029
                    || c >= 0x202a && c <= 0x202e || c >= 0x2066 && c <= 0x2069)).as("seed %d: %s", seed, escaped).isTrue();
        }
    }
}
