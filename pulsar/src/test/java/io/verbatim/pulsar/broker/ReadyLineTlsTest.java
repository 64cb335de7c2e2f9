package io.verbatim.pulsar.broker;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import org.junit.jupiter.api.Test;

/** The READY line of a broker with TLS ports: the two TLS URLs after the plain ones, each optional. */
class ReadyLineTlsTest {
    private static final String PLAIN = "VERBATIM-PULSAR-READY serviceUrl=pulsar://127.0.0.1:6650 webUrl=http://127.0.0.1:8080";

    @Test
    void theTlsUrlsFollowThePlainOnes() {
        assertThat(ReadyLine.parse(PLAIN + " serviceUrlTls=pulsar+ssl://127.0.0.1:6651 webUrlTls=https://127.0.0.1:8443"))
                .contains(new ReadyLine(URI.create("pulsar://127.0.0.1:6650"), URI.create("http://127.0.0.1:8080"),
                        URI.create("pulsar+ssl://127.0.0.1:6651"), URI.create("https://127.0.0.1:8443")));
        assertThat(ReadyLine.parse(PLAIN + " webUrlTls=https://127.0.0.1:8443"))
                .contains(new ReadyLine(URI.create("pulsar://127.0.0.1:6650"), URI.create("http://127.0.0.1:8080"),
                        null, URI.create("https://127.0.0.1:8443")));
        assertThat(ReadyLine.parse(PLAIN)).hasValueSatisfying(r -> assertThat(r.serviceUrlTls()).isNull());
    }

    @Test
    void anUnknownWordARepeatOrATlsUrlWithoutAPortIsNotReady() {
        assertThat(ReadyLine.parse(PLAIN + " other=1")).isEmpty();
        assertThat(ReadyLine.parse(PLAIN + " webUrlTls=https://h:1 webUrlTls=https://h:2")).isEmpty();
        assertThat(ReadyLine.parse(PLAIN + " serviceUrlTls=pulsar+ssl://127.0.0.1")).isEmpty();
    }
}
