package io.verbatim.net;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class RefusalLogTest {
    private static final long MINUTE = 60_000_000_000L;

    @Test
    void atMostOneLinePerKindAndIntervalAndTheNextCarriesTheCount() {
        RefusalLog log = new RefusalLog(MINUTE);
        assertThat(log.note(Refusal.ADDRESS_FULL, 0)).as("the first is told at once").isEqualTo(1);
        for (int i = 1; i <= 500; i++) {
            assertThat(log.note(Refusal.ADDRESS_FULL, i * 1_000_000L)).isZero();
        }
        assertThat(log.note(Refusal.EVICTED, 10)).as("another kind has its own line").isEqualTo(1);
        assertThat(log.note(Refusal.ADDRESS_FULL, MINUTE - 1)).isZero();
        assertThat(log.note(Refusal.ADDRESS_FULL, MINUTE)).as("this one and the 501 counted silently").isEqualTo(502);
        assertThat(log.note(Refusal.ADDRESS_FULL, MINUTE + 1)).isZero();
    }

    @Test
    void aLineNamesThePortTheLimitAndTheMetric() {
        String line = RefusalLog.line("ingest-0", Refusal.FIRST_REQUEST_TIMEOUT, 12, "10.0.0.5", NetworkLimits.defaults(), 60);
        assertThat(line).isEqualTo("ingest-0: 12 connections since the last such line (the last from 10.0.0.5) closed, not yet "
                + "authenticated, without a whole request within network.firstRequestTimeout (5s); at most one such line "
                + "every 60 s (verbatim.net.connections.refused{reason=first_request_timeout} counts them all)");
    }
}
