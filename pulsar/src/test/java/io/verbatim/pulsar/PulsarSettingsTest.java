package io.verbatim.pulsar;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.verbatim.model.Layout;
import io.verbatim.model.Segment;
import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** Bad settings and bad names are refused with an error that names what is wrong; no broker needed. */
class PulsarSettingsTest {
    private static final Segment SEGMENT = Layout.initial(1, 1, 0).segments().values().iterator().next();

    @Test
    void badSettingsNameTheField() {
        assertRefused("localhost:6650", "http://h:8080", "public/east", 100, Duration.ofSeconds(30), "serviceUrl");
        assertRefused("pulsar://h:6650", "h:8080", "public/east", 100, Duration.ofSeconds(30), "adminUrl");
        assertRefused("pulsar://h:6650", "http://h:8080", "public", 100, Duration.ofSeconds(30), "namespace");
        assertRefused("pulsar://h:6650", "http://h:8080", "a/b/c", 100, Duration.ofSeconds(30), "namespace");
        assertRefused("pulsar://h:6650", "http://h:8080", "public/east", 0, Duration.ofSeconds(30), "receiverQueue");
        assertRefused("pulsar://h:6650", "http://h:8080", "public/east", 100_001, Duration.ofSeconds(30),
                "receiverQueue");
        assertRefused("pulsar://h:6650", "http://h:8080", "public/east", 100, Duration.ZERO, "operationTimeout");
        assertRefused("pulsar://h:6650", "http://h:8080", "public/east", 100, Duration.ofHours(2), "operationTimeout");
        assertThat(PulsarStorage.Settings.of("pulsar+ssl://h:6651", "https://h:8443", "").receiverQueue()).isEqualTo(100);
    }

    @Test
    void segmentTopicsAndSubscriptions() {
        assertThat(SegmentTopics.of("persistent://public/default/orders", SEGMENT, "public/east"))
                .isEqualTo("persistent://public/east/orders-0000-ffff-0");
        assertThat(SegmentTopics.of("topic://t/ns/orders", SEGMENT, "")).isEqualTo("persistent://t/ns/orders-0000-ffff-0");
        assertThatThrownBy(() -> SegmentTopics.of("orders", SEGMENT, "")).hasMessageContaining("'orders'");
        assertThatThrownBy(() -> SegmentTopics.of("persistent://t/orders", SEGMENT, ""))
                .hasMessageContaining("tenant/namespace/name");
        assertThat(SegmentTopics.subscription("pulsar.repl.west")).isEqualTo("verbatim.repl.west");
        assertThat(SegmentTopics.subscription("mine")).isEqualTo("mine");
    }

    private static void assertRefused(String service, String admin, String ns, int queue, Duration timeout,
            String field) {
        assertThatThrownBy(() -> new PulsarStorage.Settings(service, admin, ns, Optional.empty(), Optional.empty(),
                queue, timeout)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining(field);
    }
}
