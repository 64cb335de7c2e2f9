package io.verbatim.metadatalog.transport;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.OptionalLong;
import org.junit.jupiter.api.Test;

/** At most one refusal line per source per interval, the next one counting what was not logged. */
class RefusalLogTest {
    private static final long SECOND = 1_000_000_000L;

    @Test
    void oneLinePerSourcePerIntervalCountingTheRest() {
        RefusalLog log = new RefusalLog(10 * SECOND, 8);
        assertThat(log.admit("10.0.0.1", 0)).isEqualTo(OptionalLong.of(0));
        for (int i = 1; i < 500; i++) {
            assertThat(log.admit("10.0.0.1", i * 1_000_000L)).isEmpty();
        }
        assertThat(log.admit("10.0.0.2", SECOND)).as("another source has its own").isEqualTo(OptionalLong.of(0));
        assertThat(log.admit("10.0.0.1", 10 * SECOND)).isEqualTo(OptionalLong.of(499));
        assertThat(log.admit("10.0.0.1", 11 * SECOND)).isEmpty();
        assertThat(log.lines()).isEqualTo(3);
    }

    @Test
    void sourcesBeyondTheBoundShareOneAllowance() {
        RefusalLog log = new RefusalLog(10 * SECOND, 2);
        assertThat(log.admit("a", 0)).isPresent();
        assertThat(log.admit("b", 0)).isPresent();
        assertThat(log.admit("c", 0)).as("the others' first").isPresent();
        assertThat(log.admit("d", 0)).isEmpty();
        assertThat(log.admit("e", 0)).isEmpty();
        // quiet sources make room again once their interval is over
        assertThat(log.admit("f", 10 * SECOND)).isEqualTo(OptionalLong.of(0));
    }
}
